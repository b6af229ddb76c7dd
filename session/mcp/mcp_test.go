package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coding-agent/coding-agent/session/mcp/mcptest"
	"github.com/coding-agent/coding-agent/tools"
)

// syncBuffer is a log destination safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fixture is a stdio server config running this test binary as an MCP
// server in mode.
func fixture(name, mode string, env ...string) ServerConfig {
	return ServerConfig{Name: name, Type: Stdio, Command: os.Args[0], Env: append([]string{mcptest.Fixture(mode)}, env...)}
}

func testOptions(t *testing.T, logs *syncBuffer) Options {
	t.Helper()
	o := Options{Dir: t.TempDir(), Outputs: tools.NewOutputStore(t.TempDir()), StartTimeout: 20 * time.Second}
	if logs != nil {
		o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return o
}

func toolNamed(t *testing.T, set *Set, name string) *Tool {
	t.Helper()
	for _, tl := range set.Tools(context.Background()) {
		if tl.Name() == name {
			return tl
		}
	}
	var names []string
	for _, tl := range set.Tools(context.Background()) {
		names = append(names, tl.Name())
	}
	t.Fatalf("no tool %s; tools: %v", name, names)
	return nil
}

func call(t *testing.T, tl *Tool, args string) (Result, error) {
	t.Helper()
	m, err := tl.Validate(json.RawMessage(args))
	if err != nil {
		t.Fatalf("Validate(%s): %v", args, err)
	}
	return tl.Call(context.Background(), Call{ID: "call_1", Args: m})
}

func TestFixtureTools(t *testing.T) {
	m := mcptest.Marker(t)
	set := Start(context.Background(), []ServerConfig{fixture("fx", "serve", m, "FIXTURE_VALUE=from-client")}, testOptions(t, nil))
	defer func() { set.Close(); mcptest.WaitGone(t, m) }()
	if f := set.Failures(); len(f) > 0 {
		t.Fatalf("failures: %v", f)
	}
	add := toolNamed(t, set, "mcp__fx__add")
	if !add.ReadOnly() || add.Kind() != "read" || add.Title() != "fx · add" || add.Description() != "Adds a and b." {
		t.Errorf("add: readOnly %v kind %q title %q desc %q", add.ReadOnly(), add.Kind(), add.Title(), add.Description())
	}
	if !strings.Contains(string(add.Schema()), `"minimum"`) {
		t.Errorf("schema lost keywords: %s", add.Schema())
	}
	res, err := call(t, add, `{"a":2,"b":3}`)
	if err != nil || res.Text != "5" || res.IsError || string(res.Structured) != `{"sum":5}` {
		t.Errorf("add = %+v, %v", res, err)
	}

	// Invalid arguments are refused by the schema, with the reason.
	for _, bad := range []string{`{"a":-1,"b":3}`, `{"a":1,"b":"x"}`, `{"a":1}`, `{"a":1,"b":2,"c":3}`, `[1]`, `{"a":`} {
		_, err := add.Validate(json.RawMessage(bad))
		var ve *tools.ValidationError
		if err == nil || !errorsAs(err, &ve) {
			t.Errorf("Validate(%s) = %v, want a ValidationError", bad, err)
		}
	}
	// … and none of them reached the server.
	res, err = call(t, toolNamed(t, set, "mcp__fx__dispatched"), `{}`)
	if err != nil || res.Text != "1" {
		t.Errorf("dispatched = %q, %v; want 1", res.Text, err)
	}

	fail := toolNamed(t, set, "mcp__fx__fail")
	if fail.ReadOnly() || fail.Kind() != "other" {
		t.Errorf("fail: readOnly %v kind %q", fail.ReadOnly(), fail.Kind())
	}
	if res, err := call(t, fail, `{}`); err != nil || !res.IsError || res.Text != "it broke" {
		t.Errorf("fail = %+v, %v", res, err)
	}

	res, err = call(t, toolNamed(t, set, "mcp__fx__media"), `{}`)
	if err != nil || len(res.Content) != 3 {
		t.Fatalf("media = %+v, %v", res, err)
	}
	if c := res.Content[0]; c.Type != "image" || c.MimeType != "image/png" || c.Data != "iVBORw==" {
		t.Errorf("image = %+v", c)
	}
	if c := res.Content[1]; c.Type != "resource" || c.Resource.URI != "file:///x.txt" || *c.Resource.Text != "hello" {
		t.Errorf("resource = %+v", c)
	}
	if c := res.Content[2]; c.Type != "resource_link" || c.URI != "file:///y.txt" {
		t.Errorf("resource link = %+v", c)
	}
	if !strings.Contains(res.Text, "[image: image/png, 4 bytes]") || !strings.Contains(res.Text, "hello") {
		t.Errorf("model text = %q", res.Text)
	}

	// The client's variables reach the server.
	if res, err := call(t, toolNamed(t, set, "mcp__fx__env"), `{}`); err != nil || res.Text != "from-client" {
		t.Errorf("env = %q, %v", res.Text, err)
	}
}

func errorsAs(err error, target **tools.ValidationError) bool {
	ve, ok := err.(*tools.ValidationError)
	if ok {
		*target = ve
	}
	return ok
}

func TestBigResultIsCutAndRetained(t *testing.T) {
	opts := testOptions(t, nil)
	set := Start(context.Background(), []ServerConfig{fixture("fx", "serve")}, opts)
	defer set.Close()
	res, err := call(t, toolNamed(t, set, "mcp__fx__big"), `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(res.Text, "\n"); n > tools.MaxLines+3 || len(res.Text) > tools.MaxBytes+300 {
		t.Errorf("model text has %d lines, %d bytes", n, len(res.Text))
	}
	if !strings.HasPrefix(res.Text, "line 1\n") || !strings.Contains(res.Text, "[Output truncated: showing the first 2000 of 3001 lines") {
		t.Errorf("model text: %q … %q", res.Text[:20], res.Text[len(res.Text)-200:])
	}
	full, err := os.ReadFile(res.FullOutputPath)
	if err != nil || !strings.HasSuffix(string(full), "line 3000\n") {
		t.Errorf("retained output %s: %v (%d bytes)", res.FullOutputPath, err, len(full))
	}
	if list, _ := opts.Outputs.List(); len(list) != 1 {
		t.Errorf("outputs listed: %v", list)
	}
}

func TestStartFailuresDoNotFailTheSet(t *testing.T) {
	m := mcptest.Marker(t)
	logs := &syncBuffer{}
	opts := testOptions(t, logs)
	opts.StartTimeout = 2 * time.Second
	set := Start(context.Background(), []ServerConfig{
		fixture("quits", "exit", m),
		fixture("hangs", "hang", m),
		{Name: "missing", Type: Stdio, Command: "no-such-mcp-server-anywhere"},
		{Name: "nobody", Type: HTTP, URL: "http://127.0.0.1:1/mcp"},
		fixture("works", "serve", m),
	}, opts)
	defer func() { set.Close(); mcptest.WaitGone(t, m) }()
	got := map[string]string{}
	for _, f := range set.Failures() {
		got[f.Server] = f.Err.Error()
		if !strings.Contains(f.Error(), f.Server) {
			t.Errorf("failure %q does not name its server", f.Error())
		}
	}
	want := map[string]string{
		"quits":   "fixture: missing API token, giving up",
		"hangs":   "timed out after 2s",
		"missing": `"no-such-mcp-server-anywhere" not found`,
		"nobody":  "initialize failed",
	}
	for name, w := range want {
		if !strings.Contains(got[name], w) {
			t.Errorf("failure of %s = %q, want it to contain %q", name, got[name], w)
		}
	}
	if strings.ContainsRune(got["quits"], 0x1b) {
		t.Errorf("an escape sequence of the server's stderr is in its failure: %q", got["quits"])
	}
	if !strings.Contains(got["quits"], "exit status 3") {
		t.Errorf("exit status missing: %q", got["quits"])
	}
	if s := set.Servers(); !slices.Equal(s, []string{"works"}) {
		t.Errorf("started servers = %v", s)
	}
	if res, err := call(t, toolNamed(t, set, "mcp__works__add"), `{"a":1,"b":1}`); err != nil || res.Text != "2" {
		t.Errorf("add = %+v, %v", res, err)
	}
	// The hung server was killed at its timeout, not left running.
	if !strings.Contains(logs.String(), "fixture ready") {
		t.Errorf("the working server's stderr is not in the log:\n%s", logs.String())
	}
}

func TestListChangedRefreshesTools(t *testing.T) {
	changed := make(chan string, 4)
	opts := testOptions(t, nil)
	opts.OnToolsChanged = func(s string) { changed <- s }
	set := Start(context.Background(), []ServerConfig{fixture("fx", "serve")}, opts)
	defer set.Close()
	if set.Lookup("mcp__fx__grown") != nil {
		t.Fatal("grown exists before grow")
	}
	if _, err := call(t, toolNamed(t, set, "mcp__fx__grow"), `{}`); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-changed:
		if s != "fx" {
			t.Errorf("changed server = %q", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no tools/list_changed")
	}
	res, err := call(t, toolNamed(t, set, "mcp__fx__grown"), `{}`)
	if err != nil || res.Text != "grown" {
		t.Errorf("grown = %+v, %v", res, err)
	}
}

func TestCancelSendsCancelled(t *testing.T) {
	flag := filepath.Join(t.TempDir(), "cancelled")
	set := Start(context.Background(), []ServerConfig{fixture("fx", "serve", "FIXTURE_CANCELLED="+flag)}, testOptions(t, nil))
	defer set.Close()
	slow := toolNamed(t, set, "mcp__fx__slow")
	ctx, cancel := context.WithCancel(context.Background())
	progress := make(chan string, 4)
	done := make(chan error, 1)
	go func() {
		_, err := slow.Call(ctx, Call{ID: "c", Args: map[string]any{}, Progress: func(s string) { progress <- s }})
		done <- err
	}()
	select {
	case p := <-progress:
		if p != "1/2 half way" {
			t.Errorf("progress = %q", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no progress")
	}
	cancel()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "notifications/cancelled") {
			t.Errorf("err = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not end on cancel")
	}
	// The server saw the cancellation (its handler's context ended).
	deadline := time.Now().Add(10 * time.Second)
	for {
		if b, _ := os.ReadFile(flag); string(b) == "cancelled" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server never saw notifications/cancelled")
		}
		time.Sleep(10 * time.Millisecond) // the server writes a file: no event to wait on
	}
}

func TestCloseKillsDescendants(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("descendants outside the group are reaped on Linux only")
	}
	m := mcptest.Marker(t)
	logs := &syncBuffer{}
	set := Start(context.Background(), []ServerConfig{fixture("fx", "spawn", m)}, testOptions(t, logs))
	if len(set.Failures()) > 0 {
		t.Fatal(set.Failures())
	}
	if n := len(mcptest.ProcessesWith(m)); n < 3 {
		t.Fatalf("%d processes with the marker, want supervisor, server and the setsid sleep", n)
	}
	set.Close()
	mcptest.WaitGone(t, m)
}

// TestAgentKilledServersDie kills the agent with SIGKILL, which no code of
// it survives: the supervisor sees its lifeline close and kills the
// server's group and its descendants.
func TestAgentKilledServersDie(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checked in /proc")
	}
	m := mcptest.Marker(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), agentEnv+"=1", "MARKER="+m)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("agent said %q, %v", line, err)
	}
	if n := len(mcptest.ProcessesWith(m)); n < 3 {
		t.Errorf("%d processes with the marker before the kill", n)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	mcptest.WaitGone(t, m)
}
