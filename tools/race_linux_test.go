package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// raceRounds is how many mutations each race attack makes. Run against
// the old code (check the path, then create and rename by name; see
// /work/notes/sec.md): with the race detector on tmpfs (as CI runs it)
// the first escape came at call 1 to 294 in 32 cases, one case of 32 not
// within 400; without it, on disk, at call 2 to 284 in 52 cases. 600 and
// 400 calls take one to three seconds per case on a loaded machine.
// CODING_AGENT_RACE_ROUNDS overrides it for longer runs.
func raceRounds(t *testing.T) int {
	if v := os.Getenv("CODING_AGENT_RACE_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("CODING_AGENT_RACE_ROUNDS=%q: %v", v, err)
		}
		return n
	}
	if raceEnabled {
		return 600
	}
	return 400
}

// raceDir returns a fresh directory for a race attack. With the race
// detector it is on tmpfs (/dev/shm) when there is one: on a disk file
// system every fsync of the tools waits for a journal commit holding the
// flipper's thousands of renames, and an instrumented call then cost
// 20 ms (32 s for the test). Without it, a disk directory: calls on tmpfs
// are so fast that few swaps land inside one, and the old code was hit
// only about once in 300 calls.
func raceDir(t *testing.T) string {
	t.Helper()
	var st unix.Statfs_t
	if raceEnabled && unix.Statfs("/dev/shm", &st) == nil && st.Type == unix.TMPFS_MAGIC {
		if d, err := os.MkdirTemp("/dev/shm", "coding-agent-race-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			if r, err := filepath.EvalSymlinks(d); err == nil {
				return r
			}
			return d
		}
	}
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// flipper swaps the names a and b (a directory and a symlink) with
// renameat2(RENAME_EXCHANGE) in a loop until stop is called, which joins
// the goroutine and returns how many swaps were made.
func flipper(t *testing.T, a, b string) (stop func() int) {
	t.Helper()
	if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
		t.Skipf("renameat2(RENAME_EXCHANGE) unsupported here: %v", err)
	}
	var (
		done  atomic.Bool
		flips int
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !done.Load() {
			if unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE) == nil {
				flips++
			}
		}
	}()
	return func() int {
		done.Store(true)
		wg.Wait()
		return flips
	}
}

// TestAttackMutationRace attacks write and edit with a concurrent swap of
// the directory they write into for a symlink out of the workspace, or
// into .git: every mutation must land in the workspace or fail, the file
// outside and .git/config stay byte for byte what they were, and a host
// `git status` runs nothing.
func TestAttackMutationRace(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	for _, tc := range []struct {
		name   string
		tool   string // write or edit
		target string // outside or git
	}{
		{"write outside", "write", "outside"},
		{"edit outside", "edit", "outside"},
		{"write git", "write", "git"},
		{"edit git", "edit", "git"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := raceDir(t)
			ws := filepath.Join(base, "ws")
			outside := filepath.Join(base, "outside")
			marker := filepath.Join(base, "fsmonitor-ran")
			if err := os.MkdirAll(filepath.Join(ws, "docs"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v\n%s", err, out)
			}
			gitConfig := filepath.Join(ws, ".git", "config")
			cfgBefore := readBack(t, gitConfig)

			// The file the tools write, and its twin where the link points.
			var name, start, oldText, newText, linkTarget string
			if tc.target == "git" {
				name, start = "config", cfgBefore
				oldText = "[core]\n"
				newText = "[core]\n\tfsmonitor = \"touch " + marker + "\"\n"
				linkTarget = filepath.Join(ws, ".git")
			} else {
				name, start = "f.txt", "hello\n"
				oldText, newText = "hello", "pwned"
				linkTarget = outside
				putFile(t, filepath.Join(outside, name), start)
			}
			putFile(t, filepath.Join(ws, "docs", name), start)
			link := filepath.Join(ws, "link")
			if err := os.Symlink(linkTarget, link); err != nil {
				t.Fatal(err)
			}
			outsideBefore := snapshot(t, outside)

			opts := Options{Preset: WorkspaceWrite}
			var tool Tool
			var args any
			path := filepath.Join("docs", name)
			if tc.tool == "write" {
				tool = newWrite(t, ws, opts)
				args = map[string]any{"path": path, "content": strings.Replace(start, oldText, newText, 1)}
			} else {
				tool = newEdit(t, ws, opts)
				args = editSpec{"path": path, "edits": edits(oldText, newText)}
			}

			stop := flipper(t, filepath.Join(ws, "docs"), link)
			rounds := raceRounds(t)
			ok, firstHit := 0, 0
			// escaped is the cheap per-call look for a hit.
			escaped := func() bool {
				if readBack(t, gitConfig) != cfgBefore {
					return true
				}
				for _, d := range []string{outside, filepath.Join(ws, ".git")} {
					ents, _ := os.ReadDir(d)
					for _, e := range ents {
						if strings.Contains(e.Name(), ".tmp-") {
							return true
						}
					}
				}
				b, err := os.ReadFile(filepath.Join(outside, "f.txt"))
				return tc.target == "outside" && (err != nil || string(b) != start)
			}
			for i := range rounds {
				// Put the original back (through whichever of the two
				// names is the directory now) so that every round
				// writes.
				for _, d := range []string{"docs", "link"} {
					p := filepath.Join(ws, d, name)
					if fi, err := os.Lstat(filepath.Join(ws, d)); err == nil && fi.IsDir() {
						os.WriteFile(p, []byte(start), 0o644)
					}
				}
				if _, err := execTool(t, tool, args); err == nil {
					ok++
				}
				if escaped() {
					firstHit = i + 1
					break
				}
			}
			flips := stop()
			t.Logf("%d %s calls, %d succeeded, %d swaps", rounds, tc.tool, ok, flips)
			if firstHit > 0 {
				t.Errorf("escaped at call %d", firstHit)
			}
			if flips == 0 {
				t.Fatal("the flipper never swapped: the test attacked nothing")
			}
			if ok == 0 {
				t.Fatal("no mutation succeeded: the test proves nothing")
			}
			if got := readBack(t, gitConfig); got != cfgBefore {
				t.Errorf(".git/config changed:\n%s", got)
			}
			if after := snapshot(t, outside); after != outsideBefore {
				t.Errorf("files outside the workspace changed:\nbefore %s\nafter  %s", outsideBefore, after)
			}
			for _, d := range []string{ws, filepath.Join(ws, ".git"), outside} {
				ents, _ := os.ReadDir(d)
				for _, e := range ents {
					if strings.Contains(e.Name(), ".tmp-") {
						t.Errorf("temp file %s left in %s", e.Name(), d)
					}
				}
			}
			// The host runs git in the workspace, as an editor or a prompt
			// would.
			cmd := exec.Command("git", "status", "--short")
			cmd.Dir = ws
			cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+base)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("git status: %v\n%s", err, out)
			}
			if _, err := os.Lstat(marker); err == nil {
				t.Error("a host git status ran the fsmonitor command written by the tool")
			}
		})
	}
}
