package sandbox

import (
	"slices"
	"strings"
	"testing"
)

func TestSecretName(t *testing.T) {
	cases := []struct {
		name  string
		allow []string
		want  bool
	}{
		{"OPENAI_API_KEY", nil, true},
		{"ANTHROPIC_API_KEY", nil, true},
		{"anthropic_base_url", nil, true}, // provider prefix, case-insensitive
		{"GITHUB_TOKEN", nil, true},
		{"my_secret_thing", nil, true},
		{"DB_PASSWORD", nil, true},
		{"AWS_REGION", nil, true},
		{"AZURE_CLIENT_ID", nil, true},
		{"GOOGLE_APPLICATION_CREDENTIALS", nil, true},
		{"GIT_CREDENTIAL_HELPER", nil, true},
		{"SSH_AUTH_SOCK", nil, true},
		{"DOCKER_HOST", nil, true},
		{"PATH", nil, false},
		{"HOME", nil, false},
		{"GOPATH", nil, false},
		{"KEYBOARD_LAYOUT", nil, true}, // *KEY* is deliberately broad
		{"KEYBOARD_LAYOUT", []string{"keyboard_layout"}, false},
		{"MY_API_KEY", []string{"MY_*"}, false},
		{"MY_API_KEY", []string{"OTHER"}, true},
	}
	for _, c := range cases {
		if got := SecretName(c.name, c.allow); got != c.want {
			t.Errorf("SecretName(%q, %q) = %v, want %v", c.name, c.allow, got, c.want)
		}
	}
}

func TestFilterEnv(t *testing.T) {
	in := []string{"PATH=/bin", "API_TOKEN=x", "broken", "=empty", "HOME=/h", "aws_secret_access_key=y", "A=b=c"}
	got := FilterEnv(in, nil)
	want := []string{"PATH=/bin", "HOME=/h", "A=b=c"}
	if !slices.Equal(got, want) {
		t.Errorf("FilterEnv = %q, want %q", got, want)
	}
}

func TestSandboxEnv(t *testing.T) {
	get := func(env []string, name string) string {
		v := ""
		for _, kv := range env {
			if s, ok := strings.CutPrefix(kv, name+"="); ok {
				v = s
			}
		}
		return v
	}
	// Caches outside the writable roots go to the private temp.
	env := sandboxEnv([]string{"HOME=/home/u", "GOCACHE=/home/u/.cache/go-build", "TMPDIR=/host/tmp", "OPENAI_API_KEY=k"}, nil, []string{"/ws"}, "/tmp")
	for name, want := range map[string]string{
		"TMPDIR": "/tmp", "GOCACHE": "/tmp/cache/go-build", "XDG_CACHE_HOME": "/tmp/cache",
		"npm_config_cache": "/tmp/cache/npm", "PIP_CACHE_DIR": "/tmp/cache/pip", "OPENAI_API_KEY": "",
		"HOME": "/home/u", "npm_config_update_notifier": "false",
	} {
		if got := get(env, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if n := strings.Count(strings.Join(env, "\n"), "TMPDIR="); n != 1 {
		t.Errorf("TMPDIR appears %d times: %q", n, env)
	}
	// A cache inside a writable root (an extra root the user configured)
	// is kept, set or by default.
	env = sandboxEnv([]string{"HOME=/home/u", "GOCACHE=/caches/go"}, nil, []string{"/ws", "/caches", "/home/u/.cache"}, "/tmp")
	if got := get(env, "GOCACHE"); got != "/caches/go" {
		t.Errorf("GOCACHE = %q, want it kept", got)
	}
	if got := get(env, "XDG_CACHE_HOME"); got != "" {
		t.Errorf("XDG_CACHE_HOME = %q, want it left unset (default ~/.cache is writable)", got)
	}
}
