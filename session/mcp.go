package session

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/coding-agent/coding-agent/session/mcp"
	"github.com/coding-agent/coding-agent/tools"
)

// startMCP starts the session's MCP servers (its own and those of
// config.json whose names it does not use), in parallel and bounded. A
// server that does not start is a failure of its own; the session works
// without it.
func (s *Session) startMCP() {
	cfg, _ := s.env.config() // a bad file was reported by Start
	configs := mcp.Merge(s.opts.MCPServers, cfg.mcpServers)
	if len(configs) == 0 {
		return
	}
	timeout := s.opts.MCPStartTimeout
	if timeout == 0 && cfg.MCPStartTimeoutSeconds > 0 {
		timeout = time.Duration(cfg.MCPStartTimeoutSeconds * float64(time.Second))
	}
	ctx, done := s.env.track(context.Background())
	defer done()
	s.mcp = mcp.Start(ctx, configs, mcp.Options{
		Dir:          s.cwd,
		StartTimeout: timeout,
		Outputs:      s.env.outputs,
		Version:      s.env.Version,
		Logger:       s.env.Logger.With("session", s.id),
		Executable:   s.env.MCPExecutable,
	})
}

// MCPServers reports the session's MCP servers: those that started, then
// those that did not, with their errors.
func (s *Session) MCPServers() []MCPServerStatus {
	var out []MCPServerStatus
	if s.mcp == nil {
		return nil
	}
	count := map[string]int{}
	for _, t := range s.mcp.Tools(s.life) {
		count[t.Server()]++
	}
	for _, name := range s.mcp.Servers() {
		out = append(out, MCPServerStatus{Name: name, Started: true, Tools: count[name]})
	}
	for _, f := range s.mcp.Failures() {
		out = append(out, MCPServerStatus{Name: f.Server, Error: f.Err.Error()})
	}
	return out
}

// MCPServerStatus is one MCP server of a session.
type MCPServerStatus struct {
	Name    string `json:"name"`
	Started bool   `json:"started"`
	// Tools is how many tools it offers.
	Tools int `json:"tools"`
	// Error says why it did not start.
	Error string `json:"error,omitempty"`
}

// mcpNotice is the text that tells the user which MCP servers did not
// start, "" when all did.
func (s *Session) mcpNotice() string {
	if s.mcp == nil || len(s.mcp.Failures()) == 0 {
		return ""
	}
	var b strings.Builder
	for _, f := range s.mcp.Failures() {
		fmt.Fprintf(&b, "⚠ MCP server %q did not start: %v\n", f.Server, f.Err)
	}
	b.WriteString("\n")
	return b.String()
}

// withMCP returns base with the tools of the session's MCP servers, bound
// to preset and the session's approver. Lists a server announced as
// changed are fetched again first.
func (s *Session) withMCP(base *tools.Set, preset tools.Preset) *tools.Set {
	if s.mcp == nil {
		return base
	}
	ts := base.Tools()
	policy := mcp.Policy{Preset: preset, Approver: s.approverOf()}
	for _, t := range s.mcp.Tools(s.lifeContext()) {
		ts = append(ts, t.Bind(policy))
	}
	set, err := tools.NewSet(ts...)
	if err != nil {
		// mcp__ names cannot clash with the built-in ones.
		s.env.Logger.Error("MCP tools left out of the tool set", "err", err)
		return base
	}
	return set
}

func (s *Session) lifeContext() context.Context {
	if s.life == nil {
		return context.Background()
	}
	return s.life
}

// mcpPermission is the content of a permission request for an MCP tool
// call: the server, the tool and the arguments.
func mcpPermission(req mcpRequest) string {
	var args strings.Builder
	var v any
	if json.Unmarshal(req.Args, &v) == nil {
		b, _ := json.MarshalIndent(v, "", "  ")
		args.Write(b)
	} else {
		args.Write(req.Args)
	}
	return fmt.Sprintf("MCP server: %s\nTool: %s\nArguments:\n%s", req.Server, req.Tool, args.String())
}

type mcpRequest struct {
	Server, Tool string
	Args         json.RawMessage
}
