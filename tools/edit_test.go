package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

type editSpec = map[string]any

func edits(pairs ...string) []map[string]string {
	var out []map[string]string
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, map[string]string{"oldText": pairs[i], "newText": pairs[i+1]})
	}
	return out
}

func newEdit(t *testing.T, dir string, opts Options) *Edit {
	t.Helper()
	if opts.Preset == "" {
		opts.Preset = WorkspaceWrite
	}
	e, err := NewEdit(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func readBack(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEditApplies(t *testing.T) {
	tests := []struct {
		name    string
		content string
		edits   []map[string]string
		want    string
		line    int
	}{
		{"one", "a\nb\nc\n", edits("b", "B"), "a\nB\nc\n", 2},
		{"several", "one two three\n", edits("one", "1", "three", "3"), "1 two 3\n", 1},
		{"matched against the original", "x y\n", edits("x", "y", "y", "z"), "y z\n", 1},
		{"order of edits does not matter", "a b c\n", edits("c", "C", "a", "A"), "A b C\n", 1},
		{"adjacent edits", "abcd", edits("ab", "X", "cd", "Y"), "XY", 1},
		{"multi-line", "func f() {\n\treturn 1\n}\n", edits("\treturn 1\n}", "\treturn 2\n}"), "func f() {\n\treturn 2\n}\n", 2},
		{"delete", "keep\ndrop\nkeep2\n", edits("drop\n", ""), "keep\nkeep2\n", 2},
		{"crlf file, lf edit", "a\r\nb\r\nc\r\n", edits("a\nb", "x\ny\nz"), "x\r\ny\r\nz\r\nc\r\n", 1},
		{"crlf file, crlf edit", "a\r\nb\r\n", edits("a\r\nb", "b\r\na"), "b\r\na\r\n", 1},
		{"crlf file, single line", "a\r\nb\r\n", edits("b", "B"), "a\r\nB\r\n", 2},
		{"lf file keeps lf", "a\nb\n", edits("a\nb", "x\ny"), "x\ny\n", 1},
		{"lf file, crlf edit", "a\nb\nc\n", edits("a\r\nb", "x\r\ny"), "x\ny\nc\n", 1},
		{"mixed endings: untouched lines keep theirs", "a\r\nb\nc\r\n", edits("c", "C"), "a\r\nb\nC\r\n", 3},
		{"bom kept", "\ufeffhello\nworld\n", edits("hello", "bye"), "\ufeffbye\nworld\n", 1},
		{"bom in oldText ignored", "\ufeffhello\n", edits("\ufeffhello", "bye"), "\ufeffbye\n", 1},
		{"bom and crlf", "\ufeffa\r\nb\r\n", edits("a\nb", "c\nd"), "\ufeffc\r\nd\r\n", 1},
		{"utf8", "naïve café\n", edits("café", "thé"), "naïve thé\n", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "f.txt")
			putFile(t, p, tt.content)
			res, err := execTool(t, newEdit(t, dir, Options{}), editSpec{"path": "f.txt", "edits": tt.edits})
			if err != nil {
				t.Fatal(err)
			}
			if got := readBack(t, p); got != tt.want {
				t.Fatalf("file = %q, want %q", got, tt.want)
			}
			n := len(tt.edits)
			wantText := fmt.Sprintf("Edited f.txt (%d replacement", n)
			if !strings.HasPrefix(res.Content[0].Text, wantText) {
				t.Errorf("text %q, want prefix %q", res.Content[0].Text, wantText)
			}
			if res.Details["firstChangedLine"] != tt.line || res.Details["replacements"] != n || res.Details["path"] != p {
				t.Errorf("details %v", res.Details)
			}
			if d, _ := res.Details["diff"].(string); applyDiff(t, tt.content, d) != tt.want {
				t.Errorf("details.diff does not turn the old content into the new:\n%s", d)
			}
			if len(res.Changes) != 1 || res.Changes[0].Path != p || res.Changes[0].OldText == nil ||
				*res.Changes[0].OldText != tt.content || res.Changes[0].NewText != tt.want || res.Changes[0].Line != tt.line {
				t.Errorf("changes %+v", res.Changes)
			}
		})
	}
}

func TestEditRefuses(t *testing.T) {
	content := "alpha\nbeta\ngamma\nbeta\naaa\n"
	tests := []struct {
		name  string
		args  any
		want  []string
		kind  string
		setup func(t *testing.T, dir string)
	}{
		{name: "absent", args: editSpec{"path": "f.txt", "edits": edits("delta", "x")}, want: []string{"edits[0].oldText was not found in f.txt"}, kind: "failed"},
		{name: "second absent", args: editSpec{"path": "f.txt", "edits": edits("alpha", "A", "zzz", "x")}, want: []string{"edits[1].oldText was not found"}, kind: "failed"},
		{name: "repeated", args: editSpec{"path": "f.txt", "edits": edits("beta", "x")}, want: []string{"edits[0].oldText occurs 2 times", "lines 2, 4", "exactly once"}, kind: "failed"},
		{name: "overlapping occurrences", args: editSpec{"path": "f.txt", "edits": edits("aa", "x")}, want: []string{"occurs 2 times"}, kind: "failed"},
		{name: "overlap", args: editSpec{"path": "f.txt", "edits": edits("alpha\nbeta", "x", "ha\nbeta\ngam", "y")}, want: []string{"edits[0] and edits[1] overlap"}, kind: "failed"},
		{name: "same text twice", args: editSpec{"path": "f.txt", "edits": edits("gamma", "x", "gamma", "y")}, want: []string{"overlap"}, kind: "failed"},
		{name: "no change", args: editSpec{"path": "f.txt", "edits": edits("alpha", "alpha")}, want: []string{"unchanged"}, kind: "failed"},
		{name: "empty oldText", args: editSpec{"path": "f.txt", "edits": edits("", "x")}, want: []string{"/edits/0/oldText"}, kind: "validation"},
		{name: "no edits", args: editSpec{"path": "f.txt", "edits": []any{}}, want: []string{"/edits", "minItems"}, kind: "validation"},
		{name: "missing newText", args: `{"path":"f.txt","edits":[{"oldText":"alpha"}]}`, want: []string{"/edits/0/newText", "required"}, kind: "validation"},
		{name: "extra field in edit", args: `{"path":"f.txt","edits":[{"oldText":"alpha","newText":"b","all":true}]}`, want: []string{"all"}, kind: "validation"},
		{name: "justification too long", args: editSpec{"path": "f.txt", "edits": edits("alpha", "x"), "justification": strings.Repeat("j", 241)}, want: []string{"/justification"}, kind: "validation"},
		{name: "justification empty", args: editSpec{"path": "f.txt", "edits": edits("alpha", "x"), "justification": ""}, want: []string{"/justification"}, kind: "validation"},
		{name: "missing file", args: editSpec{"path": "nope.txt", "edits": edits("a", "b")}, want: []string{"nope.txt does not exist", "use write"}, kind: "failed"},
		{name: "directory", args: editSpec{"path": "d", "edits": edits("a", "b")}, want: []string{"is a directory"}, kind: "failed",
			setup: func(t *testing.T, dir string) { os.Mkdir(filepath.Join(dir, "d"), 0o755) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "f.txt")
			putFile(t, p, content)
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			_, err := execTool(t, newEdit(t, dir, Options{}), tt.args)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if k := ErrorKind(err); k != tt.kind {
				t.Errorf("kind %q, want %q", k, tt.kind)
			}
			if got := readBack(t, p); got != content {
				t.Fatalf("file changed to %q", got)
			}
			assertNoTemp(t, dir)
		})
	}
}

// assertNoTemp fails if a temp file of writeFileAtomic is left in dir.
func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Fatalf("temp file %s left behind", e.Name())
		}
	}
}

func TestEditNotFoundHint(t *testing.T) {
	var sb strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&sb, "func handler%d(w http.ResponseWriter, r *http.Request) {\n", i)
		fmt.Fprintf(&sb, "\tlog.Printf(\"request %d: %%s\", r.URL.Path)\n", i)
		sb.WriteString("}\n")
	}
	content := sb.String()
	tests := []struct {
		name    string
		oldText string
		want    []string
	}{
		{"typo in one line", "func handler500(w http.ResponseWriter, r *http.Requets) {", []string{"line 1498:", "1498\tfunc handler500(w http.ResponseWriter, r *http.Request) {"}},
		{"multi-line with a wrong line", "func handler700(w http.ResponseWriter, r *http.Request) {\n\tlog.Printf(\"req 700: %s\", r.URL)\n}",
			[]string{"lines 2098-2100", "2099\t\tlog.Printf(\"request 700: %s\", r.URL.Path)"}},
		{"indentation differs", "func handler42(w http.ResponseWriter, r *http.Request) {\n    log.Printf(\"request 42: %s\", r.URL.Path)\n}",
			[]string{"Lines 124-126 match except for whitespace", "125\t\tlog.Printf"}},
		{"leading blank lines", "\n\nfunc handler9(w http.ResponseWriter, r *http.Request) {\n\tlog.Print()", []string{"lines 25-26"}},
		{"nothing similar", "zzzzqqqq", []string{"No similar text was found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			putFile(t, filepath.Join(dir, "h.go"), content)
			_, err := execTool(t, newEdit(t, dir, Options{}), editSpec{"path": "h.go", "edits": edits(tt.oldText, "x")})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%s", w, err)
				}
			}
		})
	}
}

func TestEditKeepsModeAndSymlink(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "script.sh")
	putFile(t, p, "echo hi\n")
	if err := os.Chmod(p, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("script.sh", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	res, err := execTool(t, newEdit(t, dir, Options{}), editSpec{"path": "link", "edits": edits("hi", "ho")})
	if err != nil {
		t.Fatal(err)
	}
	if got := readBack(t, p); got != "echo ho\n" {
		t.Fatalf("target = %q", got)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o750 {
		t.Fatalf("mode %v, want 0750 (%v)", fi.Mode(), err)
	}
	li, err := os.Lstat(filepath.Join(dir, "link"))
	if err != nil || li.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced by a file")
	}
	if res.Details["path"] != p {
		t.Errorf("details.path %v, want the target %s", res.Details["path"], p)
	}
}

func TestEditUnsavedBuffer(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.go")
	putFile(t, p, "package f\n")
	// The editor has the file open under its real name; the edit names it
	// through a symlink.
	if err := os.Symlink(p, filepath.Join(dir, "alias.go")); err != nil {
		t.Fatal(err)
	}
	asked := false
	e := newEdit(t, dir, Options{Buffers: dirtyBuffers{p: true}, Approver: ApprovalFunc(func(context.Context, ApprovalRequest) error {
		asked = true
		return nil
	})})
	for _, name := range []string{"f.go", "alias.go"} {
		_, err := execTool(t, e, editSpec{"path": name, "edits": edits("package f", "package g")})
		if err == nil || !strings.Contains(err.Error(), "has unsaved changes in the editor") || !strings.Contains(err.Error(), name) && !strings.Contains(err.Error(), "f.go") {
			t.Fatalf("%s: error %v", name, err)
		}
	}
	if got := readBack(t, p); got != "package f\n" || asked {
		t.Fatalf("file %q, approver asked %v", got, asked)
	}
}

// TestEditConcurrentAliases runs 200 edits of distinct lines of one file
// at once, through four names of it: every edit must be applied.
func TestEditConcurrentAliases(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "f.txt")
	var sb strings.Builder
	for i := range 200 {
		fmt.Fprintf(&sb, "row %03d\n", i)
	}
	putFile(t, p, sb.String())
	if err := os.Symlink(p, filepath.Join(dir, "l1")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("l1", filepath.Join(dir, "l2")); err != nil {
		t.Fatal(err)
	}
	aliases := []string{p, "l1", "l2", "./sub/../sub/f.txt"}
	opts := Options{Preset: WorkspaceWrite, Queue: NewMutationQueue()}
	// Two tool instances sharing one queue, as a session has.
	e1, e2 := newEdit(t, dir, opts), newEdit(t, dir, opts)
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := e1
			if i%2 == 1 {
				e = e2
			}
			args, _ := json.Marshal(editSpec{"path": aliases[i%4], "edits": edits(fmt.Sprintf("row %03d\n", i), fmt.Sprintf("ROW %03d\n", i))})
			if _, err := e.Execute(context.Background(), Call{ID: fmt.Sprint(i), Args: args}); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got := readBack(t, p)
	for i := range 200 {
		if !strings.Contains(got, fmt.Sprintf("ROW %03d\n", i)) {
			t.Errorf("edit %d was lost", i)
		}
	}
	assertNoTemp(t, filepath.Dir(p))
}

// BenchmarkEditNotFoundHint20MiB measures the similarity search of a
// failed edit on a 20 MiB file: one pass, no allocation per line.
func BenchmarkEditNotFoundHint20MiB(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 20<<20; i++ {
		fmt.Fprintf(&sb, "\tresult%d := compute(ctx, input[%d], options) // step %d\n", i, i, i)
	}
	body := sb.String()
	want := "\tresult150000 := compute(ctx, input[150000], option) // step 150000\n\tresult150001 := compute(ctx, input[150001], options)"
	for b.Loop() {
		reg, ok := closestRegion(body, want)
		if !ok || reg.first != 150001 {
			b.Fatalf("region %+v", reg)
		}
	}
}
