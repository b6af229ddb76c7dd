package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"
)

// Transport kinds of a server.
const (
	Stdio = "stdio"
	HTTP  = "http"
	SSE   = "sse"
)

// ServerConfig is one MCP server: a command to run (stdio) or a URL to
// connect to (http: streamable HTTP; sse: the older HTTP+SSE transport).
type ServerConfig struct {
	// Name identifies the server; it is part of its tools' names.
	Name string
	// Type is Stdio, HTTP or SSE.
	Type string
	// Command, Args and Env start a stdio server. Env are the variables
	// the client gave ("NAME=value"); the server gets the agent's
	// environment with these set on top (see [Options.Environ]).
	Command string
	Args    []string
	Env     []string
	// URL and Headers reach an http or sse server.
	URL     string
	Headers map[string]string
	// StartTimeout, if not 0, bounds this server's start instead of
	// [Options.StartTimeout] (config.json's startTimeoutSeconds).
	StartTimeout time.Duration
}

// nameValue is ACP's {name, value} pair of env and headers.
type nameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// acpServer is one entry of ACP's mcpServers.
type acpServer struct {
	Type    string      `json:"type"`
	Name    string      `json:"name"`
	Command string      `json:"command"`
	Args    []string    `json:"args"`
	Env     []nameValue `json:"env"`
	URL     string      `json:"url"`
	Headers []nameValue `json:"headers"`
}

// ParseACP parses the mcpServers of session/new, load or resume: stdio
// entries {name, command, args, env:[{name,value}]} (no type, or
// "stdio"), and {type:"http"|"sse", name, url, headers:[{name,value}]}.
// An error names the entry and field ("mcpServers[1].url: required").
func ParseACP(raw []json.RawMessage) ([]ServerConfig, error) {
	var out []ServerConfig
	for i, r := range raw {
		field := fmt.Sprintf("mcpServers[%d]", i)
		var a acpServer
		d := json.NewDecoder(bytes.NewReader(r))
		if err := d.Decode(&a); err != nil {
			return nil, fmt.Errorf("%s: %v", field, err)
		}
		c := ServerConfig{Name: a.Name, Type: a.Type, Command: a.Command, Args: a.Args, URL: a.URL}
		if c.Type == "" {
			c.Type = Stdio
		}
		for j, e := range a.Env {
			if e.Name == "" || strings.ContainsAny(e.Name, "=\x00") {
				return nil, fmt.Errorf("%s.env[%d].name: must be a non-empty name without '='", field, j)
			}
			c.Env = append(c.Env, e.Name+"="+e.Value)
		}
		for j, h := range a.Headers {
			if h.Name == "" {
				return nil, fmt.Errorf("%s.headers[%d].name: required", field, j)
			}
			if c.Headers == nil {
				c.Headers = map[string]string{}
			}
			c.Headers[h.Name] = h.Value
		}
		if err := c.check(field); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, checkUnique(out, "mcpServers")
}

// configServer is one server of config.json's "mcpServers" object, in the
// common .mcp.json shape.
type configServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	// StartTimeoutSeconds bounds this server's start (a slow one).
	StartTimeoutSeconds float64 `json:"startTimeoutSeconds"`
}

// ParseConfig parses the "mcpServers" object of config.json, the shape of
// the common .mcp.json files: {"<name>": {"command", "args", "env":{K:V}}}
// for stdio servers and {"<name>": {"type":"http"|"sse", "url",
// "headers":{K:V}}} for the others ("type" may be omitted when "url" is
// given). Any server may have "startTimeoutSeconds", its own start bound.
// Servers come out sorted by name.
func ParseConfig(raw json.RawMessage) ([]ServerConfig, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("mcpServers: must be an object of servers by name: %v", err)
	}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []ServerConfig
	for _, n := range names {
		field := fmt.Sprintf("mcpServers.%s", n)
		var s configServer
		d := json.NewDecoder(bytes.NewReader(m[n]))
		d.DisallowUnknownFields()
		if err := d.Decode(&s); err != nil {
			return nil, fmt.Errorf("%s: %v", field, err)
		}
		if s.StartTimeoutSeconds < 0 {
			return nil, fmt.Errorf("%s.startTimeoutSeconds: must not be negative", field)
		}
		c := ServerConfig{Name: n, Type: s.Type, Command: s.Command, Args: s.Args, URL: s.URL, Headers: s.Headers,
			StartTimeout: time.Duration(s.StartTimeoutSeconds * float64(time.Second))}
		if c.Type == "" {
			c.Type = Stdio
			if c.Command == "" && c.URL != "" {
				c.Type = HTTP
			}
		}
		for _, k := range sortedKeys(s.Env) {
			c.Env = append(c.Env, k+"="+s.Env[k])
		}
		if err := c.check(field); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// mergeEnv returns base with the variables of over ("NAME=value") set,
// replacing those of the same name.
func mergeEnv(base, over []string) []string {
	out := make([]string, 0, len(base)+len(over))
	names := map[string]bool{}
	for _, kv := range over {
		k, _, _ := strings.Cut(kv, "=")
		names[k] = true
	}
	for _, kv := range base {
		if k, _, ok := strings.Cut(kv, "="); ok && !names[k] {
			out = append(out, kv)
		}
	}
	return append(out, over...)
}

// check validates one server's fields; field names it in errors.
func (c *ServerConfig) check(field string) error {
	if strings.TrimSpace(c.Name) == "" {
		return fmt.Errorf("%s.name: required", field)
	}
	switch c.Type {
	case Stdio:
		if c.Command == "" {
			return fmt.Errorf("%s.command: required for a stdio server", field)
		}
	case HTTP, SSE:
		u, err := url.Parse(c.URL)
		if c.URL == "" {
			return fmt.Errorf("%s.url: required for an %s server", field, c.Type)
		}
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%s.url: must be an absolute http or https URL, got %q", field, c.URL)
		}
	default:
		return fmt.Errorf("%s.type: unknown transport %q (valid: stdio, http, sse)", field, c.Type)
	}
	return nil
}

func checkUnique(cs []ServerConfig, field string) error {
	seen := map[string]bool{}
	for i, c := range cs {
		if seen[c.Name] {
			return fmt.Errorf("%s[%d].name: duplicate server name %q", field, i, c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}

// Merge returns the session's servers followed by those of the
// configuration whose name the session does not use: on a name clash, the
// session's server wins.
func Merge(session, config []ServerConfig) []ServerConfig {
	out := slices.Clone(session)
	for _, c := range config {
		if !slices.ContainsFunc(session, func(s ServerConfig) bool { return s.Name == c.Name }) {
			out = append(out, c)
		}
	}
	return out
}
