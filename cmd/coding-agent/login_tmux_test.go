//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoginOnARealTerminal: `coding-agent login` in a terminal (tmux)
// asks for the provider and the key; the key typed is not shown on the
// screen, and it is stored.
func TestLoginOnARealTerminal(t *testing.T) {
	const secret = "sk-ant-tty-SECRET-31b"
	tm := startTmux(t)
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	var sh strings.Builder
	fmt.Fprintf(&sh, "tmux -S %s wait-for go\nexec env", shellQuote(tm.sock))
	for _, kv := range modelEnv(t, "", nil) {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "TMUX") {
			fmt.Fprintf(&sh, " %s", shellQuote(kv))
		}
	}
	fmt.Fprintf(&sh, " %s login --data-dir %s\n", shellQuote(os.Args[0]), shellQuote(dataDir))
	runSh := filepath.Join(dir, "run.sh")
	os.WriteFile(runSh, []byte(sh.String()), 0o755)
	prompts := tm.startPane(dir, 160, 40, runSh, "Choose 1, 2 or 3 [1]: ", "(not shown): ")
	tm.run("wait-for", "-S", "go")
	for _, answer := range []string{"1", secret} {
		if _, ok := <-prompts; !ok {
			t.Fatalf("no prompt; screen:\n%s", tm.run("capture-pane", "-p", "-t", "t"))
		}
		tm.run("send-keys", "-t", "t", "-l", answer)
		tm.run("send-keys", "-t", "t", "Enter")
	}
	tm.run("wait-for", "done")
	screen := tm.run("capture-pane", "-p", "-t", "t", "-S", "-")
	t.Logf("screen:\n%s", screen)
	if strings.Contains(screen, secret) {
		t.Errorf("the key is shown on the screen")
	}
	if !strings.Contains(screen, "Stored ANTHROPIC_API_KEY") || !strings.Contains(screen, "EXITED=0") {
		t.Errorf("login did not store the key")
	}
	if b, err := os.ReadFile(filepath.Join(dataDir, "credentials.json")); err != nil || !strings.Contains(string(b), secret) {
		t.Errorf("credentials: %v %s", err, b)
	}
}
