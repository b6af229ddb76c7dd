package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coding-agent/coding-agent/sandbox"
	"github.com/coding-agent/coding-agent/session/mcp"
	"github.com/coding-agent/coding-agent/session/mcp/mcptest"
)

// asMainEnv makes the test binary act as the coding-agent binary, so that
// end-to-end tests run the real main (built with -race when the tests are).
const asMainEnv = "CODING_AGENT_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	sandbox.MaybeRunHelper()
	mcp.MaybeRunSupervisor()
	mcptest.MaybeRunFixture()
	if os.Getenv(asMainEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// agentCmd returns a command that runs the real program with args.
func agentCmd(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), asMainEnv+"=1")
	return cmd
}

// runCLI runs the program in-process and returns exit status and output.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestVersionAndHelp(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, out, _ := runCLI(t, args...)
		if code != 0 || !strings.HasPrefix(out, "coding-agent ") {
			t.Errorf("%v: code %d, out %q", args, code, out)
		}
	}
	for _, args := range [][]string{{"--help"}, {"help"}, {"-h"}} {
		code, out, _ := runCLI(t, args...)
		if code != 0 || !strings.Contains(out, "coding-agent tool NAME --json ARGS") {
			t.Errorf("%v: code %d, out %q", args, code, out)
		}
	}
}

func TestToolCommand(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	for _, test := range []struct {
		name     string
		args     []string
		code     int
		stdout   string // substring of the result's first text, when code < 2
		stderr   string // substring of stderr
		noResult bool
	}{
		{name: "read", args: []string{"tool", "read", "--json", `{"path":"go.mod"}`}, stdout: "module example.com/x"},
		{name: "read missing file", args: []string{"tool", "read", "--json", `{"path":"nope.txt"}`}, code: 1, stdout: "nope.txt"},
		{name: "validation error names the field", args: []string{"tool", "read", "--json", `{"path":"go.mod","offset":0}`}, code: 1, stdout: "offset"},
		{name: "write denied under read-only", args: []string{"tool", "write", "--json", `{"path":"n.txt","content":"x"}`}, code: 1, stdout: "read-only"},
		{name: "unknown tool", args: []string{"tool", "grep", "--json", `{}`}, code: 2, stderr: "read, bash, edit, write", noResult: true},
		{name: "bad json", args: []string{"tool", "read", "--json", `{"path":`}, code: 2, stderr: "not valid JSON", noResult: true},
		{name: "bad preset", args: []string{"tool", "read", "--preset", "yolo", "--json", `{"path":"go.mod"}`}, code: 2, stderr: "preset", noResult: true},
		{name: "unknown flag", args: []string{"tool", "read", "--bogus"}, code: 2, stderr: "bogus", noResult: true},
		{name: "unknown command", args: []string{"frobnicate"}, code: 2, stderr: "unknown command", noResult: true},
	} {
		t.Run(test.name, func(t *testing.T) {
			args := append(test.args, "--cwd", dir, "--data-dir", data)
			if test.name == "unknown command" {
				args = test.args
			}
			code, out, errOut := runCLI(t, args...)
			if code != test.code {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, test.code, out, errOut)
			}
			if !strings.Contains(errOut, test.stderr) {
				t.Errorf("stderr %q does not contain %q", errOut, test.stderr)
			}
			if test.noResult {
				if out != "" {
					t.Errorf("stdout %q, want nothing", out)
				}
				return
			}
			var res struct {
				Content []struct{ Type, Text string }
				IsError bool
				Details map[string]any
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("stdout is not one JSON result: %v\n%s", err, out)
			}
			if res.IsError != (test.code == 1) || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, test.stdout) {
				t.Errorf("result %+v, want isError=%v and text containing %q", res, test.code == 1, test.stdout)
			}
			if _, err := os.Stat(filepath.Join(dir, "n.txt")); err == nil {
				t.Errorf("n.txt was written")
			}
		})
	}
}

// TestBinaryExitCodes runs the real program as a process.
func TestBinaryExitCodes(t *testing.T) {
	dir := t.TempDir()
	for _, test := range []struct {
		args []string
		code int
	}{
		{[]string{"--version"}, 0},
		{[]string{"tool", "read", "--cwd", dir, "--json", `{"path":"missing"}`}, 1},
		{[]string{"tool", "nope"}, 2},
	} {
		cmd := agentCmd(t, test.args...)
		out, err := cmd.Output()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != test.code {
			t.Errorf("%v: exit %d, want %d (stdout %q)", test.args, code, test.code, out)
		}
	}
}

// TestNodeClients drives the real binary with unmodified real clients: the
// official ACP TypeScript SDK (NDJSON) and vscode-jsonrpc (Content-Length).
func TestNodeClients(t *testing.T) {
	clients := nodeClients(t)
	node, _ := exec.LookPath("node")
	for _, script := range []string{"acp-client.mjs", "lsp-client.mjs", "editor-client.mjs", "plain-client.mjs"} {
		t.Run(script, func(t *testing.T) {
			ws := t.TempDir()
			for name, content := range map[string]string{"hello.txt": "hello world\n", "a.txt": "one\n", "b.txt": "keep\n"} {
				if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command(node, filepath.Join(clients, script), os.Args[0], ws, t.TempDir())
			cmd.Env = append(os.Environ(), asMainEnv+"=1")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", script, err, out)
			}
			t.Logf("%s", out)
		})
	}
}

// nodeClients returns the directory of the Node test clients, skipping the
// test when their packages are not installed (failing under CI).
func nodeClients(t *testing.T) string {
	t.Helper()
	clients, err := filepath.Abs("../../test/clients")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(clients, "node_modules")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("test/clients/node_modules is missing: .ci/run must run npm ci there")
		}
		t.Skip("test/clients/node_modules is missing: run `npm ci` in test/clients")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is required for the end-to-end client tests")
	}
	return clients
}

// TestServeFlags checks the serve flags end to end: --trace records the
// wire, --framing forces a framing, and bad values are usage errors.
func TestServeFlags(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "wire.log")
	cmd := agentCmd(t, "serve", "--data-dir", t.TempDir(), "--trace", trace, "--framing", "header", "--log-level", "error")
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`
	cmd.Stdin = strings.NewReader(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "Content-Length: ") || !strings.Contains(string(out), `"protocolVersion":1`) {
		t.Errorf("answer %q, want a Content-Length framed initialize result", out)
	}
	b, err := os.ReadFile(trace)
	if err != nil || !strings.Contains(string(b), `"method":"initialize"`) || !strings.Contains(string(b), `"agentInfo"`) {
		t.Errorf("trace %q (%v): want both directions", b, err)
	}
	for _, args := range [][]string{{"serve", "--framing", "xml"}, {"serve", "--max-message-bytes", "0"}, {"serve", "--log-level", "loud"}, {"serve", "extra"}, {"serve", "--preset", "yolo"}, {"serve", "--approval-timeout", "-1s"}} {
		if code, _, stderr := runCLI(t, args...); code != 2 || stderr == "" {
			t.Errorf("%q: exit %d, stderr %q; want a usage error", args, code, stderr)
		}
	}
}
