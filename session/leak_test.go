package session

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/coding-agent/coding-agent/editorsync"
	"github.com/coding-agent/coding-agent/session/models"
	"github.com/coding-agent/coding-agent/tools"
)

// goroutines returns the stacks of the running goroutines by id.
func goroutines() map[string]string {
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

// checkNoNewGoroutines fails when goroutines that did not run at before
// still run: a resource check like tailscale's tstest.ResourceCheck. It
// yields the processor a bounded number of times for goroutines that
// signalled their owner and are returning, and never sleeps.
func checkNoNewGoroutines(t *testing.T, before map[string]string) {
	t.Helper()
	var leaked []string
	for range 10000 {
		leaked = leaked[:0]
		for id, stack := range goroutines() {
			if _, ok := before[id]; !ok {
				leaked = append(leaked, stack)
			}
		}
		if len(leaked) == 0 {
			return
		}
		runtime.Gosched()
	}
	t.Errorf("%d goroutines outlived Shutdown:\n\n%s", len(leaked), strings.Join(leaked, "\n\n"))
}

// TestShutdownJoinsEveryGoroutine checks issue 10 #8: after Env.Shutdown,
// nothing the environment or its sessions started still runs — the
// sandbox probe, the delayed probe start, subscribers' and attached
// openers' queues, the file watcher, tool calls.
func TestShutdownJoinsEveryGoroutine(t *testing.T) {
	before := goroutines()
	env := &Env{DataDir: t.TempDir(), Getenv: func(string) string { return "" }}
	if err := env.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	m := &scriptModel{responses: [][]models.Event{
		concat(
			toolCall(0, "call_b", "bash", `{"command":"echo hi > a.txt"}`),
			toolCall(1, "call_w", "write", `{"path":"b.txt","content":"b"}`),
			[]models.Event{done(models.StopToolUse)},
		),
		{text("done"), done(models.StopEndTurn)},
	}}
	s, err := env.NewSession(Options{Cwd: t.TempDir(), Model: m, Preset: tools.FullAccess,
		OnEvent: func(Event) {}, OnFilesChanged: func([]editorsync.Change) {}})
	if err != nil {
		t.Fatal(err)
	}
	s.Subscribe(func(Event) {}) // left subscribed
	if _, _, err := env.OpenSession(s.ID(), Options{OnEvent: func(Event) {}}); err != nil {
		t.Fatal(err) // left attached
	}
	if _, err := s.Prompt(context.Background(), []Content{Text("go")}); err != nil {
		t.Fatal(err)
	}
	env.Shutdown()
	checkNoNewGoroutines(t, before)
	if _, err := s.Prompt(context.Background(), []Content{Text("again")}); err == nil {
		t.Error("a session of a shut down environment still prompts")
	}
	s.Close() // after Shutdown: nothing left to do, and no hang
}
