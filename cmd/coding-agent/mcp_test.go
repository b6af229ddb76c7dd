//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/coding-agent/coding-agent/session/mcp/mcptest"
	"github.com/coding-agent/coding-agent/session/models/modeltest"
)

// mcpServersDir is where .ci/run installs the pinned npm MCP servers.
func mcpServer(t *testing.T, pkg string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "test", "mcp", "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing: .ci/run must run npm ci in test/mcp", pkg)
		}
		t.Skipf("%s is missing: run `npm ci` in test/mcp", pkg)
	}
	return p
}

type nameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func envList(kvs ...string) []nameValue {
	out := []nameValue{}
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		out = append(out, nameValue{k, v})
	}
	return out
}

// TestNodeMCPTurn runs prompt turns whose model calls MCP tools of real
// servers (server-filesystem, server-everything from npm, pinned) and of
// the SDK fixture, through the binary, with the official ACP SDK as the
// client; see test/clients/acp-mcp.mjs for what it checks. Afterwards no
// server process is left.
func TestNodeMCPTurn(t *testing.T) {
	clients := nodeClients(t)
	fs := mcpServer(t, "server-filesystem")
	everything := mcpServer(t, "server-everything")
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	data := t.TempDir()
	m := mcptest.Marker(t)
	// config.json: a server that hangs (the start timeout), and an "fs"
	// that the session's own "fs" overrides.
	cfg := map[string]any{
		"mcpServers": map[string]any{
			"hangs": map[string]any{"command": os.Args[0], "startTimeoutSeconds": 2, "env": map[string]string{mcptest.FixtureEnv: "hang", strings.Split(m, "=")[0]: strings.SplitN(m, "=", 2)[1]}},
			"fs":    map[string]any{"command": "false"},
		},
	}
	b, _ := json.Marshal(cfg)
	os.WriteFile(filepath.Join(data, "config.json"), b, 0o600)
	servers := []map[string]any{
		{"name": "fs", "command": "node", "args": []string{fs, ws}, "env": envList(m)},
		{"name": "everything", "command": "node", "args": []string{everything, "stdio"}, "env": envList(m)},
		{"name": "fx", "command": os.Args[0], "args": []string{}, "env": envList(mcptest.Fixture("serve"), m)},
		{"name": "quits", "command": os.Args[0], "args": []string{}, "env": envList(mcptest.Fixture("exit"), m)},
	}
	b, _ = json.Marshal(servers)
	serversFile := filepath.Join(t.TempDir(), "servers.json")
	os.WriteFile(serversFile, b, 0o600)

	script := modeltest.Script{
		{Steps: []modeltest.Step{
			modeltest.Tool("c1", "mcp__fs__write_file", fmt.Sprintf(`{"path":%q,"content":"no"}`, filepath.Join(ws, "rejected.txt"))),
			modeltest.Tool("c2", "mcp__fs__write_file", fmt.Sprintf(`{"path":%q,`, filepath.Join(ws, "allowed.txt")), `"content":"yes"}`),
			modeltest.Tool("c3", "mcp__everything__echo", `{"message":"hi there"}`),
			modeltest.Tool("c4", "mcp__fx__add", `{"a":-1,"b":2}`),
			modeltest.Tool("c5", "mcp__fx__grow", `{}`),
		}},
		{Steps: []modeltest.Step{
			modeltest.Tool("c6", "mcp__fx__dispatched", `{}`),
			modeltest.Tool("c7", "mcp__fx__grown", `{}`),
			modeltest.Tool("c8", "mcp__everything__get-tiny-image", `{}`),
			modeltest.Tool("c9", "mcp__everything__get-structured-content", `{"location":"New York"}`),
			modeltest.Tool("c11", "mcp__fs__write_file", fmt.Sprintf(`{"path":%q,"content":"too"}`, filepath.Join(ws, "also-allowed.txt"))),
		}},
		{Steps: []modeltest.Step{modeltest.Text("Done.")}},
		{Steps: []modeltest.Step{modeltest.Tool("c10", "mcp__everything__trigger-long-running-operation", `{"duration":60,"steps":60}`)}},
	}
	srv := modeltest.NewAnthropicServer(t, script)
	env := []string{asMainEnv + "=1", "CODING_AGENT_MODEL=anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL=" + srv.BaseURL, "OPENAI_API_KEY=", "OPENAI_BASE_URL="}
	cmd := exec.Command("node", filepath.Join(clients, "acp-mcp.mjs"), os.Args[0], ws, data, serversFile)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("%s", out)

	// What the model was offered: the MCP tools beside the built-in ones,
	// none of the servers that did not start, and the grown tool from the
	// second request on.
	reqs := srv.Requests()
	if len(reqs) < 3 {
		t.Fatalf("%d model requests", len(reqs))
	}
	names := func(r modeltest.Request) map[string]bool {
		var body struct{ Tools []struct{ Name string } }
		r.Decode(&body)
		out := map[string]bool{}
		for _, tl := range body.Tools {
			out[tl.Name] = true
		}
		return out
	}
	first, second := names(reqs[0]), names(reqs[1])
	for _, n := range []string{"read", "bash", "mcp__fs__write_file", "mcp__fs__read_text_file", "mcp__everything__echo", "mcp__fx__add"} {
		if !first[n] {
			t.Errorf("the first request lacks tool %s", n)
		}
	}
	for n := range first {
		if strings.HasPrefix(n, "mcp__quits") || strings.HasPrefix(n, "mcp__hangs") || len(n) > 64 {
			t.Errorf("tool %s offered", n)
		}
	}
	if first["mcp__fx__grown"] || !second["mcp__fx__grown"] {
		t.Errorf("grown in the first request: %v, in the second: %v", first["mcp__fx__grown"], second["mcp__fx__grown"])
	}
	mcptest.WaitGone(t, m)
}

// TestMCPServersDieWithTheAgent starts a stdio server (with a descendant
// that leaves its process group) through the binary, then ends the session
// or the agent every way it can end: no process of it is left.
func TestMCPServersDieWithTheAgent(t *testing.T) {
	for _, how := range []string{"session/close", "EOF", "SIGTERM", "SIGINT", "SIGKILL"} {
		t.Run(strings.ReplaceAll(how, "/", "-"), func(t *testing.T) {
			ws := t.TempDir()
			m := mcptest.Marker(t)
			cmd := agentCmd(t, "serve", "--data-dir", t.TempDir())
			cmd.Dir = ws
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			send, waitID, _ := lineClient(t, stdin, stdout)
			send(1, "initialize", map[string]any{"protocolVersion": 1})
			waitID(1)
			send(2, "session/new", map[string]any{"cwd": ws, "mcpServers": []any{
				map[string]any{"name": "fx", "command": os.Args[0], "args": []string{}, "env": envList(mcptest.Fixture("spawn"), m)},
			}})
			sid := waitID(2)["result"].(map[string]any)["sessionId"]
			if n := len(mcptest.ProcessesWith(m)); n < 3 {
				t.Fatalf("%d processes of the server before %s, want the supervisor, the server and its descendant", n, how)
			}
			switch how {
			case "session/close":
				send(3, "session/close", map[string]any{"sessionId": sid})
				waitID(3)
				mcptest.WaitGone(t, m)
				stdin.Close()
			case "EOF":
				stdin.Close()
			case "SIGTERM":
				cmd.Process.Signal(syscall.SIGTERM)
			case "SIGINT":
				cmd.Process.Signal(syscall.SIGINT)
			case "SIGKILL":
				cmd.Process.Signal(syscall.SIGKILL)
			}
			go io.Copy(io.Discard, stdout)
			cmd.Wait()
			mcptest.WaitGone(t, m)
		})
	}
}
