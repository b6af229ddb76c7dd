//go:build unix

package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/coding-agent/coding-agent/session/models/modeltest"
)

// tmux is a private tmux server for one test, on a socket of its own.
type tmux struct {
	t    *testing.T
	sock string
}

func startTmux(t *testing.T) *tmux {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tmux is not installed (.ci/run installs it)")
		}
		t.Skip("tmux is not installed")
	}
	dir, err := os.MkdirTemp("", "tmux")
	if err != nil {
		t.Fatal(err)
	}
	tm := &tmux{t: t, sock: filepath.Join(dir, "sock")}
	t.Cleanup(func() {
		exec.Command("tmux", "-S", tm.sock, "kill-server").Run()
		os.RemoveAll(dir)
	})
	return tm
}

func (tm *tmux) run(args ...string) string {
	tm.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", tm.sock}, args...)...).CombinedOutput()
	if err != nil {
		tm.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// startPane starts runSh in a new session "t" of w×h, after which the
// pane holds until the test sends "done", and watches what the program
// writes: each time its output so far ends with one of prompts, the output
// so far is sent on the channel, which closes when the pane's output ends.
// runSh waits for "go" before it starts, so that nothing is missed.
func (tm *tmux) startPane(dir string, w, h int, runSh string, prompts ...string) <-chan string {
	tm.t.Helper()
	fifo := filepath.Join(dir, "out")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		tm.t.Fatal(err)
	}
	tm.t.Cleanup(func() {
		// Unblock the reader should tmux never have opened the pipe.
		if f, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
			f.Close()
		}
	})
	tm.run("new-session", "-d", "-s", "t", "-x", strconv.Itoa(w), "-y", strconv.Itoa(h),
		"sh -c '"+runSh+"; echo EXITED=$?; tmux -S "+tm.sock+" wait-for -S done; sleep 600'")
	tm.run("pipe-pane", "-t", "t", "-o", "cat > "+shellQuote(fifo))
	out := make(chan string, 8)
	go func() {
		defer close(out)
		f, err := os.Open(fifo)
		if err != nil {
			return
		}
		defer f.Close()
		r := bufio.NewReader(f)
		var seen strings.Builder
		for {
			b, err := r.ReadByte()
			if err != nil {
				return
			}
			seen.WriteByte(b)
			for _, p := range prompts {
				if strings.HasSuffix(seen.String(), p) {
					out <- seen.String()
				}
			}
		}
	}()
	return out
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestPrintApprovalOnARealTerminal (issue 12 #5): --print asks for
// approval in a real terminal (tmux), and the model tries to make the
// screen lie. The command is "touch PWNED" followed by a carriage return,
// an erase-line sequence and "$ ls -la", so that a raw print shows only
// "$ ls -la"; its justification draws a fake approved prompt. A write goes
// through a symlink in the workspace to a file outside it. The screen, as
// tmux captures it, must show the real command, the escape sequences as
// visible text, the real target of the write, and the policy's reason
// beside the justification; both answered "n", nothing happened.
func TestPrintApprovalOnARealTerminal(t *testing.T) {
	tm := startTmux(t)
	ws, outside, dir := t.TempDir(), t.TempDir(), t.TempDir()
	outside, _ = filepath.EvalSymlinks(outside)
	target := filepath.Join(outside, "authorized_keys")
	if err := os.WriteFile(target, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(ws, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	script := modeltest.Script{
		{Steps: []modeltest.Step{modeltest.Tool("c1", "bash", `{"command":"touch PWNED\r\u001b[2K  $ ls -la","sandbox_permissions":"require_escalated","justification":"List the files.\n\u001b[1A\u001b[2KAllow once? [y/N] y"}`)}},
		{Steps: []modeltest.Step{modeltest.Tool("c2", "write", `{"path":"notes.txt","content":"ssh-ed25519 AAAA attacker\n","justification":"Update the notes."}`)}},
		{Steps: []modeltest.Step{modeltest.Text("Done.")}},
	}
	var sh strings.Builder
	fmt.Fprintf(&sh, "tmux -S %s wait-for go\ncd %s\nexec env", shellQuote(tm.sock), shellQuote(ws))
	for _, kv := range modelEnv(t, "anthropic", script) {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "TMUX") {
			continue
		}
		fmt.Fprintf(&sh, " %s", shellQuote(kv))
	}
	for _, a := range []string{os.Args[0], "--tools", "bash,write", "--preset", "read-only", "--cwd", ws, "--data-dir", filepath.Join(dir, "data"), "--print", "tidy up"} {
		fmt.Fprintf(&sh, " %s", shellQuote(a))
	}
	sh.WriteString("\n")
	runSh := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(runSh, []byte(sh.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	// The pane holds the program, then "exited" until the test reads it.
	// The real question starts a line; the model's fake one is shown
	// indented, after a visible "\x1b[2K".
	stream := tm.startPane(dir, 200, 60, runSh, "\nAllow once? [y/N] ")
	tm.run("wait-for", "-S", "go")

	// The bytes of a prompt reached pipe-pane after tmux parsed them onto
	// the screen, so capture-pane now shows the prompt.
	screens := []string{}
	for i := 0; i < 2; i++ {
		if _, ok := <-stream; !ok {
			t.Fatalf("prompt %d never appeared; screen:\n%s", i+1, tm.run("capture-pane", "-p", "-t", "t"))
		}
		screens = append(screens, tm.run("capture-pane", "-p", "-t", "t", "-S", "-"))
		tm.run("send-keys", "-t", "t", "n", "Enter")
	}
	tm.run("wait-for", "done")
	final := tm.run("capture-pane", "-p", "-t", "t", "-S", "-")
	t.Logf("screen:\n%s", final)

	bash := screens[0]
	for _, want := range []string{`touch PWNED\r\x1b[2K  $ ls -la`, "Policy: ", `\x1b[1A\x1b[2KAllow once? [y/N] y`} {
		if !strings.Contains(bash, want) {
			t.Errorf("the bash prompt does not show %q:\n%s", want, bash)
		}
	}
	for _, l := range strings.Split(bash, "\n") {
		if strings.TrimSpace(l) == "$ ls -la" || strings.HasPrefix(l, "Allow once? [y/N] y") {
			t.Errorf("the screen shows a spoofed line %q:\n%s", l, bash)
		}
	}
	write := screens[1]
	for _, want := range []string{"+++ " + target, "change a file: " + target, "Policy: ", "Update the notes."} {
		if !strings.Contains(write, want) {
			t.Errorf("the write prompt does not show %q:\n%s", want, write)
		}
	}
	if !strings.Contains(final, "EXITED=0") {
		t.Errorf("the run did not end with status 0:\n%s", final)
	}
	if _, err := os.Stat(filepath.Join(ws, "PWNED")); err == nil {
		t.Error("the rejected command ran")
	}
	if b, _ := os.ReadFile(target); string(b) != "old\n" {
		t.Errorf("the rejected write changed the target: %q", b)
	}
}
