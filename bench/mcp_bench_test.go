//go:build unix

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coding-agent/coding-agent/session/mcp"
	"github.com/coding-agent/coding-agent/session/mcp/mcptest"
	"github.com/coding-agent/coding-agent/tools"
)

// fixtureServer is an ACP mcpServers entry running this test binary as the
// SDK fixture server, answering initialize after delay.
func fixtureServer(name string, delay time.Duration) map[string]any {
	return map[string]any{"name": name, "command": os.Args[0], "args": []string{}, "env": []map[string]string{
		{"name": mcptest.FixtureEnv, "value": "serve"},
		{"name": "FIXTURE_START_DELAY_MS", "value": fmt.Sprint(delay.Milliseconds())},
	}}
}

// BenchmarkMCPSessionNew is session/new through the binary with stdio MCP
// servers that take 100, 200 and 300 ms to answer initialize: the servers
// start in parallel, so three cost about the slowest one, not the sum.
// Baselines in the same run: no server, and the 300 ms server alone.
//
//	go test ./bench -run '^$' -bench MCPSessionNew -benchtime 10x
func BenchmarkMCPSessionNew(b *testing.B) {
	for _, bc := range []struct {
		name    string
		servers []map[string]any
	}{
		{"none", nil},
		{"one-0ms", []map[string]any{fixtureServer("c", 0)}},
		{"one-300ms", []map[string]any{fixtureServer("c", 300*time.Millisecond)}},
		{"three-100-200-300ms", []map[string]any{fixtureServer("a", 100*time.Millisecond), fixtureServer("b", 200*time.Millisecond), fixtureServer("c", 300*time.Millisecond)}},
		{"three-0ms", []map[string]any{fixtureServer("a", 0), fixtureServer("b", 0), fixtureServer("c", 0)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			dir := b.TempDir()
			c := startServer(b, dir)
			c.call(b, "initialize", map[string]any{"protocolVersion": 1})
			servers := bc.servers
			if servers == nil {
				servers = []map[string]any{}
			}
			var times []time.Duration
			for b.Loop() {
				start := time.Now()
				res := c.call(b, "session/new", map[string]any{"cwd": dir, "mcpServers": servers})
				times = append(times, time.Since(start))
				b.StopTimer()
				c.call(b, "session/close", map[string]any{"sessionId": res["sessionId"]})
				b.StartTimer()
			}
			reportPercentiles(b, times)
		})
	}
}

// BenchmarkMCPToolCall is one call of the fixture's add tool (validated
// against its schema, readOnlyHint: no approval):
//
//   - sdk: the official SDK's client calling the server directly (the
//     baseline);
//
//   - set: through session/mcp in process (validation, dispatch, result
//     conversion): what our layer adds;
//
//   - agent: a _coding-agent/tools/call through the binary's stdio, session
//     updates included;
//
//   - agent-read: the same request for the built-in read of a small file,
//     the protocol's own cost for comparison.
//
//     go test ./bench -run '^$' -bench MCPToolCall -benchtime 2000x
func BenchmarkMCPToolCall(b *testing.B) {
	args := map[string]any{"a": 2, "b": 3}
	b.Run("sdk", func(b *testing.B) {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), mcptest.Fixture("serve"))
		client := sdk.NewClient(&sdk.Implementation{Name: "bench"}, nil)
		cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		var times []time.Duration
		for b.Loop() {
			start := time.Now()
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "add", Arguments: args})
			times = append(times, time.Since(start))
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
		reportPercentiles(b, times)
	})
	b.Run("set", func(b *testing.B) {
		set := mcp.Start(context.Background(), []mcp.ServerConfig{{Name: "fx", Type: mcp.Stdio, Command: os.Args[0], Env: []string{mcptest.Fixture("serve")}}}, mcp.Options{Dir: b.TempDir()})
		defer set.Close()
		var tool tools.Tool
		for _, t := range set.Tools(context.Background()) {
			if t.Name() == "mcp__fx__add" {
				tool = t.Bind(mcp.Policy{Preset: tools.ReadOnly})
			}
		}
		raw := json.RawMessage(`{"a":2,"b":3}`)
		var times []time.Duration
		for b.Loop() {
			start := time.Now()
			in, err := tool.Validate(raw)
			if err != nil {
				b.Fatal(err)
			}
			res, err := tool.Execute(context.Background(), tools.Call{ID: "c", Args: raw, Input: in})
			times = append(times, time.Since(start))
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
		reportPercentiles(b, times)
	})
	agent := func(b *testing.B, name string, arguments map[string]any) {
		dir := b.TempDir()
		os.WriteFile(filepath.Join(dir, "small.txt"), []byte("a line of text\n"), 0o644)
		c := startServer(b, dir)
		c.call(b, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{
			"_meta": map[string]any{"coding-agent": map[string]any{"extensions": true}}}})
		sid := c.call(b, "session/new", map[string]any{"cwd": dir, "mcpServers": []any{fixtureServer("fx", 0)}})["sessionId"]
		params := map[string]any{"name": name, "sessionId": sid, "arguments": arguments}
		c.call(b, "_coding-agent/tools/call", params) // warm up
		var times []time.Duration
		for b.Loop() {
			start := time.Now()
			res := c.call(b, "_coding-agent/tools/call", params)
			times = append(times, time.Since(start))
			if res["isError"] != false {
				b.Fatalf("%s failed: %v", name, res)
			}
		}
		reportPercentiles(b, times)
	}
	b.Run("agent", func(b *testing.B) { agent(b, "mcp__fx__add", args) })
	b.Run("agent-read", func(b *testing.B) { agent(b, "read", map[string]any{"path": "small.txt"}) })
}
