package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/coding-agent/coding-agent/session/mcp"
	"github.com/coding-agent/coding-agent/tools"
)

// configFile is the optional configuration file in the data directory
// (PROTOCOL.md §11). Flags override environment variables, which override
// it.
const configFile = "config.json"

// Config is the content of DATA_DIR/config.json. Every field is optional.
//
//	{
//	  "model": "anthropic/claude-sonnet-4-5",
//	  "preset": "workspace-write",
//	  "approvalTimeoutSeconds": 120,
//	  "sandbox": {
//	    "extraWritable": ["~/.cache/go-build", "~/.npm"],
//	    "envAllow": ["GITHUB_TOKEN"],
//	    "keepVisible": ["/tmp/.X11-unix"]
//	  },
//	  "models": {
//	    "openai/qwen3-coder": {"contextWindow": 65536, "maxOutputTokens": 8192}
//	  },
//	  "compaction": {"reserveTokens": 20000, "keepRecentTokens": 20000},
//	  "mcpServers": {
//	    "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"], "env": {"GITHUB_TOKEN": "…"}},
//	    "docs": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer …"}}
//	  },
//	  "mcpStartTimeoutSeconds": 10
//	}
type Config struct {
	// Model is the default model as provider/model.
	Model string `json:"model"`
	// Preset is the permission preset of new sessions whose client asks
	// for none; empty means read-only. A client can still change it.
	Preset string `json:"preset"`
	// ApprovalTimeoutSeconds bounds each permission request of sessions
	// that set no timeout of their own; 0 means 600.
	ApprovalTimeoutSeconds float64 `json:"approvalTimeoutSeconds"`
	// Sandbox tunes the OS sandbox of bash commands.
	Sandbox SandboxConfig `json:"sandbox"`
	// Models describe models by "provider/model": what is given here
	// wins over what the server reports and the built-in table.
	Models map[string]ModelConfig `json:"models"`
	// Compaction tunes when and how a long conversation is summarized.
	Compaction CompactionConfig `json:"compaction"`
	// MCPServers are MCP servers for every session, in the .mcp.json
	// shape (see mcp.ParseConfig): a session's own servers win on a name
	// clash.
	MCPServers json.RawMessage `json:"mcpServers"`
	// MCPStartTimeoutSeconds bounds each MCP server's start (initialize
	// and the tool list); 0 means 10 s.
	MCPStartTimeoutSeconds float64 `json:"mcpStartTimeoutSeconds"`

	mcpServers []mcp.ServerConfig // MCPServers parsed
}

// ModelConfig describes one model's limits.
type ModelConfig struct {
	// ContextWindow is the most tokens one request may hold.
	ContextWindow int64 `json:"contextWindow"`
	// MaxOutputTokens is the most tokens one response may have.
	MaxOutputTokens int64 `json:"maxOutputTokens"`
}

// CompactionConfig tunes compaction. Zero values mean the defaults.
type CompactionConfig struct {
	// Disabled turns automatic compaction off (/compact still works, and
	// a "context too long" error still compacts and retries once).
	Disabled bool `json:"disabled"`
	// ReserveTokens is the room kept free in the context window for the
	// response: a request that would leave less compacts first. Default:
	// the response budget (at most a quarter of the window) plus 5% of the
	// window.
	ReserveTokens int64 `json:"reserveTokens"`
	// KeepRecentTokens is about how much of the latest conversation stays
	// verbatim. Default: a quarter of the window, at most 40,000.
	KeepRecentTokens int64 `json:"keepRecentTokens"`
}

// SandboxConfig tunes the OS sandbox.
type SandboxConfig struct {
	// ExtraWritable are directories writable by sandboxed commands under
	// workspace-write besides the session roots: typically toolchain
	// caches, so builds keep their cache between commands.
	ExtraWritable []string `json:"extraWritable"`
	// EnvAllow keeps environment variables (names or patterns like
	// "MY_*") that the sandbox would drop as secrets.
	EnvAllow []string `json:"envAllow"`
	// KeepVisible are host directories under /tmp, /var/tmp, /run or
	// /dev/shm that stay visible (read-only) inside the sandbox.
	KeepVisible []string `json:"keepVisible"`
}

// loadConfig reads dir/config.json; a missing file is an empty Config.
// Unknown fields are errors, so a typo does not go unnoticed.
func loadConfig(dir string) (Config, error) {
	var c Config
	if dir == "" {
		return c, nil
	}
	path := filepath.Join(dir, configFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("reading %s: %w", path, err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	for name, m := range c.Models {
		if !strings.Contains(name, "/") {
			return Config{}, fmt.Errorf("%s: models: %q must be provider/model, e.g. openai/%s", path, name, name)
		}
		if m.ContextWindow < 0 || m.MaxOutputTokens < 0 {
			return Config{}, fmt.Errorf("%s: models: %q: token counts must not be negative", path, name)
		}
		if m.ContextWindow > 0 && m.MaxOutputTokens >= m.ContextWindow {
			return Config{}, fmt.Errorf("%s: models: %q: maxOutputTokens (%d) must be smaller than contextWindow (%d)", path, name, m.MaxOutputTokens, m.ContextWindow)
		}
	}
	if c.mcpServers, err = mcp.ParseConfig(c.MCPServers); err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := tools.ParsePreset(c.Preset); err != nil {
		return Config{}, fmt.Errorf("%s: preset: %w", path, err)
	}
	if c.ApprovalTimeoutSeconds < 0 {
		return Config{}, fmt.Errorf("%s: approvalTimeoutSeconds: must not be negative", path)
	}
	if c.MCPStartTimeoutSeconds < 0 {
		return Config{}, fmt.Errorf("%s: mcpStartTimeoutSeconds: must not be negative", path)
	}
	if c.Compaction.ReserveTokens < 0 || c.Compaction.KeepRecentTokens < 0 {
		return Config{}, fmt.Errorf("%s: compaction: token counts must not be negative", path)
	}
	for _, list := range [][]string{c.Sandbox.ExtraWritable, c.Sandbox.KeepVisible} {
		for i, p := range list {
			p, err := expandHome(p)
			if err != nil || !filepath.IsAbs(p) {
				return Config{}, fmt.Errorf("%s: sandbox: %q must be an absolute path or start with ~/", path, list[i])
			}
			list[i] = p
		}
	}
	return c, nil
}

// expandHome replaces a leading ~ or ~/ with the home directory.
func expandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, p[1:]), nil
}

// config returns the configuration file's content, read once.
func (e *Env) config() (Config, error) {
	e.cfgOnce.Do(func() { e.cfg, e.cfgErr = loadConfig(e.DataDir) })
	return e.cfg, e.cfgErr
}
