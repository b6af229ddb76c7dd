package session

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/coding-agent/coding-agent/sandbox"
)

// The sandbox probe runs a helper process (tens of milliseconds), which
// initialize must not wait for: an editor spawns the agent and waits for
// that answer. So the probe starts in the background at start-up, and
// initialize reports the last probe's result, kept in the data directory
// and valid only for the same kernel, user, binary and namespace settings.
// Commands always wait for the fresh probe: a stale cache can only make
// initialize's report wrong, never run a command unsandboxed.

// probeCacheFile is the cache's name in the data directory.
const probeCacheFile = "sandbox-probe.json"

type probeCache struct {
	Key    string         `json:"key"`
	Status sandbox.Status `json:"status"`
}

// probeKey describes what the probe's result depends on.
func probeKey() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s uid=%d", runtime.GOOS, runtime.GOARCH, os.Getuid())
	if exe, err := os.Executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			fmt.Fprintf(&b, " exe=%s:%d:%d", exe, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	for _, f := range []string{
		"/proc/sys/kernel/osrelease",
		"/proc/sys/kernel/unprivileged_userns_clone",
		"/proc/sys/user/max_user_namespaces",
		"/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
		"/sys/kernel/security/lsm",
	} {
		if v, err := os.ReadFile(f); err == nil {
			fmt.Fprintf(&b, " %s=%s", filepath.Base(f), strings.TrimSpace(string(v)))
		}
	}
	return b.String()
}

// cachedProbe returns the cached probe result when it is still valid. The
// file is read once per Env: start-up and initialize both ask.
func (e *Env) cachedProbe() (sandbox.Status, bool) {
	e.cacheMu.Lock()
	defer e.cacheMu.Unlock()
	if !e.cacheRead {
		e.cached, e.cachedOK = e.readProbeCache()
		e.cacheRead = true
	}
	return e.cached, e.cachedOK
}

func (e *Env) readProbeCache() (sandbox.Status, bool) {
	if e.DataDir == "" {
		return sandbox.Status{}, false
	}
	b, err := os.ReadFile(filepath.Join(e.DataDir, probeCacheFile))
	if err != nil {
		return sandbox.Status{}, false
	}
	var c probeCache
	if json.Unmarshal(b, &c) != nil || c.Key != probeKey() {
		return sandbox.Status{}, false
	}
	return c.Status, true
}

// saveProbe keeps st for the next start.
func (e *Env) saveProbe(st sandbox.Status) {
	if e.DataDir == "" {
		return
	}
	if old, ok := e.cachedProbe(); ok && old.Available == st.Available && old.Kind == st.Kind && old.Reason == st.Reason {
		return
	}
	b, err := json.Marshal(probeCache{Key: probeKey(), Status: st})
	if err != nil {
		return
	}
	e.cacheMu.Lock()
	e.cached, e.cachedOK, e.cacheRead = st, true, true
	e.cacheMu.Unlock()
	if err := os.MkdirAll(e.DataDir, 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(e.DataDir, probeCacheFile+".*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), filepath.Join(e.DataDir, probeCacheFile)) != nil {
		os.Remove(tmp.Name())
	}
}

// reportedSandbox is what initialize says about the sandbox: the fresh
// probe if it has finished, else a valid cached result, else the fresh
// probe after all.
func (e *Env) reportedSandbox(ctx context.Context) sandbox.Status {
	select {
	case <-e.probed:
		return e.sbStatus
	default:
	}
	if st, ok := e.cachedProbe(); ok {
		return st
	}
	return e.sandboxStatus(ctx)
}
