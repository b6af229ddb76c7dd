// Package mcptest has what tests of MCP support share: a stdio MCP server
// built with the official SDK's server side (this test binary re-executed,
// see [MaybeRunFixture]) with tools that exercise each part of a client, and
// a check that no process of a test is left.
package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// FixtureEnv makes a test binary that calls [MaybeRunFixture] an MCP server;
// its value is the mode: "serve", "spawn" (serve, after starting a
// descendant that leaves the process group), "exit" (exit 3 at once, with
// a message on stderr) or "hang" (never answer).
const FixtureEnv = "CODING_AGENT_MCP_FIXTURE"

// MaybeRunFixture runs the fixture server and exits when FixtureEnv is
// set; call it first in TestMain.
func MaybeRunFixture() {
	if mode := os.Getenv(FixtureEnv); mode != "" {
		os.Exit(runFixture(mode))
	}
}

// Fixture returns the environment entry that makes the test binary run the
// fixture in mode.
func Fixture(mode string) string { return FixtureEnv + "=" + mode }

// Marker returns an environment entry that tags the processes of one test.
func Marker(t testing.TB) string {
	return fmt.Sprintf("CODING_AGENT_MCP_TEST_MARKER=%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano())
}

// ProcessesWith lists the live (not zombie) processes whose environment
// holds the entry m.
func ProcessesWith(m string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		if slices.Contains(strings.Split(string(b), "\x00"), m) {
			st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if i := bytes.LastIndexByte(st, ')'); i > 0 && bytes.HasPrefix(bytes.TrimSpace(st[i+1:]), []byte("Z")) {
				continue // a zombie is gone, only not reaped yet
			}
			var pid int
			fmt.Sscan(e.Name(), &pid)
			out = append(out, pid)
		}
	}
	return out
}

// WaitGone waits, with a generous deadline, until no process holds the
// entry m, and fails the test if some remain. /proc has no event for the
// exit of a process that is not our child: it is polled.
func WaitGone(t testing.TB, m string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		left := ProcessesWith(m)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
				t.Errorf("process %d left behind: %q", pid, b)
			}
			t.FailNow()
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runFixture is a stdio MCP server built with the official SDK's server
// side, with tools that exercise each part of the client.
func runFixture(mode string) int {
	switch mode {
	case "exit":
		// With an escape sequence that must not reach a terminal.
		fmt.Fprintln(os.Stderr, "\x1b[2Jfixture: missing API token, giving up")
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
	ro := &sdk.ToolAnnotations{ReadOnlyHint: true}
	srv.AddTool(&sdk.Tool{Name: "dispatched", Description: "How many add calls were dispatched.", InputSchema: obj(`{"type":"object"}`), Annotations: ro},
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
	// grow answers once the server has sent tools/list_changed (the SDK
	// sends it a little after the change): a client then has it before the
	// answer.
	listChanged := make(chan struct{}, 1)
	srv.AddSendingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			res, err := next(ctx, method, req)
			if method == "notifications/tools/list_changed" {
				select {
				case listChanged <- struct{}{}:
				default:
				}
			}
			return res, err
		}
	})
	srv.AddTool(&sdk.Tool{Name: "grow", Description: "Adds the tool 'grown'.", InputSchema: obj(`{"type":"object"}`), Annotations: ro},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			defer func() { <-listChanged }()
			srv.AddTool(&sdk.Tool{Name: "grown", Description: "Grown later.", InputSchema: obj(`{"type":"object"}`), Annotations: ro},
				func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
					return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "grown"}}}, nil
				})
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "env", Description: "Returns $FIXTURE_VALUE.", InputSchema: obj(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: os.Getenv("FIXTURE_VALUE")}}}, nil
		})
	// A slow server (benchmarks): FIXTURE_START_DELAY_MS before it
	// answers initialize.
	if ms, err := strconv.Atoi(os.Getenv("FIXTURE_START_DELAY_MS")); err == nil {
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}
	fmt.Fprintln(os.Stderr, "fixture ready")
	if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "fixture:", err)
	}
	return 0
}
