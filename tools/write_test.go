package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func newWrite(t *testing.T, dir string, opts Options) *Write {
	t.Helper()
	if opts.Preset == "" {
		opts.Preset = WorkspaceWrite
	}
	w, err := NewWrite(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestWriteCreatesWithParents(t *testing.T) {
	dir := t.TempDir()
	res, err := execTool(t, newWrite(t, dir, Options{}), map[string]any{"path": "a/b/c.txt", "content": "hello\n"})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "a", "b", "c.txt")
	if got := readBack(t, p); got != "hello\n" {
		t.Fatalf("content %q", got)
	}
	if res.Content[0].Text != "Created a/b/c.txt (6 bytes)" {
		t.Errorf("text %q", res.Content[0].Text)
	}
	if res.Details["created"] != true || res.Details["bytes"] != 6 || res.Details["path"] != p || res.Details["firstChangedLine"] != 1 {
		t.Errorf("details %v", res.Details)
	}
	if d := res.Details["diff"].(string); !strings.HasPrefix(d, "--- /dev/null\n") || !strings.Contains(d, "+hello\n") {
		t.Errorf("diff %q", d)
	}
	if len(res.Changes) != 1 || res.Changes[0].OldText != nil || res.Changes[0].NewText != "hello\n" {
		t.Errorf("changes %+v", res.Changes)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := os.FileMode(0o644) &^ umask(t); fi.Mode().Perm() != want {
		t.Errorf("new file mode %v, want %v", fi.Mode().Perm(), want)
	}
}

func TestWriteReplacesKeepingMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "secret.env")
	putFile(t, p, "A=1\nB=2\n")
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := execTool(t, newWrite(t, dir, Options{}), map[string]any{"path": "secret.env", "content": "A=1\nB=3\n"})
	if err != nil {
		t.Fatal(err)
	}
	if got := readBack(t, p); got != "A=1\nB=3\n" {
		t.Fatalf("content %q", got)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
	}
	if res.Details["created"] != false || res.Details["firstChangedLine"] != 2 || res.Content[0].Text != "Wrote secret.env (8 bytes)" {
		t.Errorf("result %q %v", res.Content[0].Text, res.Details)
	}
	if len(res.Changes) != 1 || res.Changes[0].OldText == nil || *res.Changes[0].OldText != "A=1\nB=2\n" {
		t.Errorf("changes %+v", res.Changes)
	}
	assertNoTemp(t, dir)
}

func TestWriteUnchangedContentIsNotRewritten(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	putFile(t, p, "same")
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	res, err := execTool(t, newWrite(t, dir, Options{}), map[string]any{"path": "f", "content": "same"})
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); !fi.ModTime().Equal(old) {
		t.Fatal("an identical write rewrote the file")
	}
	if len(res.Changes) != 0 || !strings.Contains(res.Content[0].Text, "nothing changed") {
		t.Fatalf("result %q %+v", res.Content[0].Text, res.Changes)
	}
}

func TestWriteThroughDanglingSymlink(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("real/target.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := execTool(t, newWrite(t, dir, Options{}), map[string]any{"path": "link", "content": "x"}); err != nil {
		t.Fatal(err)
	}
	if got := readBack(t, filepath.Join(dir, "real", "target.txt")); got != "x" {
		t.Fatalf("target %q", got)
	}
	if li, _ := os.Lstat(filepath.Join(dir, "link")); li.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the link was replaced")
	}
}

func TestWriteRefuses(t *testing.T) {
	tests := []struct {
		name string
		args any
		want []string
		kind string
	}{
		{"directory", map[string]any{"path": "d", "content": "x"}, []string{"is a directory"}, "failed"},
		{"parent is a file", map[string]any{"path": "file/x", "content": "x"}, []string{"not a directory"}, "failed"},
		{"missing content", map[string]any{"path": "n"}, []string{"/content", "required"}, "validation"},
		{"content not a string", `{"path":"n","content":3}`, []string{"/content"}, "validation"},
		{"extra field", map[string]any{"path": "n", "content": "", "mode": "0755"}, []string{"mode"}, "validation"},
		{"long justification", map[string]any{"path": "n", "content": "", "justification": strings.Repeat("é", 241)}, []string{"/justification"}, "validation"},
		{"fifo", map[string]any{"path": "fifo", "content": "x"}, []string{"not a regular file"}, "failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			os.Mkdir(filepath.Join(dir, "d"), 0o755)
			putFile(t, filepath.Join(dir, "file"), "keep")
			mkfifo(t, filepath.Join(dir, "fifo"))
			_, err := execTool(t, newWrite(t, dir, Options{}), tt.args)
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
			if _, err := os.Stat(filepath.Join(dir, "n")); err == nil {
				t.Error("file created")
			}
			if readBack(t, filepath.Join(dir, "file")) != "keep" {
				t.Error("file changed")
			}
			assertNoTemp(t, dir)
		})
	}
}

// TestMutateRefusesHugeFiles edits a sparse file larger than the limit:
// a clear error, not an attempt to load it.
func TestMutateRefusesHugeFiles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "huge")
	putFile(t, p, "head\n")
	if err := os.Truncate(p, maxMutableSize+1); err != nil {
		t.Skip(err)
	}
	_, err := execTool(t, newEdit(t, dir, Options{}), editSpec{"path": "huge", "edits": edits("head", "x")})
	if err == nil || !strings.Contains(err.Error(), "use bash") {
		t.Fatalf("got %v", err)
	}
	_, err = execTool(t, newWrite(t, dir, Options{}), map[string]any{"path": "huge", "content": "x"})
	if err == nil || !strings.Contains(err.Error(), "use bash") {
		t.Fatalf("got %v", err)
	}
}

// TestWriteJustificationCountsCharacters accepts 240 multi-byte
// characters: the limit is in characters, not bytes.
func TestWriteJustificationCountsCharacters(t *testing.T) {
	dir := t.TempDir()
	_, err := execTool(t, newWrite(t, dir, Options{}), map[string]any{"path": "n", "content": "", "justification": strings.Repeat("é", 240)})
	if err != nil {
		t.Fatal(err)
	}
}

// BenchmarkWriteMutation50MiB measures write's own work on 50 MiB (queue,
// checks, diff, atomic replace with fsync) without the argument decoding,
// which bench/BenchmarkWrite50MiB includes.
func BenchmarkWriteMutation50MiB(b *testing.B) {
	dir := b.TempDir()
	w, err := NewWrite(dir, Options{Preset: WorkspaceWrite})
	if err != nil {
		b.Fatal(err)
	}
	content := strings.Repeat("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n", 50<<20/64)
	target := filepath.Join(dir, "out")
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		_, err := w.m.mutate(context.Background(), Call{}, target, "", func(string, string, bool) (string, []span, error) {
			return content, nil, nil
		})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		os.Remove(target)
		b.StartTimer()
	}
}
