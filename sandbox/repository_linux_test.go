//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// repoAttack builds a repository without a `.git` name in src/evil: a
// config with a core.fsmonitor command (written first, so that the last
// piece is what completes the repository), then the pieces in order.
type repoAttack struct {
	name   string
	pieces []string // shell commands run in src/evil, one per piece
	common bool     // the config goes to src/common (the commondir variant)
}

// repoAttacks are the orders and the ways the pieces can come in: every
// order of HEAD, objects and refs, made directly (open, mkdir) or moved
// and linked into place (rename, symlink, hard link); HEAD and commondir
// in both orders.
func repoAttacks() []repoAttack {
	direct := map[string]string{
		"HEAD":    "echo 'ref: refs/heads/main' > HEAD",
		"objects": "mkdir objects",
		"refs":    "mkdir refs",
	}
	moved := map[string]string{
		"HEAD":    "echo 'ref: refs/heads/main' > ../prep1/HEAD && ln ../prep1/HEAD HEAD",
		"objects": "mkdir ../prep2/objects && mv ../prep2/objects objects",
		"refs":    "mkdir ../prep3/refs && ln -s ../prep3/refs refs",
	}
	var out []repoAttack
	perms := [][]string{
		{"HEAD", "objects", "refs"}, {"HEAD", "refs", "objects"}, {"objects", "HEAD", "refs"},
		{"objects", "refs", "HEAD"}, {"refs", "HEAD", "objects"}, {"refs", "objects", "HEAD"},
	}
	for _, p := range perms {
		for _, way := range []struct {
			name string
			cmds map[string]string
		}{{"direct", direct}, {"moved and linked", moved}} {
			a := repoAttack{name: strings.Join(p, ", ") + " (" + way.name + ")"}
			for _, piece := range p {
				a.pieces = append(a.pieces, way.cmds[piece])
			}
			out = append(out, a)
		}
	}
	head, common := "echo 'ref: refs/heads/main' > HEAD", "echo ../common > commondir"
	out = append(out,
		repoAttack{name: "HEAD, commondir", pieces: []string{head, common}, common: true},
		repoAttack{name: "commondir, HEAD", pieces: []string{common, head}, common: true},
		repoAttack{name: "commondir, HEAD (symlink, rename)", common: true,
			pieces: []string{"echo ../common > ../prep1/cd && mv ../prep1/cd commondir", "ln -s refs/heads/main HEAD"}})
	return out
}

// script is the attack as bash runs it in src/ of the workspace.
func (a repoAttack) script(marker string) string {
	cfg := `printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = "touch ` + marker + `; false"\n' > config`
	s := "mkdir -p evil prep1 prep2 prep3 common/objects common/refs && cd evil && "
	if a.common {
		// The config is read from the common dir; worktree settings from
		// the repository's own config.worktree.
		s += `printf '[core]\n\trepositoryformatversion = 1\n\tbare = false\n[extensions]\n\tworktreeConfig = true\n' > ../common/config && ` +
			`printf '[core]\n\tworktree = '"$PWD"'\n\tfsmonitor = "touch ` + marker + `; false"\n' > config.worktree`
	} else {
		s += cfg
	}
	for _, p := range a.pieces {
		s += "\n" + p
	}
	return s + "\ncd .."
}

// hostGitStatus runs `git status` in dir on the host, as an editor would,
// with no user or system configuration.
func hostGitStatus(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command("git", "status", "--short")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// TestRepositoryLookalike: no order of the pieces makes a repository
// under another name than `.git` in a writable root, in the full and the
// degraded sandbox: a host `git status` run in it while the command still
// runs starts no fsmonitor command. Without the sandbox each one does.
func TestRepositoryLookalike(t *testing.T) {
	testSandbox(t)
	for _, a := range repoAttacks() {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			for _, mode := range []string{"sandbox", "degraded", "plain"} {
				f := newFixture(t, true)
				marker := f.dir + "/fsmonitor-ran"
				var status string
				held, out := live(t, mode, f, a.script(marker), func() bool {
					status = hostGitStatus(t, f.ws+"/src/evil")
					return !exists(marker)
				})
				switch {
				case mode != "plain" && !held:
					t.Errorf("%s: BREACH: a host git status in src/evil ran the fsmonitor command:\n%s\ngit status: %s", mode, out, status)
				case mode == "plain" && held:
					t.Errorf("baseline without the sandbox: git ran nothing; the check cannot fail:\n%s\ngit status: %s", out, status)
				}
				if mode != "plain" && !strings.Contains(out, "Operation not permitted") {
					t.Errorf("%s: the last piece was not refused with EPERM:\n%s", mode, out)
				}
			}
		})
	}
}

// TestRepositoryLookalikeScan: a repository under another name that is
// already in a writable root is protected like a `.git`: read-only.
func TestRepositoryLookalikeScan(t *testing.T) {
	testSandbox(t)
	f := newFixture(t, true)
	bare := filepath.Join(f.ws, "src", "project.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v %s", err, out)
	}
	before := read(bare + "/config")
	r := run(t, "sandbox", f, WorkspaceWrite, "echo '[core] fsmonitor = evil' >> src/project.git/config; touch src/project.git/x; echo rc=$?", 30e9)
	if read(bare+"/config") != before || exists(bare+"/x") {
		t.Errorf("BREACH: the bare repository was written:\n%s", r.out)
	}
	if !strings.HasSuffix(r.out, "rc=1\n") {
		t.Errorf("want rc=1, got:\n%s", r.out)
	}
}

// TestRepositoryLookalikeRace: the pieces created at the same moment by
// three processes, in 200 directories: none ends up with all three (each
// check and creation holds the directory's lock).
func TestRepositoryLookalikeRace(t *testing.T) {
	testSandbox(t)
	for _, mode := range []string{"sandbox", "degraded"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			script := `cd src && for i in $(seq 200); do mkdir d$i; { : > d$i/HEAD & mkdir d$i/objects & mkdir d$i/refs & wait; } 2>/dev/null; done; echo done`
			r := run(t, mode, f, WorkspaceWrite, script, 2*60e9)
			if !strings.HasSuffix(r.out, "done\n") {
				t.Fatalf("exit %d:\n%s", r.code, r.out)
			}
			complete, partial := 0, 0
			for i := 1; i <= 200; i++ {
				d := f.ws + "/src/d" + strconv.Itoa(i)
				n := 0
				for _, p := range []string{"HEAD", "objects", "refs"} {
					if exists(d + "/" + p) {
						n++
					}
				}
				switch n {
				case 3:
					complete++
				case 2:
					partial++
				}
			}
			if complete > 0 || partial != 200 {
				t.Errorf("BREACH: %d of 200 directories got all three pieces, %d got two (want 0 and 200)", complete, partial)
			}
		})
	}
}
