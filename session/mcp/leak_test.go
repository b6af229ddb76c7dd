package mcp

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"
)

func goroutineIDs() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]string{}
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		head, _, _ := strings.Cut(string(g), " [")
		out[head] = string(g)
	}
	return out
}

// TestCloseJoinsEveryGoroutine: once a set is closed, nothing it started
// runs any more — the stderr readers, the process waiters, the SDK's
// connections (after a call and a cancelled call). It yields the processor
// a bounded number of times, and never sleeps.
func TestCloseJoinsEveryGoroutine(t *testing.T) {
	before := goroutineIDs()
	set := Start(context.Background(), []ServerConfig{fixture("fx", "serve"), fixture("quits", "exit")}, testOptions(t, nil))
	if _, err := call(t, toolNamed(t, set, "mcp__fx__add"), `{"a":1,"b":2}`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	progress := make(chan string, 1)
	done := make(chan error)
	go func() {
		_, err := toolNamed(t, set, "mcp__fx__slow").Call(ctx, Call{Args: map[string]any{}, Progress: func(s string) { progress <- s }})
		done <- err
	}()
	<-progress
	cancel()
	<-done
	set.Close()
	var leaked []string
	for range 10000 {
		leaked = leaked[:0]
		for id, stack := range goroutineIDs() {
			if _, ok := before[id]; !ok {
				leaked = append(leaked, stack)
			}
		}
		if len(leaked) == 0 {
			return
		}
		runtime.Gosched()
	}
	t.Errorf("%d goroutines outlived Close:\n\n%s", len(leaked), strings.Join(leaked, "\n\n"))
}

// TestCloseJoinsEveryGoroutineHTTP is the same over streamable HTTP and
// SSE (server-everything from npm): no connection outlives Close.
func TestCloseJoinsEveryGoroutineHTTP(t *testing.T) {
	httpURL := everythingHTTP(t, "streamableHttp")
	sseURL := everythingHTTP(t, "sse")
	before := goroutineIDs()
	set := Start(context.Background(), []ServerConfig{
		{Name: "h", Type: HTTP, URL: httpURL + "/mcp"},
		{Name: "s", Type: SSE, URL: sseURL + "/sse"},
	}, testOptions(t, nil))
	if f := set.Failures(); len(f) > 0 {
		t.Fatal(f)
	}
	for _, n := range []string{"mcp__h__echo", "mcp__s__echo"} {
		if _, err := call(t, toolNamed(t, set, n), `{"message":"x"}`); err != nil {
			t.Fatal(err)
		}
	}
	set.Close()
	var leaked []string
	for range 10000 {
		leaked = leaked[:0]
		for id, stack := range goroutineIDs() {
			if _, ok := before[id]; !ok {
				leaked = append(leaked, stack)
			}
		}
		if len(leaked) == 0 {
			return
		}
		runtime.Gosched()
	}
	t.Errorf("%d goroutines outlived Close:\n\n%s", len(leaked), strings.Join(leaked, "\n\n"))
}
