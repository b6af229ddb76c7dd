package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coding-agent/coding-agent/session/models/modeltest"
)

// turnScript is the model's side of the end-to-end prompt tests: a write
// (needs approval under read-only) and a read in one message, split at
// awkward places; the final answer; then a command that runs until the
// client cancels it.
func turnScript() modeltest.Script {
	return modeltest.Script{
		{Steps: []modeltest.Step{
			modeltest.Text("I'll create it."),
			modeltest.Tool("call_w", "write", `{"pa`, `th":"notes.txt",`, `"content":"hi\n","justif`, `ication":"You asked for notes.txt."}`),
			modeltest.Tool("call_r", "read", `{"path":"hel`, `lo.txt"}`),
		}},
		{Steps: []modeltest.Step{modeltest.Text("Done. hello.txt says: "), modeltest.Text("hello world")}},
		{Steps: []modeltest.Step{modeltest.Tool("call_s", "bash", `{"command":"sleep 1000"}`)}},
	}
}

// modelEnv points the binary at a fake model server of provider.
func modelEnv(t *testing.T, provider string, script modeltest.Script) []string {
	env := []string{asMainEnv + "=1", "CODING_AGENT_MODEL=", "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=", "OPENAI_BASE_URL=", "ANTHROPIC_BASE_URL="}
	switch provider {
	case "anthropic":
		srv := modeltest.NewAnthropicServer(t, script)
		env = append(env, "ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL="+srv.BaseURL, "CODING_AGENT_MODEL=anthropic/claude-sonnet-4-5")
	case "openai":
		srv := modeltest.NewOpenAIServer(t, script)
		env = append(env, "OPENAI_BASE_URL="+srv.BaseURL, "CODING_AGENT_MODEL=openai/qwen3-coder")
	}
	return append(os.Environ(), env...)
}

// TestNodePromptTurn drives a real turn (model → tool calls → approval →
// answer), a cancel and a reload after restart through the binary with the
// official ACP SDK, against each provider's streaming format.
func TestNodePromptTurn(t *testing.T) {
	clients := nodeClients(t)
	for _, provider := range []string{"anthropic", "openai"} {
		t.Run(provider, func(t *testing.T) {
			ws := t.TempDir()
			os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hello world\n"), 0o644)
			cmd := exec.Command("node", filepath.Join(clients, "acp-prompt.mjs"), os.Args[0], ws, t.TempDir())
			cmd.Env = modelEnv(t, provider, turnScript())
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			t.Logf("%s", out)
		})
	}
}

// TestPrintMode runs `coding-agent --print` against each provider: the
// answer on stdout, tool activity on stderr, no terminal so approvals are
// denied.
func TestPrintMode(t *testing.T) {
	for _, provider := range []string{"anthropic", "openai"} {
		t.Run(provider, func(t *testing.T) {
			ws := t.TempDir()
			os.WriteFile(filepath.Join(ws, "package.json"), []byte(`{"name":"demo"}`), 0o644)
			script := modeltest.Script{
				{Steps: []modeltest.Step{modeltest.Tool("c1", "read", `{"path":"package.json"}`), modeltest.Tool("c2", "write", `{"path":"x.txt","content":"x"}`)}},
				{Steps: []modeltest.Step{modeltest.Text("The package is called demo.")}},
			}
			cmd := agentCmd(t, "--tools", "read,write", "--print", "Summarize package.json.", "--cwd", ws, "--data-dir", t.TempDir())
			cmd.Env = modelEnv(t, provider, script)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v\nstderr: %s", err, stderr.String())
			}
			if got := stdout.String(); got != "The package is called demo.\n" {
				t.Errorf("stdout %q", got)
			}
			if e := stderr.String(); !strings.Contains(e, "✓ Read package.json") || !strings.Contains(e, "✗ Write x.txt") {
				t.Errorf("stderr lacks the tool activity:\n%s", e)
			}
			if _, err := os.Stat(filepath.Join(ws, "x.txt")); err == nil {
				t.Error("the write ran without approval")
			}
		})
	}
}

func TestPrintModeUsage(t *testing.T) {
	// A data directory that does not exist yet, in a place of the test's
	// own: root could create /nonexistent/dir.
	missing := filepath.Join(t.TempDir(), "nonexistent", "dir")
	for _, test := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"--tools", "read,grep", "--print", "hi"}, 2, `unknown tool "grep" (valid tools: read, bash, edit, write)`},
		{[]string{"--print", ""}, 2, "needs a prompt"},
		{[]string{"--preset", "x", "--print", "hi"}, 2, "preset"},
		{[]string{"--tools", "", "--print", "hi", "--data-dir", missing}, 1, "no model configured"},
		{[]string{"--model", "foo", "--print", "hi"}, 2, `unknown provider "foo"`},
		{[]string{"--model", "anthropic/", "--print", "hi"}, 2, "empty model name"},
	} {
		cmd := agentCmd(t, test.args...)
		cmd.Env = append(cmd.Env, "CODING_AGENT_MODEL=", "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=", "OPENAI_BASE_URL=")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if code != test.code || !strings.Contains(stderr.String(), test.stderr) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", test.args, code, stderr.String(), test.code, test.stderr)
		}
		if n := strings.Count(stderr.String(), "coding-agent: "); n != 1 {
			t.Errorf("%q: %d errors printed, want 1: %q", test.args, n, stderr.String())
		}
	}
	// A run that cannot prompt leaves no session behind.
	if ents, _ := os.ReadDir(filepath.Join(missing, "sessions")); len(ents) != 0 {
		t.Errorf("%d session files left by a run with no model", len(ents))
	}
}

// TestPrintPromptFromStdin: --print - reads the whole prompt from stdin.
func TestPrintPromptFromStdin(t *testing.T) {
	script := modeltest.Script{{Steps: []modeltest.Step{modeltest.Text("four")}}}
	cmd := agentCmd(t, "--tools", "", "--print", "-", "--cwd", t.TempDir(), "--data-dir", t.TempDir())
	srv := modeltest.NewAnthropicServer(t, script)
	cmd.Env = append(os.Environ(), asMainEnv+"=1", "OPENAI_API_KEY=", "OPENAI_BASE_URL=",
		"ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL="+srv.BaseURL, "CODING_AGENT_MODEL=anthropic/claude-sonnet-4-5")
	cmd.Stdin = strings.NewReader("what is\n2+2?\n")
	out, err := cmd.Output()
	if err != nil || strings.TrimSpace(string(out)) != "four" {
		t.Fatalf("--print -: %q, %v", out, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), `what is\n2+2?`) {
		t.Errorf("the model did not get the prompt from stdin: %d requests", len(reqs))
	}
}

// TestPrintModeCtrlC: SIGINT during a command ends the turn as cancelled,
// exit status 130.
func TestPrintModeCtrlC(t *testing.T) {
	script := modeltest.Script{{Steps: []modeltest.Step{modeltest.Tool("c1", "bash", `{"command":"sleep 1000"}`)}}}
	cmd := agentCmd(t, "--tools", "bash", "--print", "wait", "--cwd", t.TempDir(), "--data-dir", t.TempDir())
	cmd.Env = modelEnv(t, "anthropic", script)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	var seen strings.Builder
	for !strings.Contains(seen.String(), "→ Bash · sleep 1000") {
		n, err := stderr.Read(buf)
		if err != nil {
			t.Fatalf("stderr ended before the command ran: %q", seen.String())
		}
		seen.Write(buf[:n])
	}
	cmd.Process.Signal(os.Interrupt)
	go io.Copy(io.Discard, stderr)
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Errorf("exit %v, want status 130", err)
	}
}
