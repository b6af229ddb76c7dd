package editorsync

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// waitTimeout bounds every wait on the watcher; changes arrive within
// ~50 ms, so hitting it means the change was never reported.
const waitTimeout = 5 * time.Second

type harness struct {
	t    *testing.T
	s    *Sync
	ch   chan []Change
	seen []Change
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	h := &harness{t: t, ch: make(chan []Change, 4096)}
	opts.OnChange = func(b []Change) { h.ch <- b }
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	h.s = s
	t.Cleanup(func() { s.Close() })
	return h
}

// until collects batches until a change satisfies pred and returns every
// change collected since the previous call.
func (h *harness) until(what string, pred func(Change) bool) []Change {
	h.t.Helper()
	deadline := time.After(waitTimeout)
	var got []Change
	for {
		select {
		case b := <-h.ch:
			seen := map[string]bool{}
			for _, c := range b {
				if seen[c.Path] {
					h.t.Errorf("path %s twice in one batch: %+v", c.Path, b)
				}
				seen[c.Path] = true
			}
			got = append(got, b...)
			for _, c := range b {
				if pred(c) {
					return got
				}
			}
		case <-deadline:
			h.t.Fatalf("no change %s within %v; got %s", what, waitTimeout, fmtChanges(got))
		}
	}
}

// sentinel writes a fresh file in dir and waits for it: every event caused
// before it has then been delivered.
func (h *harness) sentinel(dir string) []Change {
	h.t.Helper()
	p := filepath.Join(dir, fmt.Sprintf("sentinel-%d", time.Now().UnixNano()))
	writeFile(h.t, p, "s")
	got := h.until("for the sentinel", func(c Change) bool { return c.Path == p })
	var out []Change
	for _, c := range got {
		if c.Path != p {
			out = append(out, c)
		}
	}
	return out
}

func fmtChanges(cs []Change) string {
	var b strings.Builder
	for _, c := range cs {
		o := "external"
		if c.Origin != nil {
			o = c.Origin.ToolCallID + "/" + c.Origin.Tool
		}
		fmt.Fprintf(&b, "\n  %s %s origin=%s open=%v", c.Kind, c.Path, o, c.Open)
	}
	return b.String()
}

func only(t *testing.T, cs []Change, path string) Change {
	t.Helper()
	var n []Change
	for _, c := range cs {
		if c.Path == path {
			n = append(n, c)
		}
	}
	if len(n) != 1 {
		t.Fatalf("want exactly one change for %s, got %s", path, fmtChanges(cs))
	}
	return n[0]
}

func sum(text string) string {
	s := sha256.Sum256([]byte(text))
	return hex.EncodeToString(s[:])
}

func realDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestExternalWriteIsExternal(t *testing.T) {
	root := realDir(t)
	h := newHarness(t, Options{Roots: []string{root}})
	path := filepath.Join(root, "ext.txt")
	// Another process writes the file.
	if out, err := exec.Command("sh", "-c", "printf hello > "+path).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	c := only(t, h.until("for ext.txt", func(c Change) bool { return c.Path == path }), path)
	if c.Kind != Created || c.Origin != nil || c.Open || c.URI != PathToURI(path) || c.SHA256 != sum("hello") {
		t.Fatalf("got %+v, want created, external, sha of hello", c)
	}
	if out, err := exec.Command("sh", "-c", "printf again >> "+path).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	c = only(t, h.until("for ext.txt again", func(c Change) bool { return c.Path == path }), path)
	if c.Kind != Modified || c.Origin != nil {
		t.Fatalf("got %+v, want modified, external", c)
	}
}

func TestSedInBashIsAttributedAndDiffed(t *testing.T) {
	root := realDir(t)
	path := filepath.Join(root, "open.txt")
	writeFile(t, path, "line one\nold value\nline three\n")
	h := newHarness(t, Options{Roots: []string{root}})
	uri := "file://" + path // as an editor might send it
	if err := h.s.Documents().Open(uri, "plaintext", 1, "line one\nold value\nline three\n"); err != nil {
		t.Fatal(err)
	}
	<-h.s.Warmed()

	h.s.BeginCall("call-7", "bash")
	h.s.TrackCall("call-7")
	if out, err := exec.Command("bash", "-c", "sed -i 's/old/new/' "+path).CombinedOutput(); err != nil {
		t.Fatalf("sed: %v: %s", err, out)
	}
	h.s.Barrier(context.Background())
	h.s.FinishCall("call-7")
	diffs := h.s.CallDiffs("call-7", DiffLimits{})

	c := only(t, h.until("for open.txt", func(c Change) bool { return c.Path == path }), path)
	if c.Kind != Modified || c.Origin == nil || c.Origin.ToolCallID != "call-7" || c.Origin.Tool != "bash" || !c.Open || c.URI != uri {
		t.Fatalf("got %+v origin %+v, want modified by call-7/bash, open, URI as sent", c, c.Origin)
	}
	if len(diffs) != 1 {
		t.Fatalf("Diff = %+v, want one file", diffs)
	}
	d := diffs[0]
	if d.Path != path || d.OldText == nil || *d.OldText != "line one\nold value\nline three\n" ||
		d.NewText == nil || *d.NewText != "line one\nnew value\nline three\n" || d.Line != 2 {
		t.Fatalf("Diff = %+v", d)
	}
	// The buffer still has the old text: stale, but with no unsaved work,
	// so it must not block the next edit of the file.
	if h.s.Unsaved(path) {
		t.Fatal("an unedited buffer counts as unsaved after sed changed the file under it")
	}
}

// atomicWrite writes as our edit/write tools do: temp file in the same
// directory, fsync, rename.
func atomicWrite(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Rename(f.Name(), path); err != nil {
		t.Fatal(err)
	}
}

func TestOwnAtomicWriteIsOneModified(t *testing.T) {
	for _, test := range []struct {
		name   string
		during bool // inside BeginCall/EndCall, else only RecordWrite
	}{
		{"during the call", true},
		{"recorded write after the call ended", false},
	} {
		t.Run(test.name, func(t *testing.T) {
			root := realDir(t)
			path := filepath.Join(root, "a.go")
			writeFile(t, path, "package a\n")
			h := newHarness(t, Options{Roots: []string{root}, Grace: -1})
			text := "package a\n\nfunc F() {}\n"
			if test.during {
				h.s.BeginCall("call-1", "edit")
			}
			h.s.RecordWrite(path, sum(text), "call-1", "edit")
			atomicWrite(t, path, text)
			if test.during {
				h.s.EndCall("call-1")
			}
			got := h.sentinel(root)
			c := only(t, got, path)
			if len(got) != 1 {
				t.Fatalf("want only the target reported (no temp file), got %s", fmtChanges(got))
			}
			if c.Kind != Modified || c.Origin == nil || c.Origin.ToolCallID != "call-1" || c.Origin.Tool != "edit" || c.SHA256 != sum(text) {
				t.Fatalf("got %+v origin %+v", c, c.Origin)
			}
		})
	}
}

func TestRecordWriteWithOtherContentIsExternal(t *testing.T) {
	root := realDir(t)
	path := filepath.Join(root, "a.txt")
	writeFile(t, path, "one")
	h := newHarness(t, Options{Roots: []string{root}, Grace: -1})
	h.s.RecordWrite(path, sum("what we wrote"), "call-1", "write")
	atomicWrite(t, path, "something else")
	c := only(t, h.sentinel(root), path)
	if c.Origin != nil {
		t.Fatalf("origin %+v, want external: the content is not what the call wrote", c.Origin)
	}
}

func TestGraceAfterEndCall(t *testing.T) {
	root := realDir(t)
	h := newHarness(t, Options{Roots: []string{root}, Grace: -1})
	h.s.BeginCall("c1", "bash")
	h.s.EndCall("c1")
	path := filepath.Join(root, "after.txt")
	writeFile(t, path, "x")
	if c := only(t, h.sentinel(root), path); c.Origin != nil {
		t.Fatalf("a change after EndCall with no grace attributed to %+v", c.Origin)
	}
}

func TestOverlappingCallsAttributeToLatest(t *testing.T) {
	root := realDir(t)
	h := newHarness(t, Options{Roots: []string{root}, Grace: -1})
	h.s.BeginCall("outer", "bash")
	h.s.BeginCall("inner", "write")
	p1 := filepath.Join(root, "one")
	writeFile(t, p1, "1")
	c := only(t, h.until("one", func(c Change) bool { return c.Path == p1 }), p1)
	if c.Origin == nil || c.Origin.ToolCallID != "inner" {
		t.Fatalf("origin %+v, want inner", c.Origin)
	}
	h.s.EndCall("inner")
	p2 := filepath.Join(root, "two")
	writeFile(t, p2, "2")
	c = only(t, h.until("two", func(c Change) bool { return c.Path == p2 }), p2)
	if c.Origin == nil || c.Origin.ToolCallID != "outer" {
		t.Fatalf("origin %+v, want outer", c.Origin)
	}
	h.s.EndCall("outer")
}

func TestOtherEditorsSavePatterns(t *testing.T) {
	for _, test := range []struct {
		name string
		save func(t *testing.T, path string)
	}{
		{"temp then rename", func(t *testing.T, path string) {
			tmp := path + ".swp"
			writeFile(t, tmp, "new")
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"rename to backup, write, remove backup", func(t *testing.T, path string) {
			if err := os.Rename(path, path+"~"); err != nil {
				t.Fatal(err)
			}
			writeFile(t, path, "new")
			os.Remove(path + "~")
		}},
		{"truncate and write in place", func(t *testing.T, path string) { writeFile(t, path, "new") }},
	} {
		t.Run(test.name, func(t *testing.T) {
			root := realDir(t)
			path := filepath.Join(root, "f.txt")
			writeFile(t, path, "old")
			h := newHarness(t, Options{Roots: []string{root}})
			test.save(t, path)
			got := h.sentinel(root)
			c := only(t, got, path)
			if len(got) != 1 || c.Kind != Modified || c.SHA256 != sum("new") {
				t.Fatalf("want one modified for f.txt, got %s", fmtChanges(got))
			}
		})
	}
}

func TestRenameAndDelete(t *testing.T) {
	root := realDir(t)
	a, b, c := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c")
	writeFile(t, a, "A")
	writeFile(t, c, "C")
	h := newHarness(t, Options{Roots: []string{root}})

	if err := os.Rename(a, b); err != nil {
		t.Fatal(err)
	}
	got := h.sentinel(root)
	if only(t, got, a).Kind != Deleted || only(t, got, b).Kind != Created {
		t.Fatalf("rename to a new name: %s", fmtChanges(got))
	}
	if err := os.Rename(b, c); err != nil { // onto an existing file
		t.Fatal(err)
	}
	got = h.sentinel(root)
	if only(t, got, b).Kind != Deleted || only(t, got, c).Kind != Modified {
		t.Fatalf("rename onto an existing file: %s", fmtChanges(got))
	}
	if err := os.Remove(c); err != nil {
		t.Fatal(err)
	}
	got = h.sentinel(root)
	if k := only(t, got, c); k.Kind != Deleted || k.SHA256 != "" {
		t.Fatalf("delete: %s", fmtChanges(got))
	}
}

func TestBurstOfWritesIsOneEntry(t *testing.T) {
	root := realDir(t)
	path := filepath.Join(root, "burst.log")
	// The default cap (50 ms) splits a burst that lasts longer, and on a
	// loaded CI machine 1,000 write calls can; a wider window makes the
	// test about coalescing, not about the machine's speed.
	h := newHarness(t, Options{Roots: []string{root}, Window: 200 * time.Millisecond, MaxDelay: 5 * time.Second})
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		fmt.Fprintf(f, "line %d\n", i)
	}
	f.Close()
	got := h.sentinel(root)
	if c := only(t, got, path); c.Kind != Created {
		t.Fatalf("burst: %s", fmtChanges(got))
	}
}

func TestNewDirectoriesAreWatched(t *testing.T) {
	root := realDir(t)
	h := newHarness(t, Options{Roots: []string{root}})
	deep := filepath.Join(root, "sub", "deeper")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	// Written at once: possibly before the watch on "deeper" is set; the
	// scan of the new directory must find it then.
	early := filepath.Join(deep, "early.txt")
	writeFile(t, early, "e")
	got := h.until("early.txt", func(c Change) bool { return c.Path == early })
	if c := only(t, got, early); c.Kind != Created {
		t.Fatalf("early: %s", fmtChanges(got))
	}
	late := filepath.Join(deep, "late.txt")
	writeFile(t, late, "l")
	got = h.sentinel(deep)
	if c := only(t, got, late); c.Kind != Created {
		t.Fatalf("late: %s", fmtChanges(got))
	}
	// Moving the directory out of the tree deletes its files.
	if err := os.Rename(filepath.Join(root, "sub"), filepath.Join(t.TempDir(), "moved")); err != nil {
		t.Fatal(err)
	}
	got = h.sentinel(root)
	if only(t, got, early).Kind != Deleted || only(t, got, late).Kind != Deleted {
		t.Fatalf("moved away: %s", fmtChanges(got))
	}
}

func TestIgnoredDirectoriesAreNotReported(t *testing.T) {
	root := realDir(t)
	for _, d := range []string{".git", "node_modules", "build"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarness(t, Options{Roots: []string{root}, Ignore: []string{"build", "out"}})
	for _, d := range []string{".git", "node_modules", "build"} {
		writeFile(t, filepath.Join(root, d, "x"), "x")
	}
	// Created after start.
	if err := os.MkdirAll(filepath.Join(root, "out", "deep"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "out", "deep", "y"), "y")
	if err := os.MkdirAll(filepath.Join(root, "src", "node_modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "src", "node_modules", "z"), "z")
	writeFile(t, filepath.Join(root, "src", "kept.txt"), "k")
	got := h.until("kept.txt", func(c Change) bool { return strings.HasSuffix(c.Path, "kept.txt") })
	got = append(got, h.sentinel(root)...)
	for _, c := range got {
		if !strings.HasSuffix(c.Path, "kept.txt") {
			t.Errorf("reported a change in an ignored directory: %s", fmtChanges([]Change{c}))
		}
	}
	if st := h.s.Status(); st.Watches != 2 { // root and src
		t.Errorf("Status = %+v, want 2 watches", st)
	}
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestWatchLimitOption(t *testing.T) {
	root := realDir(t)
	for _, d := range []string{"a", "b", "c"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var logs syncBuffer
	h := newHarness(t, Options{Roots: []string{root}, MaxWatches: 2,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	st := h.s.Status()
	if !st.LimitHit || st.Watches != 2 || st.Unwatched != 2 {
		t.Fatalf("Status = %+v, want limit hit with root and a watched", st)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "not watched") {
		t.Fatalf("no warning logged: %q", logs.String())
	}
	// What is watched keeps working.
	p := filepath.Join(root, "a", "f")
	writeFile(t, p, "f")
	if c := only(t, h.sentinel(root), p); c.Kind != Created {
		t.Fatalf("got %+v", c)
	}
	// An open document in an unwatched directory is still watched.
	doc := filepath.Join(root, "c", "doc.txt")
	writeFile(t, doc, "d")
	if err := h.s.Documents().Open(PathToURI(doc), "text", 1, "d"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, doc, "changed")
	if c := only(t, h.sentinel(root), doc); c.Kind != Modified || !c.Open {
		t.Fatalf("got %+v", c)
	}
}

func TestOpenDocumentOutsideRoots(t *testing.T) {
	root := realDir(t)
	other := realDir(t)
	doc := filepath.Join(other, "notes.md")
	writeFile(t, doc, "n")
	h := newHarness(t, Options{Roots: []string{root}})
	uri := PathToURI(doc)
	if err := h.s.Documents().Open(uri, "markdown", 1, "n"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(other, "unrelated"), "u")
	writeFile(t, doc, "n2")
	got := h.until("notes.md", func(c Change) bool { return c.Path == doc })
	got = append(got, h.sentinel(root)...)
	if c := only(t, got, doc); c.Kind != Modified || !c.Open || c.URI != uri {
		t.Fatalf("got %+v", c)
	}
	if len(got) != 1 {
		t.Fatalf("files next to an open document outside the roots are not reported: %s", fmtChanges(got))
	}
	if h.s.Unsaved(doc) {
		t.Fatal("an unedited buffer counts as unsaved after the disk changed")
	}
	if err := h.s.Documents().Close(uri); err != nil {
		t.Fatal(err)
	}
	if st := h.s.Status(); st.Watches != 1 {
		t.Fatalf("after close: %+v, want only the root watched", st)
	}
}

func TestNewRejectsBadRoots(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	writeFile(t, file, "")
	for _, test := range []struct {
		root, wantErr string
	}{
		{"relative", `roots[0]: "relative" is not an absolute path`},
		{file, "is not a directory"},
		{"/nonexistent-editorsync", "roots[0]: stat /nonexistent-editorsync"},
	} {
		_, err := New(Options{Roots: []string{test.root}})
		if err == nil || !strings.Contains(err.Error(), test.wantErr) {
			t.Errorf("New(%q): %v, want %q", test.root, err, test.wantErr)
		}
	}
}

func TestCloseDeliversAndStops(t *testing.T) {
	before := runtime.NumGoroutine()
	root := realDir(t)
	var mu sync.Mutex
	var got []Change
	s, err := New(Options{Roots: []string{root}, Window: time.Hour, MaxDelay: time.Hour,
		OnChange: func(b []Change) { mu.Lock(); got = append(got, b...); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "f")
	writeFile(t, p, "x")
	// The burst never goes quiet for an hour, so only Close delivers it.
	// Wait until the watcher has taken the event in: poll with a deadline.
	deadline := time.Now().Add(waitTimeout)
	for s.pendingForTest() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("event never received")
		}
		runtime.Gosched()
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].Path != p {
		t.Fatalf("Close delivered %s", fmtChanges(got))
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("goroutines leaked: %d before, %d after", before, runtime.NumGoroutine())
		}
		runtime.Gosched()
	}
}

// TestMaxDelayCapsABusyBurst checks that a burst that never goes quiet is
// still delivered: with a quiet period of an hour only the cap can end it.
func TestMaxDelayCapsABusyBurst(t *testing.T) {
	root := realDir(t)
	h := newHarness(t, Options{Roots: []string{root}, Window: time.Hour, MaxDelay: 50 * time.Millisecond})
	path := filepath.Join(root, "busy.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	deadline := time.After(waitTimeout)
	for i := 0; ; i++ {
		select {
		case b := <-h.ch:
			if c := only(t, b, path); c.Kind != Created {
				t.Fatalf("got %+v", c)
			}
			return
		case <-deadline:
			t.Fatalf("a busy burst was not delivered within %v", waitTimeout)
		default:
			fmt.Fprintf(f, "line %d\n", i)
		}
	}
}

// TestBarrierEndsACallExactly: with Barrier, a call's last write is
// attributed to it however late the watcher reads it, and a write right
// after FinishCall is external (no grace period to misattribute it).
func TestBarrierEndsACallExactly(t *testing.T) {
	root := realDir(t)
	h := newHarness(t, Options{Roots: []string{root}, Grace: -1})
	mine := filepath.Join(root, "mine.txt")
	theirs := filepath.Join(root, "theirs.txt")
	h.s.BeginCall("call-1", "bash")
	if out, err := exec.Command("sh", "-c", "printf mine > "+mine).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	h.s.Barrier(context.Background())
	h.s.FinishCall("call-1")
	if out, err := exec.Command("sh", "-c", "printf theirs > "+theirs).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := h.until("mine.txt", func(c Change) bool { return c.Path == mine })
	if !slices.ContainsFunc(got, func(c Change) bool { return c.Path == theirs }) {
		got = append(got, h.until("theirs.txt", func(c Change) bool { return c.Path == theirs })...)
	}
	if c := only(t, got, mine); c.Origin == nil || c.Origin.ToolCallID != "call-1" {
		t.Errorf("the call's own write: %+v, want attributed to call-1", c)
	}
	if c := only(t, got, theirs); c.Origin != nil {
		t.Errorf("a write after the call ended: %+v, want external", c)
	}
	for _, c := range got {
		if strings.Contains(c.Path, "coding-agent-sync-") {
			t.Errorf("a barrier marker was reported: %+v", c)
		}
	}
}
