package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// recorder is an Approver that records requests and answers with answer.
type recorder struct {
	mu     sync.Mutex
	reqs   []ApprovalRequest
	answer func(ctx context.Context, req ApprovalRequest) error
}

func (r *recorder) Approve(ctx context.Context, req ApprovalRequest) error {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	if r.answer == nil {
		return nil
	}
	return r.answer(ctx, req)
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

// TestPresets checks which writes each preset allows by itself (no
// approver: anything else is denied with nothing written).
func TestPresets(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cwd := filepath.Join(base, "work")
	extra := filepath.Join(base, "extra")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{cwd, extra, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A link inside the workspace to a directory outside it, and a link
	// to the extra root.
	if err := os.Symlink(outside, filepath.Join(cwd, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(extra, filepath.Join(base, "extralink")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		preset Preset
		roots  []string
		path   string
		allow  bool
	}{
		{ReadOnly, nil, "in.txt", false},
		{ReadOnly, nil, "newdir/deeper/in.txt", false},
		{"", nil, "in.txt", false},
		{WorkspaceWrite, nil, "in.txt", true},
		{WorkspaceWrite, nil, "sub/dir/in.txt", true},
		{WorkspaceWrite, nil, "../outside/x.txt", false},
		{WorkspaceWrite, nil, filepath.Join(outside, "x.txt"), false},
		{WorkspaceWrite, nil, "escape/x.txt", false},
		{WorkspaceWrite, nil, "../work2/x.txt", false},
		{WorkspaceWrite, []string{extra}, filepath.Join(extra, "x.txt"), true},
		{WorkspaceWrite, []string{filepath.Join(base, "extralink")}, filepath.Join(extra, "x.txt"), true},
		{WorkspaceWrite, []string{extra}, filepath.Join(base, "extralink", "y.txt"), true},
		{FullAccess, nil, filepath.Join(outside, "x.txt"), true},
		{FullAccess, nil, "escape/y.txt", true},
	}
	for _, tt := range tests {
		t.Run(string(tt.preset)+" "+tt.path, func(t *testing.T) {
			w, err := NewWrite(cwd, Options{Preset: tt.preset, WritableRoots: tt.roots})
			if err != nil {
				t.Fatal(err)
			}
			abs, _ := ResolvePath(cwd, tt.path)
			canon, _ := CanonicalPath(abs)
			os.Remove(canon)
			_, parentErr := os.Stat(filepath.Dir(canon))
			_, err = execTool(t, w, map[string]any{"path": tt.path, "content": "data"})
			_, statErr := os.Stat(canon)
			if tt.allow {
				if err != nil || statErr != nil {
					t.Fatalf("denied: %v %v", err, statErr)
				}
				return
			}
			var pe *PermissionError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), "no approval context") {
				t.Fatalf("got %v, want a *PermissionError saying there is no approval context", err)
			}
			if statErr == nil {
				t.Fatal("file written although denied")
			}
			if _, err := os.Stat(filepath.Dir(canon)); parentErr != nil && err == nil {
				t.Fatal("parent directories created although denied")
			}
		})
	}
}

// TestApprovalFlows asks about a write outside the workspace and checks
// that only an explicit allow writes, and that the request is the exact
// change.
func TestApprovalFlows(t *testing.T) {
	errRejected := errors.New("the user rejected the change")
	tests := []struct {
		name    string
		answer  func(ctx context.Context, req ApprovalRequest) error
		cancel  bool
		written bool
		want    []string
	}{
		{name: "allow", written: true},
		{name: "reject", answer: func(context.Context, ApprovalRequest) error { return errRejected },
			want: []string{"not approved", "the user rejected the change", "nothing was written"}},
		{name: "error", answer: func(context.Context, ApprovalRequest) error { return errors.New("client answered -32603") },
			want: []string{"client answered -32603"}},
		{name: "cancelled while waiting", cancel: true, answer: func(ctx context.Context, _ ApprovalRequest) error {
			<-ctx.Done()
			return ctx.Err()
		}, want: []string{"context canceled"}},
		{name: "allowed but cancelled meanwhile", cancel: true, answer: func(ctx context.Context, _ ApprovalRequest) error {
			<-ctx.Done()
			return nil
		}, want: []string{"context canceled"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cwd, outside := t.TempDir(), t.TempDir()
			target := filepath.Join(outside, "sub", "new.txt")
			rec := &recorder{answer: tt.answer}
			w := newWrite(t, cwd, Options{Preset: WorkspaceWrite, Approver: rec})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				inner := rec.answer
				rec.answer = func(c context.Context, r ApprovalRequest) error {
					cancel()
					return inner(c, r)
				}
			}
			args := json.RawMessage(`{"path":"` + target + `","content":"hello\n","justification":"Store the notes"}`)
			res, err := w.Execute(ctx, Call{ID: "tc-7", Args: args})
			if rec.count() != 1 {
				t.Fatalf("approver asked %d times", rec.count())
			}
			req := rec.reqs[0]
			if req.Kind != RequestFileChange || req.Tool != "write" || req.CallID != "tc-7" || string(req.Args) != string(args) ||
				req.Justification != "Store the notes" || req.Reason != "Writing outside the workspace is not allowed under workspace-write" ||
				req.Change == nil || req.Change.Path != target || req.Change.OldText != nil || req.Change.NewText != "hello\n" ||
				!strings.Contains(req.Diff, "+hello\n") || !strings.Contains(req.Diff, "--- /dev/null") {
				t.Fatalf("request %+v", req)
			}
			_, statErr := os.Stat(target)
			if tt.written {
				if err != nil || statErr != nil || readBack(t, target) != "hello\n" || len(res.Changes) != 1 {
					t.Fatalf("allowed change not made: %v %v", err, statErr)
				}
				return
			}
			var pe *PermissionError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a *PermissionError", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if tt.cancel && !errors.Is(err, context.Canceled) {
				t.Errorf("a cancelled approval is not context.Canceled: %v", err)
			}
			if statErr == nil {
				t.Fatal("file written without approval")
			}
			if _, err := os.Stat(filepath.Join(outside, "sub")); err == nil {
				t.Fatal("parent directory created without approval")
			}
		})
	}
}

func TestApprovalReadOnlyReason(t *testing.T) {
	dir := t.TempDir()
	putFile(t, filepath.Join(dir, "f"), "a\n")
	rec := &recorder{answer: func(context.Context, ApprovalRequest) error { return errors.New("no") }}
	e := newEdit(t, dir, Options{Preset: ReadOnly, Approver: rec})
	if _, err := execTool(t, e, editSpec{"path": "f", "edits": edits("a", "b")}); err == nil {
		t.Fatal("read-only edit went through")
	}
	req := rec.reqs[0]
	if req.Reason != "Writing files is not allowed under read-only" || req.Tool != "edit" || req.Change.OldText == nil ||
		*req.Change.OldText != "a\n" || req.Change.NewText != "b\n" || !strings.Contains(req.Diff, "-a\n+b\n") {
		t.Fatalf("request %+v", req)
	}
	if readBack(t, filepath.Join(dir, "f")) != "a\n" {
		t.Fatal("file changed")
	}
}

// TestProtectedStorage attacks .git and the data directory through every
// kind of name, under full-access with an approver that allows all: the
// approver is never asked and nothing changes.
func TestProtectedStorage(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cwd := filepath.Join(base, "repo")
	data := filepath.Join(base, "data")
	putFile(t, filepath.Join(cwd, ".git", "config"), "[core]\n")
	putFile(t, filepath.Join(cwd, "wt", ".git"), "gitdir: ../.git/worktrees/wt\n")
	putFile(t, filepath.Join(cwd, "vendor", "lib", ".git", "HEAD"), "ref: x\n")
	putFile(t, filepath.Join(data, "sessions", "s.jsonl"), "{}\n")
	mustLink := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(cwd, name)); err != nil {
			t.Fatal(err)
		}
	}
	mustLink(".git/config", "cfg")
	mustLink(".git", "gitdir")
	mustLink(data, "datalink")
	mustLink("cfg", "cfg2")
	// The data directory given through a symlink.
	if err := os.Symlink(data, filepath.Join(base, "data-alias")); err != nil {
		t.Fatal(err)
	}
	paths := []string{
		".git/config",
		".git/hooks/pre-commit", // new file inside .git
		".git",
		"wt/.git",
		"vendor/lib/.git/HEAD",
		"cfg",
		"cfg2",
		"gitdir/config",
		".GIT/config",
		filepath.Join(data, "sessions", "s.jsonl"),
		filepath.Join(data, "config.json"),
		"datalink/sessions/s.jsonl",
		filepath.Join(base, "data-alias", "x"),
	}
	for _, dataDir := range []string{data, filepath.Join(base, "data-alias")} {
		for _, p := range paths {
			t.Run(filepath.Base(dataDir)+" "+p, func(t *testing.T) {
				rec := &recorder{}
				opts := Options{Preset: FullAccess, Approver: rec, DataDir: dataDir}
				before := snapshot(t, base)
				_, werr := execTool(t, newWrite(t, cwd, opts), map[string]any{"path": p, "content": "pwned"})
				_, eerr := execTool(t, newEdit(t, cwd, opts), editSpec{"path": p, "edits": edits("[core]", "pwned")})
				for _, err := range []error{werr, eerr} {
					var pe *PermissionError
					if !errors.As(err, &pe) {
						t.Fatalf("got %v, want a *PermissionError", err)
					}
				}
				if !strings.Contains(werr.Error(), ".git") && !strings.Contains(werr.Error(), "data directory") {
					t.Errorf("error does not say why: %v", werr)
				}
				if rec.count() != 0 {
					t.Fatal("approver asked about protected storage")
				}
				if after := snapshot(t, base); after != before {
					t.Fatalf("files changed:\nbefore %s\nafter  %s", before, after)
				}
			})
		}
	}
}

// snapshot lists every file under dir with its content.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var sb strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		sb.WriteString(p)
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			sb.WriteString("=" + string(b))
		}
		sb.WriteString(";")
		return nil
	})
	return sb.String()
}

// TestApprovalHoldsThePath checks that a mutation waiting for approval
// holds its canonical path: a second mutation of the file through a
// symlink waits, a cancelled waiter never runs, and the next one runs after.
func TestApprovalHoldsThePath(t *testing.T) {
	cwd, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "f.txt")
	putFile(t, target, "v0\n")
	if err := os.Symlink(target, filepath.Join(cwd, "link")); err != nil {
		t.Fatal(err)
	}
	q := NewMutationQueue()
	waiting := waitSignal(q)
	asked := make(chan struct{}, 3)
	decide := make(chan error)
	rec := &recorder{answer: func(ctx context.Context, req ApprovalRequest) error {
		asked <- struct{}{}
		return <-decide
	}}
	opts := Options{Preset: WorkspaceWrite, Approver: rec, Queue: q}
	w := newWrite(t, cwd, opts)

	first := make(chan error, 1)
	go func() {
		_, err := execTool(t, w, map[string]any{"path": target, "content": "v1\n"})
		first <- err
	}()
	<-asked // the first call now holds the path while it waits

	ctx, cancel := context.WithCancel(context.Background())
	cancelled := make(chan error, 1)
	go func() {
		_, err := w.Execute(ctx, Call{Args: json.RawMessage(`{"path":"link","content":"cancelled\n"}`)})
		cancelled <- err
	}()
	<-waiting
	third := make(chan error, 1)
	go func() {
		_, err := execTool(t, newEdit(t, cwd, opts), editSpec{"path": "link", "edits": edits("v1", "v2")})
		third <- err
	}()
	<-waiting
	cancel()
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v", err)
	}
	if rec.count() != 1 {
		t.Fatal("a queued call reached the approver while the path was held")
	}
	decide <- nil // allow the first
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	<-asked // the third asks now, with the content the first wrote
	if req := rec.reqs[1]; req.Change.OldText == nil || *req.Change.OldText != "v1\n" {
		t.Fatalf("third call computed its change from %v", req.Change.OldText)
	}
	decide <- nil
	if err := <-third; err != nil {
		t.Fatal(err)
	}
	if got := readBack(t, target); got != "v2\n" {
		t.Fatalf("content %q, want v2", got)
	}
	if rec.count() != 2 {
		t.Fatalf("approver asked %d times, want 2 (the cancelled call must never run)", rec.count())
	}
}

// TestApprovalFileChangedMeanwhile makes the file change on disk while the
// approval is pending: the approved change must not overwrite it.
func TestApprovalFileChangedMeanwhile(t *testing.T) {
	cwd, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "f.txt")
	putFile(t, target, "one\n")
	rec := &recorder{answer: func(context.Context, ApprovalRequest) error {
		putFile(t, target, "someone else\n")
		return nil
	}}
	e := newEdit(t, cwd, Options{Preset: WorkspaceWrite, Approver: rec})
	_, err := execTool(t, e, editSpec{"path": target, "edits": edits("one", "two")})
	if err == nil || !strings.Contains(err.Error(), "changed on disk") {
		t.Fatalf("got %v", err)
	}
	if got := readBack(t, target); got != "someone else\n" {
		t.Fatalf("the other writer's content was overwritten: %q", got)
	}
}

func TestNewMutatorChecks(t *testing.T) {
	if _, err := NewEdit(filepath.Join(t.TempDir(), "missing"), Options{}); err == nil {
		t.Error("NewEdit accepted a missing cwd")
	}
	if _, err := NewWrite(t.TempDir(), Options{Preset: "admin"}); err == nil || !strings.Contains(err.Error(), "admin") {
		t.Errorf("NewWrite accepted an unknown preset: %v", err)
	}
}

// TestDanglingSymlinkSerialized writes through a dangling symlink (whose
// target does not exist yet) and through the target's own path: both
// calls queue on the same canonical path, so the second waits while the
// first holds it for approval.
func TestDanglingSymlinkSerialized(t *testing.T) {
	cwd, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "new", "t.txt")
	if err := os.Symlink(target, filepath.Join(cwd, "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("dangling", filepath.Join(cwd, "dangling2")); err != nil {
		t.Fatal(err)
	}
	q := NewMutationQueue()
	waiting := waitSignal(q)
	asked := make(chan string, 3)
	decide := make(chan error)
	rec := &recorder{answer: func(ctx context.Context, req ApprovalRequest) error {
		asked <- req.Change.NewText
		return <-decide
	}}
	w := newWrite(t, cwd, Options{Preset: WorkspaceWrite, Approver: rec, Queue: q})
	done := make(chan error, 2)
	go func() {
		_, err := execTool(t, w, map[string]any{"path": "dangling2", "content": "first\n"})
		done <- err
	}()
	if got := <-asked; got != "first\n" {
		t.Fatalf("asked about %q", got)
	}
	go func() {
		_, err := execTool(t, w, map[string]any{"path": target, "content": "second\n"})
		done <- err
	}()
	if p := <-waiting; p != target {
		t.Fatalf("second call queued on %q, want the link's final target %q", p, target)
	}
	decide <- nil
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := <-asked; got != "second\n" {
		t.Fatalf("asked about %q", got)
	}
	decide <- nil
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := readBack(t, target); got != "second\n" {
		t.Fatalf("content %q", got)
	}
	if li, err := os.Lstat(filepath.Join(cwd, "dangling")); err != nil || li.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced")
	}
}
