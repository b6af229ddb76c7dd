package sandbox

import (
	"path"
	"path/filepath"
	"strings"

	"github.com/coding-agent/coding-agent/sandbox/fspath"
)

// secretPatterns match names of variables that look like secrets, or that
// point at host sockets and agents (a way out of the sandbox). They are
// matched case-insensitively against the whole name.
var secretPatterns = []string{
	"*KEY*", "*TOKEN*", "*SECRET*", "*PASSWORD*", "*PASSWD*", "*CREDENTIAL*", "*_AUTH*",
	"AWS_*", "AZURE_*", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_*", "GCLOUD_*",
	// Provider API keys whose names do not say KEY or TOKEN.
	"ANTHROPIC_*", "OPENAI_*", "GEMINI_*", "MISTRAL_*", "GROQ_*", "COHERE_*", "HF_*", "HUGGING*",
	// Host sockets and agents.
	"SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS", "DOCKER_HOST",
	"XDG_RUNTIME_DIR", "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY",
}

// SecretName reports whether an environment variable name looks like a
// secret (or points at a host socket) and is not kept by allow, a list of
// names or shell patterns matched case-insensitively.
func SecretName(name string, allow []string) bool {
	up := strings.ToUpper(name)
	for _, a := range allow {
		if ok, _ := path.Match(strings.ToUpper(a), up); ok {
			return false
		}
	}
	for _, p := range secretPatterns {
		if ok, _ := path.Match(p, up); ok {
			return true
		}
	}
	return false
}

// FilterEnv returns env without the variables whose names look like
// secrets (see [SecretName]) and without malformed entries. The order of
// the remaining entries is kept.
func FilterEnv(env, allow []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || SecretName(name, allow) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// PrivateTemp is the private temp directory of a sandboxed command on
// Linux: a tmpfs private to the command. TMPDIR points at it.
const PrivateTemp = "/tmp"

// cacheVars are toolchain cache locations: the variable and its default
// below $HOME when unset. Each is redirected into the private temp unless
// it already lies in a writable root.
var cacheVars = []struct{ name, home, sub string }{
	{"XDG_CACHE_HOME", ".cache", "cache"},
	{"GOCACHE", ".cache/go-build", "cache/go-build"},
	{"npm_config_cache", ".npm", "cache/npm"},
	{"PIP_CACHE_DIR", ".cache/pip", "cache/pip"},
	{"YARN_CACHE_FOLDER", ".cache/yarn", "cache/yarn"},
}

// sandboxEnv filters env and points TMPDIR and the toolchain caches into
// temp (the private temp as the command sees it) unless a cache already
// lies in one of roots.
func sandboxEnv(env, allow, roots []string, temp string) []string {
	out := FilterEnv(env, allow)
	get := func(name string) (string, bool) {
		for i := len(out) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(out[i], name+"="); ok {
				return v, true
			}
		}
		return "", false
	}
	set := func(name, value string) {
		kept := out[:0]
		for _, kv := range out {
			if !strings.HasPrefix(kv, name+"=") {
				kept = append(kept, kv)
			}
		}
		out = append(kept, name+"="+value)
	}
	home, _ := get("HOME")
	for _, c := range cacheVars {
		v, ok := get(c.name)
		if !ok && home != "" {
			v = filepath.Join(home, c.home)
		}
		if v != "" && filepath.IsAbs(v) && fspath.WithinAny(filepath.Clean(v), roots) {
			continue
		}
		set(c.name, filepath.Join(temp, c.sub))
	}
	set("TMPDIR", temp)
	// npm would otherwise try the network for update checks.
	set("npm_config_update_notifier", "false")
	return out
}
