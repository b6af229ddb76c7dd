package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadConfig(t *testing.T) {
	home, _ := os.UserHomeDir()
	for _, test := range []struct {
		name, file, err string
		check           func(Config) bool
	}{
		{name: "missing file", check: func(c Config) bool { return c.Model == "" }},
		{name: "full", file: `{"model":"openai/gpt-4.1","sandbox":{"extraWritable":["~/.cache/go-build","/opt/cache"],"envAllow":["GITHUB_TOKEN"]}}`,
			check: func(c Config) bool {
				return c.Model == "openai/gpt-4.1" && c.Sandbox.ExtraWritable[0] == filepath.Join(home, ".cache/go-build") &&
					c.Sandbox.ExtraWritable[1] == "/opt/cache" && c.Sandbox.EnvAllow[0] == "GITHUB_TOKEN"
			}},
		{name: "typo", file: `{"modle":"x"}`, err: `unknown field "modle"`},
		{name: "not json", file: `{`, err: "config.json"},
		{name: "relative path", file: `{"sandbox":{"extraWritable":["cache"]}}`, err: `"cache" must be an absolute path`},
	} {
		t.Run(test.name, func(t *testing.T) {
			dir := t.TempDir()
			if test.file != "" {
				os.WriteFile(filepath.Join(dir, "config.json"), []byte(test.file), 0o600)
			}
			c, err := loadConfig(dir)
			if test.err != "" {
				if err == nil || !strings.Contains(err.Error(), test.err) {
					t.Fatalf("err = %v, want %q", err, test.err)
				}
				return
			}
			if err != nil || !test.check(c) {
				t.Fatalf("loadConfig = %+v, %v", c, err)
			}
		})
	}
}

func TestConfigModelIsTheLastResort(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"model":"nope/x"}`), 0o600)
	env := &Env{DataDir: dir, Getenv: func(string) string { return "" }}
	if err := env.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := env.ModelError(); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("model error %v, want the config's unknown provider named", err)
	}
	bad := &Env{DataDir: t.TempDir()}
	os.WriteFile(filepath.Join(bad.DataDir, "config.json"), []byte(`{"sandbox":{"bogus":1}}`), 0o600)
	if err := bad.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Errorf("Start with a bad config: %v", err)
	}
}

func TestConfigMCPServers(t *testing.T) {
	for in, want := range map[string]string{
		`{"mcpServers":{"gh":{"command":"npx","args":["-y","x"]}},"mcpStartTimeoutSeconds":3}`: "",
		`{"mcpServers":{"gh":{"args":["x"]}}}`:                                                 "mcpServers.gh.command: required",
		`{"mcpServers":{"web":{"type":"http","url":"ftp://x"}}}`:                               "mcpServers.web.url",
		`{"mcpServers":{"gh":{"command":"x","startTimeoutSeconds":-1}}}`:                       "startTimeoutSeconds: must not be negative",
		`{"mcpStartTimeoutSeconds":-2}`:                                                        "mcpStartTimeoutSeconds: must not be negative",
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "config.json"), []byte(in), 0o600)
		c, err := loadConfig(dir)
		switch {
		case want == "" && (err != nil || len(c.mcpServers) != 1 || c.mcpServers[0].Name != "gh" || c.MCPStartTimeoutSeconds != 3):
			t.Errorf("%s: %+v, %v", in, c.mcpServers, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: err %v, want %q", in, err, want)
		}
	}
}
