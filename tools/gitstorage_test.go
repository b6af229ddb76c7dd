package tools

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitHost runs git on the host as an editor or a shell prompt would, with
// no user or system configuration.
func gitHost(t *testing.T, home, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return string(out)
}

// TestAttackGitdirStorage attacks the git storage that has no .git in its
// path: the gitdir of `git init --separate-git-dir`, a worktree's gitdir
// inside it, a submodule's gitdir (modules/NAME) and a bare repository,
// each written and edited directly and through a symlink, under
// full-access with an approver that allows everything. Every mutation is
// a *PermissionError, the approver is never asked, the storage is byte
// for byte what it was, and a host `git status` in the work trees runs no
// fsmonitor command. The baseline writes the same line by hand and shows
// that git then runs it.
func TestAttackGitdirStorage(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required for this test")
	}
	for _, mode := range []string{"tool", "baseline"} {
		t.Run(mode, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			ws, store, wt := filepath.Join(base, "ws"), filepath.Join(base, "store"), filepath.Join(base, "wt")
			bare, sub := filepath.Join(base, "project.git"), filepath.Join(base, "subsrc")
			marker := filepath.Join(base, "fsmonitor-ran")
			gitHost(t, base, base, "init", "-q", "--separate-git-dir", store, ws)
			putFile(t, filepath.Join(ws, "a.txt"), "a\n")
			gitHost(t, base, ws, "add", "a.txt")
			gitHost(t, base, ws, "commit", "-q", "-m", "a")
			gitHost(t, base, ws, "worktree", "add", "-q", wt)
			gitHost(t, base, base, "init", "-q", sub)
			gitHost(t, base, sub, "commit", "-q", "--allow-empty", "-m", "s")
			gitHost(t, base, ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "sub")
			gitHost(t, base, base, "init", "-q", "--bare", bare)
			if err := os.Symlink(store, filepath.Join(ws, "storelink")); err != nil {
				t.Fatal(err)
			}
			wtGitdir := strings.TrimSpace(strings.TrimPrefix(readBack(t, filepath.Join(wt, ".git")), "gitdir:"))
			if !strings.HasPrefix(wtGitdir, store+"/") {
				t.Fatalf("worktree gitdir %s is not in the separate gitdir", wtGitdir)
			}
			monitor := "\tfsmonitor = \"touch " + marker + "; false\"\n"
			targets := []struct{ path, old string }{
				{filepath.Join(store, "config"), "[core]\n"},
				{filepath.Join("storelink", "config"), "[core]\n"}, // through a symlink in the workspace
				{filepath.Join(store, "modules", "sub", "config"), "[core]\n"},
				{filepath.Join(wtGitdir, "config.worktree"), ""}, // a new file in the worktree's gitdir
				{filepath.Join(store, "hooks", "pre-commit"), ""},
				{filepath.Join(bare, "config"), "[core]\n"},
			}
			before := snapshot(t, store) + snapshot(t, bare)
			rec := &recorder{}
			opts := Options{Preset: FullAccess, Approver: rec}
			for _, tg := range targets {
				p := tg.path
				if !filepath.IsAbs(p) {
					p = filepath.Join(ws, p)
				}
				if mode == "baseline" {
					if tg.old != "" {
						b := readBack(t, p)
						if err := os.WriteFile(p, []byte(strings.Replace(b, tg.old, tg.old+monitor, 1)), 0o644); err != nil {
							t.Fatal(err)
						}
					}
					continue
				}
				content := "[core]\n" + monitor
				_, werr := execTool(t, newWrite(t, ws, opts), map[string]any{"path": tg.path, "content": content})
				errs := []error{werr}
				if tg.old != "" {
					_, eerr := execTool(t, newEdit(t, ws, opts), editSpec{"path": tg.path, "edits": edits(tg.old, tg.old+monitor)})
					errs = append(errs, eerr)
				}
				for _, err := range errs {
					var pe *PermissionError
					if !errors.As(err, &pe) || !strings.Contains(err.Error(), "git's storage") {
						t.Errorf("%s: got %v, want a *PermissionError naming git's storage", tg.path, err)
					}
				}
			}
			for _, dir := range []string{ws, wt, filepath.Join(ws, "sub")} {
				gitHost(t, base, dir, "status", "--short")
			}
			gitHost(t, base, base, "--git-dir="+bare, "--work-tree="+ws, "status", "--short")
			_, ran := os.Lstat(marker)
			if mode == "baseline" {
				if ran != nil {
					t.Fatal("baseline: git ran no fsmonitor command; the check cannot fail")
				}
				return
			}
			if rec.count() != 0 {
				t.Errorf("the approver was asked %d times about git's storage", rec.count())
			}
			if after := snapshot(t, store) + snapshot(t, bare); after != before {
				t.Error("git's storage changed")
			}
			if ran == nil {
				t.Error("BREACH: a host git status ran the fsmonitor command")
			}
		})
	}
}

// TestGitStorageKeepsWorkFiles checks the other side: files of a work
// tree next to git's storage, and names that merely look like it, stay
// writable.
func TestGitStorageKeepsWorkFiles(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(base, "ws")
	gitHost(t, base, base, "init", "-q", "--separate-git-dir", filepath.Join(base, "store"), ws)
	putFile(t, filepath.Join(ws, "refs", "notes.md"), "x")
	putFile(t, filepath.Join(ws, "objects", "o.txt"), "x")
	w := newWrite(t, ws, Options{Preset: WorkspaceWrite})
	for _, p := range []string{"a.txt", "HEAD.md", "objects/o.txt", "refs/notes.md", "sub/.gitignore", "my.git/x"} {
		if _, err := execTool(t, w, map[string]any{"path": p, "content": "y"}); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
