package session

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/coding-agent/coding-agent/sandbox"
)

func TestProbeCache(t *testing.T) {
	data := t.TempDir()
	e := &Env{DataDir: data}
	e.init()
	if _, ok := e.cachedProbe(); ok {
		t.Fatal("a cache before any probe")
	}
	st := e.sandboxStatus(context.Background())
	got, ok := e.cachedProbe()
	if !ok || got.Available != st.Available || got.Kind != st.Kind {
		t.Fatalf("cache after the probe: %+v %v, want %+v", got, ok, st)
	}
	// A new process reports the cached result before its own probe ends.
	e2 := &Env{DataDir: data}
	e2.init()
	if r := e2.reportedSandbox(context.Background()); r.Kind != st.Kind || r.Available != st.Available {
		t.Errorf("reported %+v, want the cached %+v", r, st)
	}
	// A cache written for another kernel, user or binary is ignored by
	// the next process.
	os.WriteFile(filepath.Join(data, probeCacheFile), []byte(`{"key":"other machine","status":{"available":true,"kind":"seatbelt"}}`), 0o600)
	e3 := &Env{DataDir: data}
	e3.init()
	if _, ok := e3.cachedProbe(); ok {
		t.Error("a cache with another key was used")
	}
	// Without a valid cache, initialize waits for the real probe.
	if r := e3.reportedSandbox(context.Background()); r.Kind == sandbox.KindSeatbelt {
		t.Errorf("reported the invalid cache: %+v", r)
	}
}
