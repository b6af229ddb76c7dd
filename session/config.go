package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// configFile is the optional configuration file in the data directory
// (PROTOCOL.md §11). Flags override environment variables, which override
// it.
const configFile = "config.json"

// Config is the content of DATA_DIR/config.json. Every field is optional.
//
//	{
//	  "model": "anthropic/claude-sonnet-4-5",
//	  "sandbox": {
//	    "extraWritable": ["~/.cache/go-build", "~/.npm"],
//	    "envAllow": ["GITHUB_TOKEN"],
//	    "keepVisible": ["/tmp/.X11-unix"]
//	  }
//	}
type Config struct {
	// Model is the default model as provider/model.
	Model string `json:"model"`
	// Sandbox tunes the OS sandbox of bash commands.
	Sandbox SandboxConfig `json:"sandbox"`
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
