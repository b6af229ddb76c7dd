package session

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coding-agent/coding-agent/session/models/modeltest"
	"github.com/coding-agent/coding-agent/tools"
)

// lifecycleClient starts an agent whose model is srv and a client that
// records, in arrival order, the updates and permission requests it gets.
func lifecycleClient(t *testing.T, srv *modeltest.Server, answer string) (*wireClient, *[]string, *sync.Mutex) {
	t.Helper()
	getenv := func(k string) string {
		return map[string]string{"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": srv.BaseURL}[k]
	}
	c := startAgent(t, &Env{DataDir: t.TempDir(), Getenv: getenv})
	var mu sync.Mutex
	var order []string
	c.onRequest = func(method string, params json.RawMessage) (any, *wireError) {
		var p struct {
			ToolCall struct{ ToolCallID, Status string }
		}
		json.Unmarshal(params, &p)
		mu.Lock()
		order = append(order, "permission "+p.ToolCall.Status)
		mu.Unlock()
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": answer}}, nil
	}
	return c, &order, &mu
}

type wireUpdateMsg struct {
	SessionUpdate string          `json:"sessionUpdate"`
	ToolCallID    string          `json:"toolCallId"`
	Status        string          `json:"status"`
	Title         string          `json:"title"`
	RawInput      json.RawMessage `json:"rawInput"`
	Content       json.RawMessage `json:"content"`
}

func updatesOf(t *testing.T, ms []wireMsg) []wireUpdateMsg {
	var out []wireUpdateMsg
	for _, m := range ms {
		if m.Method != "session/update" {
			continue
		}
		var n struct{ Update wireUpdateMsg }
		if err := json.Unmarshal(m.Params, &n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n.Update)
	}
	return out
}

// TestToolCallLifecycleOverACP drives two turns whose model reuses the tool
// call id "call_1" (as local servers do): the client sees ids unique in the
// session, a first tool_call carrying the arguments parsed so far, no echo
// of its own prompt, and the permission request asked while the call is
// pending, with in_progress only after the answer.
func TestToolCallLifecycleOverACP(t *testing.T) {
	cwd := t.TempDir()
	write := func(name string) modeltest.Response {
		return modeltest.Response{Steps: []modeltest.Step{modeltest.Tool("call_1", "write",
			`{"path":"`+name+`",`, `"content":"hello\n",`, `"justification":"asked"}`)}}
	}
	srv := modeltest.NewAnthropicServer(t, modeltest.Script{
		write("a.txt"), {Steps: []modeltest.Step{modeltest.Text("done")}},
		write("b.txt"), {Steps: []modeltest.Step{modeltest.Text("done")}},
	})
	c, _, _ := lifecycleClient(t, srv, "allow_once")
	sid := newSession(t, c, cwd, nil)
	c.drain()
	var ids []string
	for _, prompt := range []string{"write a", "write b"} {
		if err := c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": prompt}}}, nil); err != nil {
			t.Fatal(err)
		}
		ups := updatesOf(t, c.drain())
		for _, u := range ups {
			if u.SessionUpdate == "user_message_chunk" {
				t.Errorf("the prompt was echoed back live: %+v", u)
			}
		}
		var first *wireUpdateMsg
		for i, u := range ups {
			if u.SessionUpdate == "tool_call" {
				first = &ups[i]
				ids = append(ids, u.ToolCallID)
			}
		}
		if first == nil {
			t.Fatalf("no tool_call in %+v", ups)
		}
		if string(first.RawInput) != "{}" {
			t.Errorf("first tool_call rawInput = %s, want {} (nothing parsed yet)", first.RawInput)
		}
		sawPartial := false
		for _, u := range ups {
			if u.SessionUpdate == "tool_call_update" && u.Status == "" && strings.Contains(string(u.RawInput), `"path"`) {
				sawPartial = true
			}
		}
		if !sawPartial {
			t.Errorf("no tool_call_update carried the partial arguments: %+v", ups)
		}
	}
	if len(ids) != 2 || ids[0] == ids[1] {
		t.Errorf("tool call ids %q: want two, distinct", ids)
	}
	for _, name := range []string{"a.txt", "b.txt"} {
		if b, err := os.ReadFile(filepath.Join(cwd, name)); err != nil || string(b) != "hello\n" {
			t.Errorf("%s = %q, %v", name, b, err)
		}
	}
	// The model is still told its results under its own id.
	reqs := srv.Requests()
	if body := string(reqs[len(reqs)-1].Body); !strings.Contains(body, `"tool_use_id":"call_1"`) {
		t.Errorf("the model was not told its result under its own id: %s", body)
	}
}

// TestPermissionAskedWhilePending checks the order on the wire: the
// request says pending and no in_progress was sent before its answer.
func TestPermissionAskedWhilePending(t *testing.T) {
	cwd := t.TempDir()
	srv := modeltest.NewAnthropicServer(t, modeltest.Script{
		{Steps: []modeltest.Step{modeltest.Tool("toolu_1", "write", `{"path":"x.txt","content":"x"}`)}},
		{Steps: []modeltest.Step{modeltest.Text("ok")}},
	})
	c, order, mu := lifecycleClient(t, srv, "allow_once")
	sid := newSession(t, c, cwd, nil)
	c.drain()
	var seenAt []string // what the client saw, in order
	c.mu.Lock()
	c.onNotify = func(m wireMsg) {
		if m.Method != "session/update" {
			return
		}
		var n struct{ Update wireUpdateMsg }
		json.Unmarshal(m.Params, &n)
		if n.Update.Status != "" {
			mu.Lock()
			*order = append(*order, n.Update.SessionUpdate+" "+n.Update.Status)
			mu.Unlock()
		}
	}
	c.mu.Unlock()
	if err := c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "go"}}}, nil); err != nil {
		t.Fatal(err)
	}
	c.drain()
	mu.Lock()
	seenAt = append(seenAt, *order...)
	mu.Unlock()
	want := "tool_call pending,permission pending,tool_call_update in_progress,tool_call_update completed"
	if got := strings.Join(seenAt, ","); got != want {
		t.Errorf("order %q,\nwant  %q", got, want)
	}
}

// TestAllowAlwaysScoped: "always allow" covers exactly the path that was
// asked about, for this session only, and still does after session/load
// through another connection.
func TestAllowAlwaysScoped(t *testing.T) {
	data, cwd := t.TempDir(), t.TempDir()
	var mu sync.Mutex
	asked := 0
	connect := func() *wireClient {
		c := startAgent(t, &Env{DataDir: data})
		c.onRequest = func(method string, params json.RawMessage) (any, *wireError) {
			mu.Lock()
			asked++
			mu.Unlock()
			return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_always"}}, nil
		}
		return c
	}
	n := 0
	write := func(c *wireClient, sid, path string) {
		t.Helper()
		n++ // new content every time: an unchanged file needs no approval
		var res struct{ IsError bool }
		if err := c.call("_coding-agent/tools/call", map[string]any{"sessionId": sid, "name": "write",
			"arguments": map[string]any{"path": path, "content": strings.Repeat("x", n)}}, &res); err != nil || res.IsError {
			t.Fatalf("write %s: %+v %+v", path, err, res)
		}
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return asked }
	c := connect()
	sid := newSession(t, c, cwd, nil)
	write(c, sid, "a.txt")
	write(c, sid, "a.txt")
	if n := count(); n != 1 {
		t.Fatalf("asked %d times for one path allowed always, want 1", n)
	}
	write(c, sid, "b.txt") // another path: asked again
	if n := count(); n != 2 {
		t.Fatalf("asked %d times after a second path, want 2", n)
	}
	other := newSession(t, c, cwd, nil) // another session: asked again
	write(c, other, "a.txt")
	if n := count(); n != 3 {
		t.Fatalf("another session was not asked (%d requests)", n)
	}
	c.call("session/close", map[string]any{"sessionId": sid}, nil)

	c2 := connect()
	if err := c2.call("session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}, nil); err != nil {
		t.Fatal(err)
	}
	write(c2, sid, "a.txt")
	if n := count(); n != 3 {
		t.Errorf("after session/load the allowed path was asked again (%d requests)", n)
	}
}

// TestServerDefaultPreset: sessions whose client asks for no preset get
// the server's (Env.Preset, else config.json's); a client's choice wins; a
// stored session keeps its own when reopened; the approval timeout default
// comes from config.json.
func TestServerDefaultPreset(t *testing.T) {
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "config.json"), []byte(`{"preset":"workspace-write","approvalTimeoutSeconds":42}`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := &Env{DataDir: data}
	s, err := env.NewSession(Options{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if s.Preset() != tools.WorkspaceWrite || s.opts.ApprovalTimeout != 42*time.Second {
		t.Errorf("from config.json: preset %s, timeout %s", s.Preset(), s.opts.ApprovalTimeout)
	}
	ro, err := env.NewSession(Options{Cwd: t.TempDir(), Preset: tools.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	id := ro.ID()
	s.Close()
	ro.Close()

	flag := &Env{DataDir: data, Preset: tools.FullAccess, ApprovalTimeout: time.Minute}
	s, err = flag.NewSession(Options{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if s.Preset() != tools.FullAccess || s.opts.ApprovalTimeout != time.Minute {
		t.Errorf("from the Env: preset %s, timeout %s", s.Preset(), s.opts.ApprovalTimeout)
	}
	s.Close()
	re, _, err := flag.OpenSession(id, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	if re.Preset() != tools.ReadOnly {
		t.Errorf("a stored read-only session reopened as %s under a full-access default", re.Preset())
	}

	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "config.json"), []byte(`{"preset":"yolo"}`), 0o600)
	if err := (&Env{DataDir: bad}).Start(context.Background()); err == nil || !strings.Contains(err.Error(), "preset") {
		t.Errorf("a bad preset in config.json: %v, want an error naming preset", err)
	}
}
