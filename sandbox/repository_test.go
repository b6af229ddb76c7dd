package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCompletesRepo is git's is_git_directory by names: HEAD with objects
// and refs, or HEAD with commondir.
func TestCompletesRepo(t *testing.T) {
	cases := []struct {
		have []string
		name string
		want bool
	}{
		{nil, "HEAD", false},
		{[]string{"objects"}, "HEAD", false},
		{[]string{"objects", "refs"}, "HEAD", true},
		{[]string{"HEAD", "objects"}, "refs", true},
		{[]string{"HEAD", "refs"}, "objects", true},
		{[]string{"HEAD"}, "commondir", true},
		{[]string{"commondir"}, "HEAD", true},
		{[]string{"HEAD", "objects"}, "config", false},
		{[]string{"objects", "refs"}, "head", true}, // a case-insensitive file system
		{[]string{"objects", "refs", "commondir"}, "x", false},
		{[]string{"HEAD", "objects", "refs"}, "x", true}, // already one: nothing more may go in
	}
	for _, c := range cases {
		has := func(p string) bool { return slices.Contains(c.have, p) }
		if got := completesRepo(c.name, has); got != c.want {
			t.Errorf("%v + %s: got %v, want %v", c.have, c.name, got, c.want)
		}
	}
}

// TestReserveCreate: the file tools' side, through missing parents.
func TestReserveCreate(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a/objects", "a/refs", "b/HEAD"} {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	cases := []struct {
		path string
		bad  bool
	}{
		{"a/HEAD", true},
		{"a/x/HEAD", false}, // x is new: it holds only HEAD
		{"a/config", false},
		{"b/refs/heads/main", false}, // b holds HEAD only
		{"b/commondir", true},
		{"c/d/e", false},
	}
	for _, c := range cases {
		release, err := ReserveCreate(ctx, filepath.Join(dir, c.path))
		var re *RepositoryError
		if got := errors.As(err, &re); got != c.bad {
			t.Errorf("%s: got %v, want refused=%v", c.path, err, c.bad)
			continue
		}
		if c.bad && !strings.Contains(err.Error(), filepath.Join(dir, c.path)) {
			t.Errorf("%s: error does not name the path: %v", c.path, err)
		}
		if release != nil {
			release()
		}
	}
	if _, err := ReserveCreate(ctx, "rel/HEAD"); err == nil {
		t.Error("a relative path was accepted")
	}
}
