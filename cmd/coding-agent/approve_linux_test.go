package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/coding-agent/coding-agent/session/models/modeltest"
)

// openPTY returns a new pseudo-terminal pair.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// TestPrintModeAsksOnTheTerminal: with a terminal attached, --print shows
// the change and the justification and asks y/N; only y allows it.
func TestPrintModeAsksOnTheTerminal(t *testing.T) {
	for _, answer := range []string{"y", "n"} {
		t.Run(answer, func(t *testing.T) {
			ws := t.TempDir()
			script := modeltest.Script{
				{Steps: []modeltest.Step{modeltest.Tool("c1", "write", `{"path":"x.txt","content":"hello\n","justification":"Sie haben darum gebeten."}`)}},
				{Steps: []modeltest.Step{modeltest.Text("Done.")}},
			}
			master, tty := openPTY(t)
			cmd := agentCmd(t, "--tools", "write", "--print", "write x.txt", "--cwd", ws, "--data-dir", t.TempDir())
			cmd.Env = modelEnv(t, "anthropic", script)
			cmd.Stdin = tty
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() {
				// Drain the terminal's echo so it never blocks.
				buf := make([]byte, 1024)
				for {
					if _, err := master.Read(buf); err != nil {
						return
					}
				}
			}()
			var shown strings.Builder
			r := bufio.NewReader(stderr)
			for !strings.Contains(shown.String(), "Allow once? [y/N]") {
				b, err := r.ReadByte()
				if err != nil {
					t.Fatalf("no prompt on stderr: %q", shown.String())
				}
				shown.WriteByte(b)
			}
			if s := shown.String(); !strings.Contains(s, "+hello") || !strings.Contains(s, "Sie haben darum gebeten.") {
				t.Errorf("the prompt does not show the diff and the justification:\n%s", s)
			}
			master.Write([]byte(answer + "\n"))
			go r.WriteTo(io.Discard)
			if err := cmd.Wait(); err != nil {
				t.Fatal(err)
			}
			_, statErr := os.Stat(filepath.Join(ws, "x.txt"))
			if written := statErr == nil; written != (answer == "y") {
				t.Errorf("answer %q: written = %v", answer, written)
			}
		})
	}
}
