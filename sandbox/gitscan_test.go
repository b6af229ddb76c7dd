package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// gitPaths returns a function that turns a scan's result into sorted
// strings, failing t on an error.
func gitPaths(t testing.TB) func([]gitEntry, error) []string {
	return func(gs []gitEntry, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, g := range gs {
			out = append(out, fmt.Sprintf("%s file=%v", g.path, g.isFile))
		}
		slices.Sort(out)
		return out
	}
}

// mk creates directories ("path/") and gitdir files below root.
func mk(t *testing.T, root string, paths ...string) {
	t.Helper()
	tree := map[string]string{}
	for _, p := range paths {
		tree[p] = "gitdir: /nowhere\n"
	}
	mkTree(t, root, tree)
}

// TestGitScannerMatchesFindGit: the scanner finds what a full walk finds,
// on the first scan and after changes of every kind.
func TestGitScannerMatchesFindGit(t *testing.T) {
	root := t.TempDir()
	mk(t, root, ".git/", "a/b/c/", "a/.git", "nested/repo/.git/objects/", "x/y/z/w/", "link-target/.git/")
	os.Symlink(filepath.Join(root, "link-target"), filepath.Join(root, "a/link"))
	g := newGitScanner()
	// Everything read is trusted at once: the test changes modification
	// times itself.
	g.now = func() time.Time { return time.Now().Add(time.Hour) }
	check := func(step string) {
		t.Helper()
		want := gitPaths(t)(findGit(root))
		got := gitPaths(t)(g.find(root))
		if !slices.Equal(got, want) {
			t.Errorf("%s: scanner found %q, a full walk %q", step, got, want)
		}
	}
	check("first scan")
	check("unchanged")
	mk(t, root, "x/y/z/w/.git/")
	check("new nested .git directory")
	mk(t, root, "a/b/c/.git")
	check("new .git file")
	if err := os.Rename(filepath.Join(root, "nested"), filepath.Join(root, "moved")); err != nil {
		t.Fatal(err)
	}
	check("renamed directory")
	if err := os.RemoveAll(filepath.Join(root, "x")); err != nil {
		t.Fatal(err)
	}
	check("removed directory")
	if _, ok := g.dirs[filepath.Join(root, "x/y")]; ok {
		t.Error("a removed directory is still remembered")
	}
	mk(t, root, "new/deep/er/.git/")
	check("new subtree")
}

// TestGitScannerRemembers: an unchanged directory is not read again, and a
// directory modified just before it was read is read again even if its
// time looks unchanged (coarse timestamps).
func TestGitScannerRemembers(t *testing.T) {
	for _, trusted := range []bool{true, false} {
		t.Run(fmt.Sprintf("trusted=%v", trusted), func(t *testing.T) {
			root := t.TempDir()
			mk(t, root, "sub/")
			sub := filepath.Join(root, "sub")
			old := time.Now().Add(-time.Minute)
			os.Chtimes(sub, old, old)
			g := newGitScanner()
			if trusted {
				g.now = func() time.Time { return time.Now().Add(time.Hour) }
			} else {
				g.now = func() time.Time { return old.Add(racyWindow / 2) }
			}
			if got := gitPaths(t)(g.find(root)); len(got) != 0 {
				t.Fatalf("found %q in an empty tree", got)
			}
			// A change that keeps the directory's time, as a change within
			// the same clock tick would.
			mk(t, root, "sub/.git/")
			os.Chtimes(sub, old, old)
			got := gitPaths(t)(g.find(root))
			if trusted && len(got) != 0 {
				t.Errorf("the unchanged directory was read again: found %q", got)
			}
			if !trusted && len(got) != 1 {
				t.Errorf("a directory read within the racy window was trusted: found %q", got)
			}
		})
	}
}

// TestGitScannerSymlinkedGit: a `.git` that is a symlink is refused.
func TestGitScannerSymlinkedGit(t *testing.T) {
	root := t.TempDir()
	mk(t, root, "real/")
	os.Symlink(filepath.Join(root, "real"), filepath.Join(root, ".git"))
	if _, err := newGitScanner().find(root); err == nil {
		t.Error("a symlinked .git was accepted")
	}
}

// BenchmarkGitScan20k compares the scanner's second and later scans with a
// full walk, on 20,000 files in 1,000 directories.
//
//	go test ./sandbox -run '^$' -bench GitScan
func BenchmarkGitScan20k(b *testing.B) {
	root := b.TempDir()
	for i := range 20000 {
		sub := filepath.Join(root, fmt.Sprintf("d%03d", i/20))
		os.MkdirAll(sub, 0o755)
		os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%02d.go", i%20)), []byte("package x\n"), 0o644)
	}
	old := time.Now().Add(-time.Minute)
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if d.IsDir() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	b.Run("walk", func(b *testing.B) {
		for b.Loop() {
			findGit(root)
		}
	})
	b.Run("scanner", func(b *testing.B) {
		g := newGitScanner()
		g.find(root)
		for b.Loop() {
			g.find(root)
		}
	})
}
