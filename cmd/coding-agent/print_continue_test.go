package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/coding-agent/coding-agent/session/models/modeltest"
)

// TestPrintContinue: `--print --continue` continues the newest session of
// the directory (the model gets the earlier turn), `--resume ID` a given
// one, and an unknown id is a usage error.
func TestPrintContinue(t *testing.T) {
	ws, data := t.TempDir(), t.TempDir()
	srv := modeltest.NewAnthropicServer(t, modeltest.Script{
		{Steps: []modeltest.Step{modeltest.Text("Noted: the word is PELICAN.")}},
		{Steps: []modeltest.Step{modeltest.Text("It was PELICAN.")}},
	})
	env := append(os.Environ(), asMainEnv+"=1", "OPENAI_API_KEY=", "OPENAI_BASE_URL=", "ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL="+srv.BaseURL, "CODING_AGENT_MODEL=anthropic/claude-sonnet-4-5")
	run := func(args ...string) (string, int) {
		cmd := exec.Command(os.Args[0], append([]string{"--cwd", ws, "--data-dir", data}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	if out, code := run("--print", "remember the word PELICAN"); code != 0 || !strings.Contains(out, "Noted") {
		t.Fatalf("first turn: exit %d\n%s", code, out)
	}
	if out, code := run("--continue", "--print", "which word?"); code != 0 || !strings.Contains(out, "It was PELICAN.") {
		t.Fatalf("--continue: exit %d\n%s", code, out)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "remember the word PELICAN") {
		t.Errorf("the continued turn did not carry the earlier one: %d requests", len(reqs))
	}
	if out, code := run("--resume", "sess_nope", "--print", "x"); code != exitUsage || !strings.Contains(out, "sess_nope") {
		t.Errorf("--resume of an unknown id: exit %d\n%s", code, out)
	}
	if out, code := run("--continue", "--resume", "x", "--print", "x"); code != exitUsage {
		t.Errorf("--continue with --resume: exit %d\n%s", code, out)
	}
}
