//go:build linux

package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAttackGitStorageRoot gives the sandbox writable roots inside git's
// storage (issue 12 #4): a repository's .git as the only root, a bare
// repository, and another repository's .git beside the workspace. The
// command appends a core.fsmonitor line to the config there. Sandboxed,
// the command is refused before it runs: the config is unchanged on the
// host and a host `git status` runs nothing. The baseline (plain bash)
// shows the append working and git running it.
func TestAttackGitStorageRoot(t *testing.T) {
	testSandbox(t)
	for _, tc := range []string{"dot-git root", "bare root", "other .git beside the workspace"} {
		for _, mode := range []string{"sandbox", "plain"} {
			t.Run(tc+"/"+mode, func(t *testing.T) {
				f := newFixture(t, true)
				other, bare := f.dir+"/other", f.dir+"/project.git"
				if out, err := sh(f.dir, "git init -q other && git init -q --bare project.git"); err != nil {
					t.Fatalf("%v %s", err, out)
				}
				var roots []string
				var gitdir, worktree string
				switch tc {
				case "dot-git root":
					gitdir, worktree = other+"/.git", other
					roots = []string{gitdir}
				case "bare root":
					gitdir, worktree = bare, f.ws
					roots = []string{bare}
				default:
					gitdir, worktree = other+"/.git", other
					roots = []string{f.ws, gitdir}
				}
				marker := f.dir + "/fsmonitor-ran"
				script := `printf '[core]\n\tfsmonitor = "touch ` + marker + `; false"\n' >> ` + gitdir + "/config"
				cfg := read(gitdir + "/config")
				var out string
				if mode == "sandbox" {
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					defer cancel()
					cmd, err := testSandbox(t).Command(ctx, Policy{Preset: WorkspaceWrite, WritableRoots: roots}, script, roots[0], os.Environ())
					if err == nil {
						b, _, _ := cmd.Output()
						out = string(b)
					} else if !strings.Contains(err.Error(), "git's storage") {
						t.Errorf("refused, but not for git's storage: %v", err)
					}
				} else if b, err := sh(roots[0], script); err != nil {
					t.Fatalf("plain: %v %s", err, b)
				}
				git := exec.Command("git", "--git-dir="+gitdir, "--work-tree="+worktree, "status", "--short")
				git.Env = append(os.Environ(), "HOME="+f.home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
				git.CombinedOutput()
				held := read(gitdir+"/config") == cfg && !exists(marker)
				if mode == "sandbox" && !held {
					t.Errorf("BREACH: the config in %s changed or git ran the command:\n%s", filepath.Base(gitdir), out)
				}
				if mode == "plain" && held {
					t.Error("baseline: the append or git's run did not happen; the check cannot fail")
				}
			})
		}
	}
}

// TestPlanRefusesGitStorageRoots checks the plan's refusal directly, for
// read-only too (where roots are only visible, and allowed).
func TestPlanRefusesGitStorageRoots(t *testing.T) {
	d, _ := filepath.EvalSymlinks(t.TempDir())
	mkTree(t, d, map[string]string{"repo/.git/HEAD": "ref: refs/heads/main\n", "repo/.git/objects/": "", "repo/.git/refs/": "", "ws/f": "x"})
	s := New(Options{})
	for _, root := range []string{d + "/repo/.git", d + "/repo/.git/objects"} {
		_, err := s.plan(Policy{Preset: WorkspaceWrite, WritableRoots: []string{d + "/ws", root}}, d+"/ws")
		if err == nil || !strings.Contains(err.Error(), "git's storage") || !strings.Contains(err.Error(), root) {
			t.Errorf("root %s: err = %v", root, err)
		}
		if _, err := s.plan(Policy{Preset: ReadOnly, WritableRoots: []string{root}}, d+"/ws"); err != nil {
			t.Errorf("read-only with %s visible: %v", root, err)
		}
	}
}
