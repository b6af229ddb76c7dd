package tools

import (
	"path/filepath"
	"testing"
)

func TestResolvePath(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	tests := []struct {
		path, want string
		err        bool
	}{
		{path: "f.go", want: "/work/f.go"},
		{path: "./a/../b", want: "/work/b"},
		{path: "../up", want: "/up"},
		{path: "/abs/./x/../y", want: "/abs/y"},
		{path: "~", want: home},
		{path: "~/notes/a.md", want: filepath.Join(home, "notes/a.md")},
		{path: "~other/x", want: "/work/~other/x"}, // only ~ and ~/ are expanded
		{path: "", err: true},
		{path: "a\x00b", err: true},
	}
	for _, tt := range tests {
		got, err := ResolvePath("/work", tt.path)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ResolvePath(%q) = %q, %v; want %q, error %v", tt.path, got, err, tt.want, tt.err)
		}
	}
	if _, err := ResolvePath("relative", "x"); err == nil {
		t.Error("a relative cwd was accepted")
	}
}
