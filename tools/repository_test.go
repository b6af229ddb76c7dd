package tools

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepositoryLookalike attacks with the write tool alone: a config with
// a core.fsmonitor command, then HEAD, objects/ and refs/ (or HEAD and
// commondir) in every order, under every preset with an approver that
// allows all. The last piece is a PermissionError and a host `git status`
// in the directory runs nothing. The baseline (the same files made
// without the tool) shows that git would have run the command.
func TestRepositoryLookalike(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required for this test")
	}
	pieces := map[string]string{"HEAD": "HEAD", "objects": "objects/info/packs", "refs": "refs/heads/.keep", "commondir": "commondir"}
	content := map[string]string{"HEAD": "ref: refs/heads/main\n", "commondir": "../common\n"}
	orders := [][]string{
		{"HEAD", "objects", "refs"}, {"HEAD", "refs", "objects"}, {"objects", "HEAD", "refs"},
		{"objects", "refs", "HEAD"}, {"refs", "HEAD", "objects"}, {"refs", "objects", "HEAD"},
		{"HEAD", "commondir"}, {"commondir", "HEAD"},
	}
	for _, order := range orders {
		for _, preset := range []Preset{FullAccess, WorkspaceWrite, ReadOnly} {
			for _, mode := range []string{"tool", "baseline"} {
				t.Run(strings.Join(order, ",")+"/"+string(preset)+"/"+mode, func(t *testing.T) {
					t.Parallel()
					base, err := filepath.EvalSymlinks(t.TempDir())
					if err != nil {
						t.Fatal(err)
					}
					cwd := filepath.Join(base, "ws")
					marker := filepath.Join(base, "fsmonitor-ran")
					cfg := "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = \"touch " + marker + "; false\"\n"
					putFile(t, filepath.Join(cwd, "common", "objects", "x"), "")
					putFile(t, filepath.Join(cwd, "common", "refs", "x"), "")
					putFile(t, filepath.Join(cwd, "common", "config"), "[core]\n\trepositoryformatversion = 1\n\tbare = false\n[extensions]\n\tworktreeConfig = true\n")
					files := []string{"config", "config.worktree"}
					contents := []string{cfg, "[core]\n\tworktree = " + filepath.Join(cwd, "evil") + "\n\tfsmonitor = \"touch " + marker + "; false\"\n"}
					for _, p := range order {
						files, contents = append(files, pieces[p]), append(contents, content[p])
					}
					w := newWrite(t, cwd, Options{Preset: preset, Approver: &recorder{}})
					var last error
					for i, f := range files {
						p := filepath.Join("evil", f)
						if mode == "baseline" {
							putFile(t, filepath.Join(cwd, p), contents[i])
							continue
						}
						_, err := execTool(t, w, map[string]any{"path": p, "content": contents[i]})
						if i < len(files)-1 && err != nil {
							t.Fatalf("write %s: %v", p, err)
						}
						last = err
					}
					cmd := exec.Command("git", "status", "--short")
					cmd.Dir = filepath.Join(cwd, "evil")
					cmd.Env = append(os.Environ(), "HOME="+base, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CEILING_DIRECTORIES="+base)
					out, _ := cmd.CombinedOutput()
					_, ran := os.Lstat(marker)
					if mode == "baseline" {
						if ran != nil {
							t.Fatalf("baseline: git ran no fsmonitor command; the check cannot fail: %s", out)
						}
						return
					}
					var pe *PermissionError
					if !errors.As(last, &pe) || !strings.Contains(last.Error(), "git repository") {
						t.Errorf("last piece %s: got %v, want a PermissionError naming the repository", files[len(files)-1], last)
					}
					if ran == nil {
						t.Errorf("BREACH: a host git status in evil ran the fsmonitor command: %s", out)
					}
				})
			}
		}
	}
}
