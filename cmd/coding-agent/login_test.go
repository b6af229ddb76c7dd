package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coding-agent/coding-agent/session/models/modeltest"
)

// TestLoginThenPrint: `coding-agent login` stores a key read from stdin
// (mode 0600); --print then uses it with no key in the environment; the key
// is in no command's environment, sandboxed or not, and never on stderr;
// `coding-agent logout` removes it.
func TestLoginThenPrint(t *testing.T) {
	const secret = "sk-ant-test-LOGIN-9d2e"
	dataDir := t.TempDir()
	login := agentCmd(t, "login", "--provider", "anthropic", "--data-dir", dataDir)
	login.Env = modelEnv(t, "", nil)
	login.Stdin = strings.NewReader(secret + "\n")
	out, err := login.CombinedOutput()
	if err != nil {
		t.Fatalf("login: %v\n%s", err, out)
	}
	if strings.Contains(string(out), secret) || !strings.Contains(string(out), "ANTHROPIC_API_KEY") {
		t.Errorf("login output %q", out)
	}
	p := filepath.Join(dataDir, "credentials.json")
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v %v", err, fi)
	}

	for _, preset := range []string{"full-access", "workspace-write"} {
		t.Run(preset, func(t *testing.T) {
			srv := modeltest.NewAnthropicServer(t, modeltest.Script{
				{Steps: []modeltest.Step{modeltest.Tool("c1", "bash", `{"command":"env; echo ENV-DONE"}`)}},
				{Steps: []modeltest.Step{modeltest.Text("Done.")}},
			})
			cmd := agentCmd(t, "--tools", "bash", "--preset", preset, "--cwd", t.TempDir(), "--data-dir", dataDir, "--log-level", "debug", "--print", "show env")
			cmd.Env = append(modelEnv(t, "", nil), "ANTHROPIC_BASE_URL="+srv.BaseURL)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("--print with the stored key: %v\n%s", err, out)
			}
			if strings.Contains(string(out), secret) {
				t.Errorf("the key reached the output:\n%s", out)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 || reqs[0].Header.Get("X-Api-Key") != secret {
				t.Fatalf("%d requests; the stored key was not used", len(reqs))
			}
			body := string(reqs[1].Body)
			if !strings.Contains(body, "ENV-DONE") {
				if preset == "workspace-write" && strings.Contains(body, "sandbox") {
					t.Skipf("no sandbox here: %.300s", body)
				}
				t.Fatalf("the command's output is not in the tool result: %.500s", body)
			}
			if strings.Contains(body, secret) {
				t.Errorf("the stored key is in the environment of a %s command", preset)
			}
		})
	}

	logout := agentCmd(t, "logout", "--data-dir", dataDir)
	if out, err := logout.CombinedOutput(); err != nil || !strings.Contains(string(out), "Removed") {
		t.Fatalf("logout: %v %s", err, out)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("credentials left after logout: %v", err)
	}
	cmd := agentCmd(t, "--tools", "", "--data-dir", dataDir, "--print", "hi")
	cmd.Env = modelEnv(t, "", nil)
	out, err = cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "coding-agent login") {
		t.Errorf("--print after logout: %v %s", err, out)
	}
}

func TestLoginUsage(t *testing.T) {
	for _, args := range [][]string{
		{"login", "--data-dir", "DATA"},                         // no provider without a terminal
		{"login", "--provider", "gemini", "--data-dir", "DATA"}, // unknown provider
		{"login", "--data-dir", "DATA", "sk-on-the-command-line"},
	} {
		dir := t.TempDir()
		for i := range args {
			if args[i] == "DATA" {
				args[i] = dir
			}
		}
		code, _, stderr := runCLI(t, args...)
		if code != exitUsage || !strings.Contains(stderr, "login: ") {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "credentials.json")); err == nil {
			t.Errorf("%v stored credentials", args)
		}
	}
}
