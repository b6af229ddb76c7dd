package tools

import (
	"os"
	"path/filepath"
	"strings"
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

func TestCanonicalPath(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	j := func(p ...string) string { return filepath.Join(append([]string{dir}, p...)...) }
	putFile(t, j("real", "f.txt"), "x")
	links := map[string]string{
		"abs":        j("real", "f.txt"),
		"rel":        "real/f.txt",
		"chain":      "rel",
		"dirlink":    "real",
		"dangling":   "real/missing.txt",
		"dangchain":  "dangling",
		"danglingup": "../outside/new.txt",
		"loop1":      "loop2",
		"loop2":      "loop1",
		"self":       "self",
		"real/up":    "../real/f.txt",
		"absdangle":  j("newdir", "deep", "n.txt"),
	}
	for name, target := range links {
		if err := os.Symlink(target, j(name)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		path, want string
		err        bool
	}{
		{path: j("real", "f.txt"), want: j("real", "f.txt")},
		{path: j("real", "new.txt"), want: j("real", "new.txt")},
		{path: j("missing", "a", "b"), want: j("missing", "a", "b")},
		{path: j("abs"), want: j("real", "f.txt")},
		{path: j("rel"), want: j("real", "f.txt")},
		{path: j("chain"), want: j("real", "f.txt")},
		{path: j("dirlink", "f.txt"), want: j("real", "f.txt")},
		{path: j("dirlink", "..", "rel"), want: j("real", "f.txt")},
		{path: j("dangling"), want: j("real", "missing.txt")},
		{path: j("dangchain"), want: j("real", "missing.txt")},
		{path: j("danglingup"), want: filepath.Join(filepath.Dir(dir), "outside", "new.txt")},
		{path: j("real", "up"), want: j("real", "f.txt")},
		{path: j("absdangle"), want: j("newdir", "deep", "n.txt")},
		{path: j("real", "f.txt", "below"), want: j("real", "f.txt", "below")},
		{path: j("loop1"), err: true},
		{path: j("self", "x"), err: true},
		{path: "relative", err: true},
	}
	for _, tt := range tests {
		got, err := CanonicalPath(tt.path)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("CanonicalPath(%s) = %q, %v; want %q, error %v", strings.TrimPrefix(tt.path, dir), got, err, tt.want, tt.err)
		}
	}
}

func TestWithin(t *testing.T) {
	tests := []struct {
		root, path string
		want       bool
	}{
		{"/a", "/a", true},
		{"/a", "/a/b", true},
		{"/a", "/ab", false},
		{"/a/b", "/a", false},
		{"/", "/x", true},
	}
	for _, tt := range tests {
		if got := within(tt.root, tt.path); got != tt.want {
			t.Errorf("within(%q, %q) = %v", tt.root, tt.path, got)
		}
	}
}
