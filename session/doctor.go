package session

import (
	"context"
	"time"

	"github.com/coding-agent/coding-agent/session/mcp"
)

// MCPCheck is the result of starting the MCP servers of config.json once,
// for `coding-agent doctor`.
type MCPCheck struct {
	// Started names the servers that started, with their tool counts.
	Started map[string]int
	// Failures are the servers that did not start.
	Failures []mcp.Failure
}

// CheckConfig reports whether config.json can be read and parsed.
func (e *Env) CheckConfig() error {
	e.init()
	_, err := e.config()
	return err
}

// CheckMCPServers starts the MCP servers configured in config.json, in
// dir, as a session would (same start timeout), lists which started, and
// stops them all.
func (e *Env) CheckMCPServers(ctx context.Context, dir string) (MCPCheck, error) {
	e.init()
	var c MCPCheck
	cfg, err := e.config()
	if err != nil {
		return c, err
	}
	if len(cfg.mcpServers) == 0 {
		return c, nil
	}
	var timeout time.Duration
	if cfg.MCPStartTimeoutSeconds > 0 {
		timeout = time.Duration(cfg.MCPStartTimeoutSeconds * float64(time.Second))
	}
	set := mcp.Start(ctx, cfg.mcpServers, mcp.Options{Dir: dir, StartTimeout: timeout, Outputs: e.outputs,
		Version: e.Version, Logger: e.Logger, Executable: e.MCPExecutable})
	defer set.Close()
	c.Started = map[string]int{}
	for _, name := range set.Servers() {
		c.Started[name] = 0
	}
	for _, t := range set.Tools(ctx) {
		c.Started[t.Server()]++
	}
	c.Failures = set.Failures()
	return c, nil
}
