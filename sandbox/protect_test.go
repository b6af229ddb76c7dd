package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mkTree creates files ("path": content, "path/": directory, "path@":
// symlink to content) below dir.
func mkTree(t *testing.T, dir string, tree map[string]string) {
	t.Helper()
	keys := make([]string, 0, len(tree))
	for k := range tree {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := tree[k]
		p := filepath.Join(dir, strings.TrimRight(k, "/@"))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case strings.HasSuffix(k, "/"):
			err = os.MkdirAll(p, 0o755)
		case strings.HasSuffix(k, "@"):
			err = os.Symlink(v, p)
		default:
			err = os.WriteFile(p, []byte(v), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestPlanProtection(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := d + "/ws"
	mkTree(t, d, map[string]string{
		"ws/.git/HEAD":                     "ref: refs/heads/main\n",
		"ws/a/b/.git/HEAD":                 "x",
		"ws/wt/.git":                       "gitdir: ../../repo/.git/worktrees/wt\n",
		"repo/.git/worktrees/wt/":          "",
		"repo/.git/worktrees/wt/commondir": "../..\n",
		"ws/node_modules/dep/.git/HEAD":    "x",
		"ws/link@":                         d + "/elsewhere",
		"elsewhere/.git/HEAD":              "x",
		"data/config":                      "x",
	})
	s := New(Options{})
	pl, err := s.plan(Policy{Preset: WorkspaceWrite, WritableRoots: []string{ws},
		Protected: []string{d + "/data", ws + "/.agent/state", d + "/missing-outside"}}, ws)
	if err != nil {
		t.Fatal(err)
	}
	wantProt := []string{ws + "/.git", ws + "/wt/.git", d + "/data", d + "/repo/.git/worktrees/wt", d + "/repo/.git",
		ws + "/a/b/.git", ws + "/node_modules/dep/.git"}
	for _, w := range wantProt {
		if !slices.Contains(pl.protected, w) {
			t.Errorf("protected lacks %s: %q", w, pl.protected)
		}
	}
	if slices.Contains(pl.protected, d+"/elsewhere/.git") {
		t.Errorf("a symlinked directory was followed: %q", pl.protected)
	}
	// The missing protected path inside the root is occupied at its first
	// missing component; the one outside every root needs nothing.
	if !slices.Equal(pl.missing, []string{ws + "/.agent"}) {
		t.Errorf("missing = %q", pl.missing)
	}
	for _, w := range []string{ws + "/a", ws + "/a/b", ws + "/wt", ws + "/node_modules", ws + "/node_modules/dep"} {
		if !slices.Contains(pl.pins, w) {
			t.Errorf("pins lack %s: %q", w, pl.pins)
		}
	}
	if slices.Contains(pl.pins, ws) {
		t.Errorf("the root itself is pinned: %q", pl.pins)
	}
	for i := 1; i < len(pl.pins); i++ {
		if strings.Count(pl.pins[i], "/") < strings.Count(pl.pins[i-1], "/") {
			t.Errorf("pins not shallow first: %q", pl.pins)
		}
	}
	if !slices.Contains(pl.gitNames, ws+"/a/b/.git") || len(pl.gitNames) != 4 {
		t.Errorf("gitNames = %q", pl.gitNames)
	}

	// A non-repository: the root's missing .git needs no placeholder (the
	// git guard refuses to create one), a missing protected path does.
	mkTree(t, d, map[string]string{"plain/f": "x"})
	pl, err = s.plan(Policy{Preset: WorkspaceWrite, WritableRoots: []string{d + "/plain"}, Protected: []string{d + "/plain/data/x"}}, d+"/plain")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pl.missing, []string{d + "/plain/data"}) {
		t.Errorf("missing = %q", pl.missing)
	}

	// Read-only: the roots are only visible; nothing is walked.
	pl, err = s.plan(Policy{Preset: ReadOnly, WritableRoots: []string{ws}}, ws+"/a")
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.roots) != 0 || !slices.Contains(pl.visible, ws) || len(pl.missing) != 0 {
		t.Errorf("read-only plan: %+v", pl)
	}
}

func TestPlanRefusesSymlinks(t *testing.T) {
	d, _ := filepath.EvalSymlinks(t.TempDir())
	mkTree(t, d, map[string]string{"ws/sub/.git@": d + "/other", "other/HEAD": "x", "data@": d + "/other"})
	s := New(Options{})
	_, err := s.plan(Policy{Preset: WorkspaceWrite, WritableRoots: []string{d + "/ws"}}, d+"/ws")
	if err == nil || !strings.Contains(err.Error(), d+"/ws/sub/.git") || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("nested .git symlink: err = %v", err)
	}
	os.Remove(d + "/ws/sub/.git")
	_, err = s.plan(Policy{Preset: ReadOnly, Protected: []string{d + "/data"}}, d+"/ws")
	if err == nil || !strings.Contains(err.Error(), d+"/data") {
		t.Errorf("protected symlink: err = %v", err)
	}
}

func TestQuarantineNewGit(t *testing.T) {
	d, _ := filepath.EvalSymlinks(t.TempDir())
	mkTree(t, d, map[string]string{
		"ws/.git/HEAD":     "x",
		"ws/new/.git/HEAD": "x",
		"ws/empty/.git/":   "",
		"ws/file/.git":     "gitdir: /x\n",
	})
	moved, err := quarantineNewGit([]string{d + "/ws"}, []string{d + "/ws/.git"})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(moved)
	want := []string{d + "/ws/file/.git" + quarantineSuffix, d + "/ws/new/.git" + quarantineSuffix}
	if !slices.Equal(moved, want) {
		t.Errorf("moved = %q, want %q", moved, want)
	}
	if read(d+"/ws/new/.git"+quarantineSuffix+"/HEAD") != "x" {
		t.Error("quarantined content lost")
	}
	if !exists(d+"/ws/.git/HEAD") || !exists(d+"/ws/empty/.git") {
		t.Error("a known .git or an empty one was moved")
	}
	// A second one at the same place gets a distinct name: nothing is
	// overwritten.
	mkTree(t, d, map[string]string{"ws/new/.git/HEAD": "y"})
	moved, _ = quarantineNewGit([]string{d + "/ws"}, []string{d + "/ws/.git"})
	if len(moved) != 1 || read(moved[0]+"/HEAD") != "y" || read(d+"/ws/new/.git"+quarantineSuffix+"/HEAD") != "x" {
		t.Errorf("second quarantine: %q", moved)
	}
}

func read(p string) string { b, _ := os.ReadFile(p); return string(b) }

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }
