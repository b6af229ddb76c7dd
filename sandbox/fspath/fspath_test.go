package fspath

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCanonical(t *testing.T) {
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
		got, err := Canonical(tt.path)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("Canonical(%s) = %q, %v; want %q, error %v", strings.TrimPrefix(tt.path, dir), got, err, tt.want, tt.err)
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
		if got := Within(tt.root, tt.path); got != tt.want {
			t.Errorf("Within(%q, %q) = %v", tt.root, tt.path, got)
		}
	}
}

func TestWithinAny(t *testing.T) {
	roots := []string{"/a", "/c/d"}
	for p, want := range map[string]bool{"/a": true, "/a/x": true, "/c/d/e": true, "/c": false, "/ab": false} {
		if got := WithinAny(p, roots); got != want {
			t.Errorf("WithinAny(%q) = %v", p, got)
		}
	}
	if WithinAny("/x", nil) {
		t.Error("within no root")
	}
	if !WithinAny("/x", []string{"/"}) {
		t.Error("not within /")
	}
}

func TestCanonicalOr(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop", filepath.Join(dir, "loop")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(dir, "here")); err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		filepath.Join(dir, "here", "x"):    filepath.Join(dir, "x"),
		filepath.Join(dir, "loop", "x"):    filepath.Join(dir, "loop", "x"),
		"rel/../x":                         "x",
		filepath.Join(dir, "a", "..", "b"): filepath.Join(dir, "b"),
	} {
		if got := CanonicalOr(in); got != want {
			t.Errorf("CanonicalOr(%q) = %q, want %q", in, got, want)
		}
	}
}

func putFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
