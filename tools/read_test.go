package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

// call runs tool with args marshalled to JSON.
func execTool(t *testing.T, tool Tool, args any) (Result, error) {
	t.Helper()
	raw, ok := args.(string)
	if !ok {
		b, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(b)
	}
	return tool.Execute(context.Background(), Call{ID: "call-1", Args: json.RawMessage(raw)})
}

func putFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func lineRange(from, to int) string {
	var sb strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	return sb.String()
}

func newRead(t *testing.T, dir string, opts Options) *Read {
	t.Helper()
	r, err := NewRead(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestReadWindows(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("x", MaxBytes+1)
	files := map[string]string{
		"abc":       "a\nb\nc\n",
		"noeol":     "a\nb\nc",
		"empty":     "",
		"many":      lineRange(1, 2500),
		"crlf":      "a\r\nb\r\n",
		"longfirst": long + "\nshort\n",
		"longlater": "one\n" + long + "\nthree\n",
		"exact":     strings.Repeat("y", MaxBytes) + "\nz\n",
	}
	for name, content := range files {
		putFile(t, filepath.Join(dir, name), content)
	}
	tests := []struct {
		name     string
		args     map[string]any
		want     string // exact text, or prefix when wantPrefix
		prefix   bool
		contains []string
		details  map[string]any
	}{
		{name: "whole file", args: map[string]any{"path": "abc"}, want: "a\nb\nc",
			details: map[string]any{"lines": 3, "truncated": false, "totalLines": 3, "offset": 1}},
		{name: "no final newline", args: map[string]any{"path": "noeol"}, want: "a\nb\nc",
			details: map[string]any{"lines": 3, "totalLines": 3}},
		{name: "offset", args: map[string]any{"path": "abc", "offset": 2}, want: "b\nc",
			details: map[string]any{"lines": 2, "offset": 2}},
		{name: "last line", args: map[string]any{"path": "noeol", "offset": 3}, want: "c"},
		{name: "limit", args: map[string]any{"path": "abc", "offset": 1, "limit": 2},
			want:    "a\nb\n\n[Showing lines 1-2; the file continues. Use offset=3 to continue.]",
			details: map[string]any{"lines": 2, "truncated": true, "nextOffset": 3}},
		{name: "limit reaching the end", args: map[string]any{"path": "abc", "offset": 2, "limit": 2}, want: "b\nc",
			details: map[string]any{"truncated": false, "totalLines": 3}},
		{name: "empty", args: map[string]any{"path": "empty"}, want: "[empty is empty]"},
		{name: "crlf kept", args: map[string]any{"path": "crlf"}, want: "a\r\nb\r"},
		{name: "line limit", args: map[string]any{"path": "many"}, prefix: true, want: "line 1\nline 2\n",
			contains: []string{"line 2000\n\n[Showing lines 1-2000 (2000-line limit); the file continues. Use offset=2001 to continue.]"},
			details:  map[string]any{"lines": 2000, "truncated": true, "nextOffset": 2001}},
		{name: "line limit with offset", args: map[string]any{"path": "many", "offset": 2001}, prefix: true, want: "line 2001\n",
			contains: []string{"line 2500"}, details: map[string]any{"lines": 500, "truncated": false, "totalLines": 2500}},
		{name: "limit above the cap", args: map[string]any{"path": "many", "limit": 5000},
			contains: []string{"Use offset=2001"}, details: map[string]any{"lines": 2000}},
		{name: "long first line", args: map[string]any{"path": "longfirst"},
			want:    fmt.Sprintf("[Line 1 is longer than the 51200-byte limit and is not shown. Read part of it with bash, e.g.: sed -n '1p' '%s' | head -c 51200]", filepath.Join(dir, "longfirst")),
			details: map[string]any{"lines": 0, "truncated": true, "nextOffset": 2}},
		{name: "long later line", args: map[string]any{"path": "longlater"},
			want:    "one\n\n[Showing lines 1-1 (51200-byte limit); the file continues. Use offset=2 to continue.]",
			details: map[string]any{"lines": 1, "nextOffset": 2}},
		{name: "line of exactly the limit", args: map[string]any{"path": "exact", "limit": 1}, prefix: true, want: "yyyy",
			contains: []string{"Use offset=2"}, details: map[string]any{"lines": 1}},
	}
	r := newRead(t, dir, Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := execTool(t, r, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			text := res.Content[0].Text
			if tt.want != "" {
				if tt.prefix && !strings.HasPrefix(text, tt.want) || !tt.prefix && text != tt.want {
					t.Errorf("text = %.300q, want %.300q", text, tt.want)
				}
			}
			for _, c := range tt.contains {
				if !strings.Contains(text, c) {
					t.Errorf("text lacks %q:\n%.300s...%s", c, text, text[max(0, len(text)-300):])
				}
			}
			for k, v := range tt.details {
				if res.Details[k] != v {
					t.Errorf("details[%s] = %v, want %v", k, res.Details[k], v)
				}
			}
			if res.Details["path"] != filepath.Join(dir, tt.args["path"].(string)) {
				t.Errorf("details.path = %v", res.Details["path"])
			}
		})
	}
}

// TestReadByteLimit checks that the byte limit keeps whole lines, never
// cuts a rune, and names the next offset.
func TestReadByteLimit(t *testing.T) {
	dir := t.TempDir()
	// 3-byte runes, lines of 32 runes + "\n" = 97 bytes: the limit falls
	// inside a line and inside a rune.
	const line = "日本語のテキスト日本語のテキスト日本語のテキスト日本語のテキスト"
	var sb strings.Builder
	for range 5000 {
		sb.WriteString(line + "\n")
	}
	putFile(t, filepath.Join(dir, "utf8"), sb.String())
	res, err := execTool(t, newRead(t, dir, Options{}), map[string]any{"path": "utf8"})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].Text
	body, note, ok := strings.Cut(text, "\n\n[")
	if !ok {
		t.Fatalf("no annotation: %.200q", text)
	}
	if len(body) > MaxBytes {
		t.Fatalf("%d bytes returned, limit %d", len(body), MaxBytes)
	}
	if !utf8.ValidString(body) {
		t.Fatal("returned text is not valid UTF-8")
	}
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		if l != line {
			t.Fatalf("line %d is %q, not a whole line", i+1, l)
		}
	}
	want := fmt.Sprintf("Use offset=%d to continue.", len(lines)+1)
	if !strings.Contains(note, want) || res.Details["nextOffset"] != len(lines)+1 {
		t.Fatalf("annotation %q lacks %q", note, want)
	}
	// The window is as full as whole lines allow.
	if len(body)+len(line)+1 <= MaxBytes {
		t.Fatalf("only %d bytes returned; another line fits", len(body))
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	putFile(t, filepath.Join(dir, "abc"), "a\nb\nc\n")
	putFile(t, filepath.Join(dir, "noeol"), "a\nb")
	putFile(t, filepath.Join(dir, "empty"), "")
	putFile(t, filepath.Join(dir, "bin"), "text\x00more\n")
	// A NUL after the window but in the first block is still found.
	putFile(t, filepath.Join(dir, "binlater"), "line\n"+strings.Repeat("z", 1000)+"\x00")
	// A NUL deep in the skipped part of the file.
	putFile(t, filepath.Join(dir, "binskipped"), lineRange(1, 100000)+"\x00\n"+lineRange(1, 10))
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	mkfifo(t, filepath.Join(dir, "fifo"))
	tests := []struct {
		name string
		args any
		want []string
		kind string
	}{
		{"missing", map[string]any{"path": "nope.txt"}, []string{filepath.Join(dir, "nope.txt"), "does not exist"}, "failed"},
		{"directory", map[string]any{"path": "sub"}, []string{"sub is a directory"}, "failed"},
		{"fifo", map[string]any{"path": "fifo"}, []string{"not a regular file"}, "failed"},
		{"binary", map[string]any{"path": "bin"}, []string{"binary"}, "failed"},
		{"binary after window", map[string]any{"path": "binlater", "limit": 1}, []string{"binary"}, "failed"},
		{"binary before window", map[string]any{"path": "binskipped", "offset": 100005}, []string{"binary"}, "failed"},
		{"offset past end", map[string]any{"path": "abc", "offset": 4}, []string{"offset 4", "has 3 lines"}, "failed"},
		{"offset far past end", map[string]any{"path": "noeol", "offset": 1000}, []string{"has 2 lines"}, "failed"},
		{"offset in empty file", map[string]any{"path": "empty", "offset": 2}, []string{"has 0 lines"}, "failed"},
		{"offset zero", map[string]any{"path": "abc", "offset": 0}, []string{"/offset", "minimum"}, "validation"},
		{"offset negative", map[string]any{"path": "abc", "offset": -3}, []string{"/offset"}, "validation"},
		{"offset fraction", `{"path":"abc","offset":1.5}`, []string{"/offset", "integer"}, "validation"},
		{"offset string", `{"path":"abc","offset":"2"}`, []string{"/offset"}, "validation"},
		{"limit zero", map[string]any{"path": "abc", "limit": 0}, []string{"/limit"}, "validation"},
		{"missing path", map[string]any{}, []string{"/path", "required"}, "validation"},
		{"empty path", map[string]any{"path": ""}, []string{"/path"}, "validation"},
		{"extra field", map[string]any{"path": "abc", "lines": 3}, []string{"lines"}, "validation"},
		{"not json", `{"path":`, []string{"JSON"}, "validation"},
	}
	r := newRead(t, dir, Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := execTool(t, r, tt.args)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if k := ErrorKind(err); k != tt.kind {
				t.Errorf("error kind %q, want %q (%v)", k, tt.kind, err)
			}
		})
	}
}

func TestReadPaths(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	putFile(t, filepath.Join(home, "h.txt"), "home\n")
	dir := t.TempDir()
	putFile(t, filepath.Join(dir, "sub", "r.txt"), "rel\n")
	r := newRead(t, dir, Options{})
	for path, want := range map[string]string{
		"~/h.txt":                          "home",
		"sub/r.txt":                        "rel",
		"./sub/../sub/r.txt":               "rel",
		filepath.Join(dir, "sub", "r.txt"): "rel",
	} {
		res, err := execTool(t, r, map[string]any{"path": path})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if res.Content[0].Text != want {
			t.Errorf("%s: got %q, want %q", path, res.Content[0].Text, want)
		}
	}
}

type dirtyBuffers map[string]bool

func (b dirtyBuffers) Unsaved(path string) bool { return b[path] }

func TestReadUnsavedBuffer(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.go")
	putFile(t, p, "package f\n")
	putFile(t, filepath.Join(dir, "g.go"), "package g\n")
	r := newRead(t, dir, Options{Buffers: dirtyBuffers{p: true}})
	res, err := execTool(t, r, map[string]any{"path": "f.go"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Content[0].Text, "unsaved changes") || res.Details["unsaved"] != true {
		t.Fatalf("no unsaved note: %q %v", res.Content[0].Text, res.Details)
	}
	res, err = execTool(t, r, map[string]any{"path": "g.go"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Content[0].Text, "unsaved") || res.Details["unsaved"] != nil {
		t.Fatalf("clean file reported unsaved: %q", res.Content[0].Text)
	}
}

// TestReadStreams reads the head of a 64 GiB sparse file: the hole reads
// as NUL bytes, so reading anything past the text head (40,000 lines, more
// than one read buffer) would fail as binary, and loading the file would
// not fit in memory.
func TestReadStreams(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "huge")
	putFile(t, p, lineRange(1, 40000))
	if err := os.Truncate(p, 64<<30); err != nil {
		t.Skipf("cannot make a sparse file: %v", err)
	}
	r := newRead(t, dir, Options{})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := execTool(t, r, map[string]any{"path": "huge", "offset": 10, "limit": 100})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Content[0].Text, "line 10\n") || !strings.Contains(res.Content[0].Text, "offset=110") {
		t.Fatalf("unexpected text %.100q", res.Content[0].Text)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2<<20 {
		t.Fatalf("reading 100 lines allocated %d bytes", alloc)
	}
	allocs := testing.AllocsPerRun(5, func() {
		if _, err := execTool(t, r, map[string]any{"path": "huge", "limit": 2000}); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 200 {
		t.Fatalf("%v allocations per read", allocs)
	}
}

func TestReadCancelled(t *testing.T) {
	dir := t.TempDir()
	putFile(t, filepath.Join(dir, "f"), "x\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := newRead(t, dir, Options{}).Execute(ctx, Call{Args: json.RawMessage(`{"path":"f"}`)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestNewReadChecksCwd(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	putFile(t, f, "")
	for _, cwd := range []string{"", f, filepath.Join(f, "missing")} {
		if _, err := NewRead(cwd, Options{}); err == nil {
			t.Errorf("NewRead(%q) accepted a bad cwd", cwd)
		}
	}
	if _, err := NewRead(t.TempDir(), Options{Preset: "root"}); err == nil {
		t.Error("NewRead accepted an unknown preset")
	}
}
