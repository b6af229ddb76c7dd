package main

import (
	"bufio"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The ACP registry's rules (agentclientprotocol/registry: agent.schema.json,
// .github/workflows/build_registry.py and client.py, February 2026), checked
// against packaging/registry/coding-agent.
var (
	registryPlatforms = map[string]bool{"darwin-aarch64": true, "darwin-x86_64": true, "linux-aarch64": true,
		"linux-x86_64": true, "windows-aarch64": true, "windows-x86_64": true}
	registryID      = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	registrySemver  = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+`)
	registryURLVer  = regexp.MustCompile(`/(?:download|releases)/v?([\d.]+)/`)
	registryFill    = regexp.MustCompile(`(?i)\b(fill|stroke)\s*=\s*["']([^"']+)["']`)
	registryStyle   = regexp.MustCompile(`(?i)\bstyle\s*=\s*["']([^"']+)["']`)
	registryStyleFS = regexp.MustCompile(`(?i)\b(fill|stroke)\s*:\s*([^;]+)`)
	registryWidth   = regexp.MustCompile(`<svg[^>]*\swidth=["'](\d+)`)
	registryHeight  = regexp.MustCompile(`<svg[^>]*\sheight=["'](\d+)`)
)

func registryDir(t *testing.T) string {
	t.Helper()
	return filepath.Join("..", "..", "packaging", "registry", "coding-agent")
}

func TestRegistryAgentJSON(t *testing.T) {
	dir := registryDir(t)
	b, err := os.ReadFile(filepath.Join(dir, "agent.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("agent.json: %v", err)
	}
	allowed := map[string]bool{"id": true, "name": true, "version": true, "description": true, "repository": true,
		"authors": true, "license": true, "icon": true, "distribution": true}
	for k := range raw {
		if !allowed[k] {
			t.Errorf("agent.json: unknown member %q", k)
		}
	}
	var a struct {
		ID, Name, Version, Description, Repository, License string
		Distribution                                        map[string]json.RawMessage
	}
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	if !registryID.MatchString(a.ID) || a.ID != filepath.Base(dir) {
		t.Errorf("id %q: must match %s and the directory name", a.ID, registryID)
	}
	if a.Name == "" || a.Description == "" || a.License == "" {
		t.Error("name, description and license must be set")
	}
	if !registrySemver.MatchString(a.Version) {
		t.Errorf("version %q is not semantic", a.Version)
	}
	if !strings.HasPrefix(devVersion, a.Version) {
		t.Errorf("agent.json version %s is not the version being developed (%s)", a.Version, devVersion)
	}
	if u, err := url.Parse(a.Repository); err != nil || u.Scheme != "https" {
		t.Errorf("repository %q is not a URL", a.Repository)
	}
	for k := range a.Distribution {
		if k != "binary" && k != "npx" && k != "uvx" {
			t.Errorf("unknown distribution type %q", k)
		}
	}
	var binary map[string]map[string]json.RawMessage
	if err := json.Unmarshal(a.Distribution["binary"], &binary); err != nil || len(binary) == 0 {
		t.Fatalf("distribution.binary: %v", err)
	}
	families := map[string]bool{}
	for plat, target := range binary {
		if !registryPlatforms[plat] {
			t.Errorf("unknown platform %q", plat)
			continue
		}
		families[strings.Split(plat, "-")[0]] = true
		for k := range target {
			if k != "archive" && k != "cmd" && k != "args" && k != "env" {
				t.Errorf("%s: unknown member %q", plat, k)
			}
		}
		var archive, cmd string
		json.Unmarshal(target["archive"], &archive)
		json.Unmarshal(target["cmd"], &cmd)
		if archive == "" || cmd == "" {
			t.Errorf("%s: archive and cmd are required", plat)
		}
		if strings.Contains(archive, "/latest/") {
			t.Errorf("%s: archive uses /latest/", plat)
		}
		if m := registryURLVer.FindStringSubmatch(archive); m == nil || m[1] != a.Version {
			t.Errorf("%s: archive %s does not carry version %s", plat, archive, a.Version)
		}
		// The archive is what scripts/release.sh makes, with the binary at its root.
		goos, goarch := map[string]string{"darwin": "darwin", "linux": "linux", "windows": "windows"}[strings.Split(plat, "-")[0]],
			map[string]string{"aarch64": "arm64", "x86_64": "amd64"}[strings.Split(plat, "-")[1]]
		ext, exe := ".tar.gz", "./coding-agent"
		if goos == "windows" {
			ext, exe = ".zip", "./coding-agent.exe"
		}
		if want := "coding-agent-" + a.Version + "-" + goos + "-" + goarch + ext; !strings.HasSuffix(archive, "/"+want) || cmd != exe {
			t.Errorf("%s: archive %s cmd %s, want …/%s and %s (scripts/release.sh)", plat, archive, cmd, want, exe)
		}
	}
	for _, f := range []string{"darwin", "linux", "windows"} {
		if !families[f] {
			t.Errorf("binary distribution lacks %s", f)
		}
	}
	var npx struct{ Package string }
	if err := json.Unmarshal(a.Distribution["npx"], &npx); err != nil || npx.Package != "coding-agent@"+a.Version {
		t.Errorf("npx package %q, want coding-agent@%s", npx.Package, a.Version)
	}
}

func TestRegistryIcon(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(registryDir(t), "icon.svg"))
	if err != nil {
		t.Fatal(err)
	}
	svg := string(b)
	w, h := registryWidth.FindStringSubmatch(svg), registryHeight.FindStringSubmatch(svg)
	if w == nil || h == nil || w[1] != "16" || h[1] != "16" {
		t.Errorf("icon is %v x %v, want 16x16", w, h)
	}
	ok := map[string]bool{"currentcolor": true, "none": true, "inherit": true}
	for _, m := range registryFill.FindAllStringSubmatch(svg, -1) {
		if !ok[strings.ToLower(strings.TrimSpace(m[2]))] {
			t.Errorf("hard-coded %s=%q", m[1], m[2])
		}
	}
	for _, m := range registryStyle.FindAllStringSubmatch(svg, -1) {
		for _, fs := range registryStyleFS.FindAllStringSubmatch(m[1], -1) {
			if !ok[strings.ToLower(strings.TrimSpace(fs[2]))] {
				t.Errorf("hard-coded style %s: %s", fs[1], fs[2])
			}
		}
	}
	if !strings.Contains(strings.ToLower(svg), "currentcolor") {
		t.Error("icon does not use currentColor")
	}
}

// TestRegistryAuthCheck does what the registry's CI does: start the agent
// with an empty HOME, send its initialize, and require an auth method of
// type agent or terminal (type from "type", else _meta "terminal-auth" /
// "agent-auth", else agent).
func TestRegistryAuthCheck(t *testing.T) {
	home := t.TempDir()
	cmd := agentCmd(t)
	cmd.Env = append(os.Environ(), asMainEnv+"=1", "HOME="+home, "TERM=dumb", "XDG_DATA_HOME=", "CODING_AGENT_DATA_DIR=")
	cmd.Dir = home
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	req := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"ACP Registry Validator","version":"1.0.0"},` +
		`"clientCapabilities":{"terminal":true,"fs":{"readTextFile":true,"writeTextFile":true},"_meta":{"terminal_output":true,"terminal-auth":true}}}}` + "\n"
	if _, err := stdin.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		t.Fatalf("no answer to initialize: %v", err)
	}
	var resp struct {
		Result struct {
			AuthMethods []map[string]any `json:"authMethods"`
		}
	}
	if err := json.Unmarshal(line, &resp); err != nil {
		t.Fatal(err)
	}
	valid := 0
	for _, m := range resp.Result.AuthMethods {
		typ, _ := m["type"].(string)
		if typ == "" {
			if meta, ok := m["_meta"].(map[string]any); ok {
				if _, ok := meta["terminal-auth"]; ok {
					typ = "terminal"
				} else if _, ok := meta["agent-auth"]; ok {
					typ = "agent"
				}
			}
		}
		if typ == "" {
			typ = "agent"
		}
		if typ == "agent" || typ == "terminal" {
			valid++
		}
	}
	if valid == 0 {
		t.Errorf("initialize offers no auth method of type agent or terminal: %s", line)
	}
	if !strings.Contains(string(line), `"type":"terminal"`) {
		t.Errorf("a client with terminal-auth gets no terminal method: %s", line)
	}
}
