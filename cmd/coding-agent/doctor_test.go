package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctor: with a key and a data directory, doctor reports ok lines
// (the key named, never shown) and exits 0; a configured MCP server that
// cannot start, or no credentials, make it exit 1 naming the problem.
func TestDoctor(t *testing.T) {
	const secret = "sk-ant-doctor-SECRET-77"
	dataDir := t.TempDir()
	run := func(env ...string) (int, string) {
		cmd := agentCmd(t, "doctor", "--data-dir", dataDir)
		cmd.Env = append(modelEnv(t, "", nil), env...)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out), secret) {
			t.Errorf("doctor printed the key:\n%s", out)
		}
		return code, string(out)
	}
	code, out := run("ANTHROPIC_API_KEY=" + secret)
	for _, want := range []string{"sandbox", "ok    data dir", "ANTHROPIC_API_KEY (environment)", "ok    model        anthropic/", "mcp"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	sandboxOK := !strings.Contains(out, "FAIL  sandbox")
	if sandboxOK && code != 0 {
		t.Errorf("exit %d with nothing wrong:\n%s", code, out)
	}

	code, out = run()
	if code != 1 || !strings.Contains(out, "FAIL  credentials  none found") || !strings.Contains(out, "coding-agent login") {
		t.Errorf("no credentials: exit %d\n%s", code, out)
	}

	cfg := `{"mcpServers": {"broken": {"command": "/nonexistent/mcp-server"}}, "mcpStartTimeoutSeconds": 5}`
	if err := os.WriteFile(filepath.Join(dataDir, "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out = run("ANTHROPIC_API_KEY=" + secret)
	if code != 1 || !strings.Contains(out, `FAIL  mcp`) || !strings.Contains(out, `"broken"`) {
		t.Errorf("a broken MCP server: exit %d\n%s", code, out)
	}
}
