package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// fixtureEnv makes the test binary an MCP server (its value is the mode)
// instead of running the tests.
const fixtureEnv = "CODING_AGENT_MCP_FIXTURE"

func TestMain(m *testing.M) {
	MaybeRunSupervisor()
	if mode := os.Getenv(fixtureEnv); mode != "" {
		os.Exit(runFixture(mode))
	}
	if os.Getenv(agentEnv) == "1" {
		os.Exit(runAgent())
	}
	os.Exit(m.Run())
}

// agentEnv makes the test binary stand in for the agent: it starts a set
// with a server that spawns a descendant, says "ready" on stdout and
// waits to be killed.
const agentEnv = "CODING_AGENT_MCP_TEST_AGENT"

func runAgent() int {
	set := Start(context.Background(), []ServerConfig{{Name: "fx", Type: Stdio, Command: os.Args[0], Env: []string{fixtureEnv + "=spawn", os.Getenv("MARKER")}}}, Options{})
	if len(set.Failures()) > 0 {
		fmt.Println(set.Failures())
		return 1
	}
	fmt.Println("ready")
	select {}
}

// runFixture is a stdio MCP server built with the official SDK's server
// side, with tools that exercise each part of the client.
func runFixture(mode string) int {
	switch mode {
	case "exit":
		fmt.Fprintln(os.Stderr, "fixture: missing API token, giving up")
		return 3
	case "hang":
		time.Sleep(time.Hour)
		return 0
	case "spawn":
		// A descendant that leaves the process group.
		c := exec.Command("setsid", "sleep", "3600")
		c.Start()
		fmt.Fprintf(os.Stderr, "spawned %d\n", c.Process.Pid)
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "fixture", Version: "1"}, nil)
	var dispatched atomic.Int64
	obj := func(s string) json.RawMessage { return json.RawMessage(s) }
	srv.AddTool(&sdk.Tool{
		Name:        "add",
		Description: "Adds a and b.",
		InputSchema: obj(`{"type":"object","properties":{"a":{"type":"number","minimum":0},"b":{"$ref":"#/$defs/n"}},"required":["a","b"],"additionalProperties":false,"$defs":{"n":{"type":"number"}}}`),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
	}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		dispatched.Add(1)
		var a struct{ A, B float64 }
		json.Unmarshal(req.Params.Arguments, &a)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprint(a.A + a.B)}}, StructuredContent: map[string]any{"sum": a.A + a.B}}, nil
	})
	srv.AddTool(&sdk.Tool{Name: "dispatched", Description: "How many add calls were dispatched.", InputSchema: obj(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprint(dispatched.Load())}}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "fail", Description: "Fails.", InputSchema: obj(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "it broke"}}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "big", Description: "3000 lines.", InputSchema: obj(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var b strings.Builder
			for i := 1; i <= 3000; i++ {
				fmt.Fprintf(&b, "line %d\n", i)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: b.String()}}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "media", Description: "An image and a resource.", InputSchema: obj(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.ImageContent{Data: []byte("\x89PNG"), MIMEType: "image/png"},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///x.txt", MIMEType: "text/plain", Text: "hello"}},
				&sdk.ResourceLink{URI: "file:///y.txt", Name: "y"},
			}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "slow", Description: "Reports progress, then waits to be cancelled.", InputSchema: obj(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "half way"})
			}
			<-ctx.Done()
			if f := os.Getenv("FIXTURE_CANCELLED"); f != "" {
				os.WriteFile(f, []byte("cancelled"), 0o600)
			}
			return nil, ctx.Err()
		})
	srv.AddTool(&sdk.Tool{Name: "grow", Description: "Adds the tool 'grown'.", InputSchema: obj(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			srv.AddTool(&sdk.Tool{Name: "grown", Description: "Grown later.", InputSchema: obj(`{"type":"object"}`)},
				func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
					return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "grown"}}}, nil
				})
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "env", Description: "Returns $FIXTURE_VALUE.", InputSchema: obj(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: os.Getenv("FIXTURE_VALUE")}}}, nil
		})
	fmt.Fprintln(os.Stderr, "fixture ready")
	if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "fixture:", err)
	}
	return 0
}
