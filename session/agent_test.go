package session

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coding-agent/coding-agent/rpc"
	"github.com/coding-agent/coding-agent/session/models"
	"github.com/coding-agent/coding-agent/tools"
)

// wireClient is a raw NDJSON JSON-RPC client driving an Agent through the
// real rpc stack over in-process pipes.
type wireClient struct {
	t   *testing.T
	w   io.WriteCloser
	mu  sync.Mutex
	id  int
	res map[int]chan wireMsg
	// onRequest answers agent→client requests (session/request_permission).
	onRequest func(method string, params json.RawMessage) (any, *wireError)
	// onNotify, if set, sees each notification in arrival order, on the
	// reading goroutine, before it is queued. Set it under mu.
	onNotify func(wireMsg)
	notes    chan wireMsg
	commands chan wireMsg // available_commands_update notifications
	done     chan error
}

type wireMsg struct {
	ID     *json.RawMessage `json:"id,omitempty"`
	Method string           `json:"method,omitempty"`
	Params json.RawMessage  `json:"params,omitempty"`
	Result json.RawMessage  `json:"result,omitempty"`
	Error  *wireError       `json:"error,omitempty"`
}

type wireError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// startAgent serves env over pipes and returns a client; the connection
// closes at the end of the test.
func startAgent(t *testing.T, env *Env) *wireClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &wireClient{t: t, w: inW, res: map[int]chan wireMsg{}, notes: make(chan wireMsg, 1000), commands: make(chan wireMsg, 100), done: make(chan error, 1)}
	var agent *Agent
	go func() {
		c.done <- rpc.Serve(context.Background(), inR, outW, func(cl rpc.Client) rpc.Agent {
			agent = NewAgent(env, cl)
			return agent
		}, rpc.Options{})
		outW.Close()
	}()
	go c.read(outR)
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			t.Error("the server did not stop after stdin closed")
		}
		if agent != nil {
			agent.Close()
		}
	})
	// The project's own clients implement the extensions and ask for them.
	c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{
		"_meta": map[string]any{"coding-agent": map[string]any{"extensions": true}}}}, nil)
	return c
}

func (c *wireClient) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var m wireMsg
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			c.t.Errorf("agent sent invalid JSON %q: %v", sc.Text(), err)
			continue
		}
		switch {
		case m.Method != "" && m.ID != nil:
			go c.answer(m)
		case m.Method != "":
			c.mu.Lock()
			on := c.onNotify
			c.mu.Unlock()
			if on != nil {
				on(m)
			}
			if strings.Contains(string(m.Params), `"sessionUpdate":"available_commands_update"`) {
				// Sent after an answer, at a time of its own: kept
				// apart so that tests of what an answer brings see the
				// same updates every run.
				c.commands <- m
				continue
			}
			c.notes <- m
		default:
			var id int
			_ = json.Unmarshal(*m.ID, &id)
			c.mu.Lock()
			ch := c.res[id]
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
	}
}

func (c *wireClient) answer(m wireMsg) {
	var result any = nil
	var werr *wireError
	if c.onRequest != nil {
		result, werr = c.onRequest(m.Method, m.Params)
	} else {
		werr = &wireError{Code: -32601, Message: "no handler"}
	}
	if result == nil && werr == nil {
		return // never answered
	}
	msg := map[string]any{"jsonrpc": "2.0", "id": m.ID}
	if werr != nil {
		msg["error"] = werr
	} else {
		msg["result"] = result
	}
	c.send(msg)
}

func (c *wireClient) send(msg any) {
	b, err := json.Marshal(msg)
	if err != nil {
		c.t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		c.t.Errorf("write: %v", err)
	}
}

// call sends a request and decodes its result into out; it returns the
// JSON-RPC error, if any.
func (c *wireClient) call(method string, params, out any) *wireError {
	c.t.Helper()
	c.mu.Lock()
	c.id++
	id := c.id
	ch := make(chan wireMsg, 1)
	c.res[id] = ch
	c.mu.Unlock()
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	select {
	case m := <-ch:
		if m.Error != nil {
			return m.Error
		}
		if out != nil {
			if err := json.Unmarshal(m.Result, out); err != nil {
				c.t.Fatalf("%s: decoding result %s: %v", method, m.Result, err)
			}
		}
		return nil
	case <-time.After(30 * time.Second):
		c.t.Fatalf("%s: no answer", method)
		return nil
	}
}

func (c *wireClient) notify(method string, params any) {
	c.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// updates drains the notifications received so far, then waits briefly
// for more until the marker update kind appears (or returns what it has).
func (c *wireClient) drain() []wireMsg {
	var out []wireMsg
	for {
		select {
		case m := <-c.notes:
			out = append(out, m)
		default:
			return out
		}
	}
}

func updateKinds(ms []wireMsg) []string {
	var out []string
	for _, m := range ms {
		var n struct {
			Update struct {
				Kind   string `json:"sessionUpdate"`
				Status string `json:"status"`
			} `json:"update"`
		}
		_ = json.Unmarshal(m.Params, &n)
		k := n.Update.Kind
		if n.Update.Status != "" {
			k += ":" + n.Update.Status
		}
		out = append(out, k)
	}
	return out
}

func newSession(t *testing.T, c *wireClient, cwd string, meta map[string]any) string {
	t.Helper()
	params := map[string]any{"cwd": cwd, "mcpServers": []any{}}
	if meta != nil {
		params["_meta"] = map[string]any{"coding-agent": meta}
	}
	var res struct{ SessionID string }
	if err := c.call("session/new", params, &res); err != nil {
		t.Fatalf("session/new: %+v", err)
	}
	return res.SessionID
}

func TestAgentInitialize(t *testing.T) {
	c := startAgent(t, &Env{Version: "1.2.3", DataDir: t.TempDir()})
	var res map[string]any
	if err := c.call("initialize", map[string]any{"protocolVersion": 7}, &res); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	for _, want := range []string{
		`"protocolVersion":1`, `"version":"1.2.3"`, `"loadSession":true`, `"image":true`, `"audio":false`,
		`"tools":["read","bash","edit","write"]`, `"documentSync":{"version":1}`, `"directTools":true`, `"outputs":true`,
		`"sandbox":{"available":`, `"list":{}`, `"resume":{}`, `"close":{}`, `"authMethods":[{`, `"id":"anthropic-api-key"`, `"auth":{"logout":{}}`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("initialize result lacks %s:\n%s", want, b)
		}
	}
}

func TestAgentNewSessionErrors(t *testing.T) {
	dir := t.TempDir()
	c := startAgent(t, &Env{DataDir: t.TempDir()})
	for _, test := range []struct {
		name   string
		params map[string]any
		code   int
		msg    string
	}{
		{"relative cwd", map[string]any{"cwd": "rel", "mcpServers": []any{}}, -32602, "cwd"},
		{"missing cwd", map[string]any{"cwd": filepath.Join(dir, "nope"), "mcpServers": []any{}}, -32602, "does not exist"},
		{"unknown tool", map[string]any{"cwd": dir, "mcpServers": []any{}, "_meta": map[string]any{"coding-agent": map[string]any{"tools": []string{"read", "grep"}}}}, -32602, "read, bash, edit, write"},
		{"unknown preset", map[string]any{"cwd": dir, "mcpServers": []any{}, "_meta": map[string]any{"coding-agent": map[string]any{"preset": "yolo"}}}, -32602, "preset"},
		{"bad additional directory", map[string]any{"cwd": dir, "mcpServers": []any{}, "additionalDirectories": []string{"x"}}, -32602, "additionalDirectories[0]"},
		{"bad approval timeout", map[string]any{"cwd": dir, "mcpServers": []any{}, "_meta": map[string]any{"coding-agent": map[string]any{"approvalTimeoutSeconds": -1}}}, -32602, "approvalTimeoutSeconds"},
	} {
		t.Run(test.name, func(t *testing.T) {
			err := c.call("session/new", test.params, nil)
			if err == nil || err.Code != test.code || !strings.Contains(err.Message, test.msg) {
				t.Errorf("error %+v, want %d containing %q", err, test.code, test.msg)
			}
		})
	}
}

// TestAgentRefusesGitStorageRoots tries session roots inside git's
// storage (issue 12 #4): each session/new is -32602 naming the field, and
// no session is created; a repository's work tree is accepted.
func TestAgentRefusesGitStorageRoots(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required for this test")
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo, bare := filepath.Join(base, "repo"), filepath.Join(base, "project.git")
	for _, args := range [][]string{{"init", "-q", repo}, {"init", "-q", "--bare", bare}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	if err := os.Symlink(filepath.Join(repo, ".git"), filepath.Join(base, "gitlink")); err != nil {
		t.Fatal(err)
	}
	cfg, _ := os.ReadFile(filepath.Join(repo, ".git", "config"))
	c := startAgent(t, &Env{DataDir: t.TempDir()})
	for _, test := range []struct {
		name, cwd, extra, field string
	}{
		{"cwd is .git", filepath.Join(repo, ".git"), "", "cwd"},
		{"cwd below .git", filepath.Join(repo, ".git", "hooks"), "", "cwd"},
		{"cwd is a bare repository", bare, "", "cwd"},
		{"cwd is a link to .git", filepath.Join(base, "gitlink"), "", "cwd"},
		{"additional directory is .git", repo, filepath.Join(repo, ".git"), "additionalDirectories[0]"},
		{"additional directory is a bare repository", repo, bare, "additionalDirectories[0]"},
	} {
		t.Run(test.name, func(t *testing.T) {
			params := map[string]any{"cwd": test.cwd, "mcpServers": []any{}, "_meta": map[string]any{"coding-agent": map[string]any{"preset": "workspace-write"}}}
			if test.extra != "" {
				params["additionalDirectories"] = []string{test.extra}
			}
			err := c.call("session/new", params, nil)
			if err == nil || err.Code != -32602 || !strings.Contains(err.Message, test.field) || !strings.Contains(err.Message, "git's storage") {
				t.Errorf("error %+v, want -32602 naming %s and git's storage", err, test.field)
			}
		})
	}
	newSession(t, c, repo, nil) // the work tree itself is fine
	if got, _ := os.ReadFile(filepath.Join(repo, ".git", "config")); string(got) != string(cfg) {
		t.Error(".git/config changed")
	}
}

func TestAgentToolSelection(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f.txt"), []byte("x\n"), 0o644)
	c := startAgent(t, &Env{DataDir: t.TempDir()})
	none := newSession(t, c, dir, map[string]any{"tools": []string{}})
	err := c.call("_coding-agent/tools/call", map[string]any{"sessionId": none, "name": "read", "arguments": map[string]any{"path": "f.txt"}}, nil)
	if err == nil || err.Code != -32602 || !strings.Contains(err.Message, "not enabled") {
		t.Errorf("tools [] then read: %+v", err)
	}
	dup := newSession(t, c, dir, map[string]any{"tools": []string{"read", "read"}})
	var res struct{ IsError bool }
	if err := c.call("_coding-agent/tools/call", map[string]any{"sessionId": dup, "name": "read", "arguments": map[string]any{"path": "f.txt"}}, &res); err != nil || res.IsError {
		t.Errorf("read in a session with read: %+v %+v", err, res)
	}
}

func TestAgentModesAndConfigOptions(t *testing.T) {
	c := startAgent(t, &Env{DataDir: t.TempDir()})
	sid := newSession(t, c, t.TempDir(), nil)
	c.drain()
	if err := c.call("session/set_mode", map[string]any{"sessionId": sid, "modeId": "full-access"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := updateKinds(c.drainWait(2)); strings.Join(got, ",") != "current_mode_update,config_option_update" {
		t.Errorf("updates after set_mode: %q", got)
	}
	if err := c.call("session/set_mode", map[string]any{"sessionId": sid, "modeId": "yolo"}, nil); err == nil || err.Code != -32602 {
		t.Errorf("unknown mode: %+v", err)
	}
	var res struct {
		ConfigOptions []struct{ ID, CurrentValue string }
	}
	if err := c.call("session/set_config_option", map[string]any{"sessionId": sid, "configId": "preset", "value": "workspace-write"}, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.ConfigOptions) != 3 || res.ConfigOptions[0].CurrentValue != "workspace-write" || res.ConfigOptions[1].ID != "model" || res.ConfigOptions[2].ID != "thought_level" {
		t.Errorf("config options %+v", res.ConfigOptions)
	}
	if err := c.call("session/set_config_option", map[string]any{"sessionId": sid, "configId": "thought_level", "value": "high"}, &res); err != nil || res.ConfigOptions[2].CurrentValue != "high" {
		t.Errorf("thought_level high: %+v %+v", res.ConfigOptions, err)
	}
	if err := c.call("session/set_config_option", map[string]any{"sessionId": sid, "configId": "thought_level", "value": "extreme"}, nil); err == nil || err.Code != -32602 {
		t.Errorf("unknown thought level: %+v", err)
	}
	if err := c.call("session/set_config_option", map[string]any{"sessionId": sid, "configId": "colour", "value": "x"}, nil); err == nil || err.Code != -32602 || !strings.Contains(err.Message, "configId") {
		t.Errorf("unknown config option: %+v", err)
	}
}

func TestAgentUnknownSession(t *testing.T) {
	c := startAgent(t, &Env{DataDir: t.TempDir()})
	for method, params := range map[string]map[string]any{
		"session/prompt":            {"sessionId": "sess_x", "prompt": []any{map[string]any{"type": "text", "text": "hi"}}},
		"session/set_mode":          {"sessionId": "sess_x", "modeId": "read-only"},
		"session/set_config_option": {"sessionId": "sess_x", "configId": "preset", "value": "read-only"},
		"session/close":             {"sessionId": "sess_x"},
		"session/load":              {"sessionId": "sess_x", "cwd": "/", "mcpServers": []any{}},
		"session/resume":            {"sessionId": "sess_x", "cwd": "/"},
		"_coding-agent/tools/call":  {"sessionId": "sess_x", "name": "read", "arguments": map[string]any{"path": "x"}},
	} {
		err := c.call(method, params, nil)
		if err == nil || err.Code != -32002 || !strings.Contains(string(err.Data), `"sess_x"`) {
			t.Errorf("%s: %+v, want -32002 with data.sessionId", method, err)
		}
	}
}

func TestAgentPromptWithoutModel(t *testing.T) {
	env := &Env{DataDir: t.TempDir(), Getenv: func(string) string { return "" }}
	c := startAgent(t, env)
	sid := newSession(t, c, t.TempDir(), nil)
	err := c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}, nil)
	if err == nil || err.Code != -32000 || !strings.Contains(string(err.Data), "ANTHROPIC_API_KEY") || !strings.Contains(err.Message, "--model") {
		t.Errorf("prompt without a model: %+v", err)
	}
}

// TestAgentApprovals covers every outcome of a permission request: only an
// explicit allow_once dispatches the change.
func TestAgentApprovals(t *testing.T) {
	for _, test := range []struct {
		name    string
		answer  func(params json.RawMessage) (any, *wireError)
		timeout float64
		written bool
		msg     string
	}{
		{name: "allow", answer: selected("allow_once"), written: true},
		{name: "reject", answer: selected("reject_once"), msg: "rejected"},
		{name: "cancelled outcome", answer: func(json.RawMessage) (any, *wireError) {
			return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}, nil
		}, msg: "cancelled"},
		{name: "error answer", answer: func(json.RawMessage) (any, *wireError) {
			return nil, &wireError{Code: -32603, Message: "editor exploded"}
		}, msg: "editor exploded"},
		{name: "unknown option", answer: selected("allow_forever"), msg: "unknown option"},
		{name: "allow always", answer: selected("allow_always"), written: true},
		{name: "timeout", answer: func(json.RawMessage) (any, *wireError) { return nil, nil }, timeout: 0.05, msg: "timed out"},
	} {
		t.Run(test.name, func(t *testing.T) {
			dir := t.TempDir()
			c := startAgent(t, &Env{DataDir: t.TempDir()})
			var mu sync.Mutex
			var asked []json.RawMessage
			c.onRequest = func(method string, params json.RawMessage) (any, *wireError) {
				mu.Lock()
				asked = append(asked, params)
				mu.Unlock()
				if method != "session/request_permission" {
					return nil, &wireError{Code: -32601, Message: method}
				}
				return test.answer(params)
			}
			meta := map[string]any{}
			if test.timeout > 0 {
				meta["approvalTimeoutSeconds"] = test.timeout
			}
			sid := newSession(t, c, dir, meta)
			var res struct {
				IsError bool
				Content []struct{ Text string }
			}
			err := c.call("_coding-agent/tools/call", map[string]any{"sessionId": sid, "name": "write",
				"arguments": map[string]any{"path": "out.txt", "content": "new\n", "justification": "Sie wollten es."}}, &res)
			if err != nil {
				t.Fatal(err)
			}
			_, statErr := os.Stat(filepath.Join(dir, "out.txt"))
			if written := statErr == nil; written != test.written || res.IsError == test.written {
				t.Fatalf("written %v isError %v (%+v), want written %v", written, res.IsError, res.Content, test.written)
			}
			if test.msg != "" && !strings.Contains(strings.ToLower(res.Content[0].Text), test.msg) {
				t.Errorf("result %q does not say %q", res.Content[0].Text, test.msg)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(asked) != 1 {
				t.Fatalf("%d permission requests, want 1", len(asked))
			}
			var p struct {
				SessionID string
				ToolCall  struct {
					ToolCallID, Title, Kind string
					Content                 []map[string]any
					Meta                    map[string]map[string]string `json:"_meta"`
				}
				Options []map[string]string
			}
			json.Unmarshal(asked[0], &p)
			if p.SessionID != sid || p.ToolCall.Title != "Write out.txt" || p.ToolCall.Kind != "edit" || len(p.Options) != 3 {
				t.Errorf("permission request %s", asked[0])
			}
			m := p.ToolCall.Meta["coding-agent"]
			if m["justification"] != "Sie wollten es." || m["request"] != "file-change" || m["reason"] == "" {
				t.Errorf("permission _meta %v", m)
			}
		})
	}
}

func selected(option string) func(json.RawMessage) (any, *wireError) {
	return func(json.RawMessage) (any, *wireError) {
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": option}}, nil
	}
}

// TestAgentCancelResolvesPendingApproval: session/cancel while a permission
// request waits → not dispatched, and the client is told to cancel it.
func TestAgentCancelResolvesPendingApproval(t *testing.T) {
	dir := t.TempDir()
	c := startAgent(t, &Env{DataDir: t.TempDir()})
	asked := make(chan struct{}, 1)
	c.onRequest = func(method string, params json.RawMessage) (any, *wireError) {
		asked <- struct{}{}
		return nil, nil // never answers
	}
	sid := newSession(t, c, dir, nil)
	go func() {
		<-asked
		c.notify("session/cancel", map[string]any{"sessionId": sid})
	}()
	var res struct {
		IsError bool
		Content []struct{ Text string }
	}
	if err := c.call("_coding-agent/tools/call", map[string]any{"sessionId": sid, "name": "write", "arguments": map[string]any{"path": "w.txt", "content": "x"}}, &res); err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Content[0].Text, "cancel") {
		t.Errorf("result %+v, want a cancelled error", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "w.txt")); err == nil {
		t.Error("w.txt was written")
	}
	found := false
	for _, m := range c.drainWait(1) {
		if m.Method == "$/cancel_request" {
			found = true
		}
	}
	if !found {
		t.Error("the client was not sent $/cancel_request for the pending permission request")
	}
}

func TestAgentOutputs(t *testing.T) {
	dir := t.TempDir()
	c := startAgent(t, &Env{DataDir: t.TempDir()})
	sid := newSession(t, c, dir, map[string]any{"preset": "full-access"})
	var res struct {
		IsError bool
		Details struct {
			FullOutputPath string `json:"fullOutputPath"`
		}
	}
	if err := c.call("_coding-agent/tools/call", map[string]any{"sessionId": sid, "name": "bash", "arguments": map[string]any{"command": "seq 1 5000"}}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Details.FullOutputPath == "" {
		t.Fatalf("no retained output: %+v", res)
	}
	var list struct {
		Outputs []struct {
			Path       string
			Bytes      int64
			ToolCallID string
		}
	}
	if err := c.call("_coding-agent/outputs/list", map[string]any{}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Outputs) != 1 || list.Outputs[0].Path != res.Details.FullOutputPath || list.Outputs[0].Bytes == 0 || list.Outputs[0].ToolCallID == "" {
		t.Fatalf("outputs/list %+v", list)
	}
	if err := c.call("_coding-agent/outputs/remove", map[string]any{"path": "/etc/passwd"}, nil); err == nil || err.Code != -32602 {
		t.Errorf("removing a file outside the store: %+v", err)
	}
	if err := c.call("_coding-agent/outputs/remove", map[string]any{}, nil); err == nil || err.Code != -32602 {
		t.Errorf("remove without path or all: %+v", err)
	}
	var removed struct{ Removed []string }
	if err := c.call("_coding-agent/outputs/remove", map[string]any{"all": true}, &removed); err != nil || len(removed.Removed) != 1 {
		t.Fatalf("remove all: %+v %+v", removed, err)
	}
	if _, err := os.Stat(res.Details.FullOutputPath); err == nil {
		t.Error("the retained file still exists")
	}
}

// TestAgentLoadReplaysAfterRestart stores a session with one process's Env
// and loads it through a new agent, as after a restart of the binary.
func TestAgentLoadReplaysAfterRestart(t *testing.T) {
	data := t.TempDir()
	cwd := t.TempDir()
	m := &scriptModel{responses: [][]models.Event{{text("Hello "), text("there."), done(models.StopEndTurn)}}}
	env := &Env{DataDir: data}
	s, err := env.NewSession(Options{Cwd: cwd, Model: m})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(context.Background(), []Content{Text("hi")}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	var logs bytes.Buffer
	c := startAgent(t, &Env{DataDir: data, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	var list struct {
		Sessions []struct{ SessionID, Cwd, Title string }
	}
	if err := c.call("session/list", map[string]any{}, &list); err != nil || len(list.Sessions) != 1 || list.Sessions[0].SessionID != s.ID() || list.Sessions[0].Title != "hi" {
		t.Fatalf("session/list %+v %+v", list, err)
	}
	c.drain()
	if err := c.call("session/load", map[string]any{"sessionId": s.ID(), "cwd": cwd, "mcpServers": []any{map[string]any{"name": "files", "command": "mcp-files"}}}, nil); err != nil {
		t.Fatal(err)
	}
	// The replay is sent before the answer, so it is all here.
	replay := c.drain()
	got := updateKinds(replay)
	// The journal holds one record per message: the two streamed chunks
	// come back as one.
	want := "user_message_chunk,agent_message_chunk"
	if strings.Join(got, ",") != want {
		t.Errorf("replay %q, want %s", got, want)
	}
	if raw, _ := json.Marshal(replay); !strings.Contains(string(raw), `"text":"Hello there."`) {
		t.Errorf("replayed message is not the whole answer: %s", raw)
	}
	if !strings.Contains(logs.String(), "MCP server did not start") || !strings.Contains(logs.String(), "mcp-files") {
		t.Errorf("no warning about the MCP server that did not start in the log:\n%s", logs.String())
	}
	if err := c.call("session/resume", map[string]any{"sessionId": s.ID(), "cwd": cwd}, nil); err != nil {
		t.Fatal(err)
	}
	if got := c.drain(); len(got) != 0 {
		t.Errorf("resume replayed %d updates", len(got))
	}
}

// drainWait waits until at least n notifications arrived (or 10 s passed)
// and returns all that did.
func (c *wireClient) drainWait(n int) []wireMsg {
	var out []wireMsg
	deadline := time.After(10 * time.Second)
	for len(out) < n {
		select {
		case m := <-c.notes:
			out = append(out, m)
		case <-deadline:
			return out
		}
	}
	return append(out, c.drain()...)
}

var _ = fmt.Sprint
var _ = tools.ReadOnly

// TestAgentSandboxedBash runs bash through the real sandbox: writes inside
// the workspace work, writes outside fail, and an approved escalation runs
// the one command unsandboxed.
func TestAgentSandboxedBash(t *testing.T) {
	ws := t.TempDir()
	outside := t.TempDir()
	env := &Env{DataDir: t.TempDir()}
	c := startAgent(t, env)
	if st := env.sandboxStatus(context.Background()); !st.Available {
		t.Fatalf("no sandbox on this machine: %s", st.Reason)
	}
	var asked int
	c.onRequest = func(method string, params json.RawMessage) (any, *wireError) {
		asked++
		var p struct {
			ToolCall struct {
				Meta map[string]map[string]string `json:"_meta"`
			}
		}
		json.Unmarshal(params, &p)
		if p.ToolCall.Meta["coding-agent"]["request"] != "escalation" {
			return nil, &wireError{Code: -32602, Message: "expected an escalation"}
		}
		return selected("allow_once")(params)
	}
	sid := newSession(t, c, ws, map[string]any{"preset": "workspace-write"})
	var res struct {
		IsError bool
		Details map[string]any
	}
	cmd := "echo in > in.txt; echo out > " + filepath.Join(outside, "x") + "; true"
	if err := c.call("_coding-agent/tools/call", map[string]any{"sessionId": sid, "name": "bash", "arguments": map[string]any{"command": cmd}}, &res); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ws, "in.txt")); err != nil {
		t.Errorf("write inside the workspace failed: %v (%+v)", err, res)
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Fatal("the sandboxed command wrote outside the workspace")
	}
	if res.Details["sandboxed"] != true {
		t.Errorf("details %v, want sandboxed", res.Details)
	}
	esc := map[string]any{"command": "echo out > " + filepath.Join(outside, "x"), "sandbox_permissions": "require_escalated", "justification": "Write the file you asked for."}
	if err := c.call("_coding-agent/tools/call", map[string]any{"sessionId": sid, "name": "bash", "arguments": esc}, &res); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err != nil || asked != 1 {
		t.Errorf("approved escalation: asked %d times, file: %v (%+v)", asked, err, res)
	}
}

// TestAgentSecondConnectionAttaches: a connection that loads a session
// another host has open attaches to it: it gets the replay, then the live
// updates of the other host's turns and of its own, each turn's before
// its answer; closing it leaves the session to the other host.
func TestAgentSecondConnectionAttaches(t *testing.T) {
	m := &scriptModel{responses: [][]models.Event{
		{text("one"), done(models.StopEndTurn)},
		{text("two"), done(models.StopEndTurn)},
		{text("three"), done(models.StopEndTurn)},
		{text("four"), done(models.StopEndTurn)},
	}}
	env := &Env{DataDir: t.TempDir(), Getenv: func(string) string { return "" }}
	owner, err := env.NewSession(Options{Cwd: t.TempDir(), Model: m, OnEvent: func(Event) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	if _, err := owner.Prompt(context.Background(), []Content{Text("first")}); err != nil {
		t.Fatal(err)
	}

	c := startAgent(t, env)
	if err := c.call("session/load", map[string]any{"sessionId": owner.ID(), "cwd": owner.Cwd(), "mcpServers": []any{}}, nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(updateKinds(c.drain()), ","); !strings.HasPrefix(got, "user_message_chunk,agent_message_chunk") {
		t.Errorf("replay %s", got)
	}
	// The other host's turn reaches the attached connection.
	if _, err := owner.Prompt(context.Background(), []Content{Text("second")}); err != nil {
		t.Fatal(err)
	}
	live := c.drainWait(3) // the prompt, session_info_update, the answer
	if raw, _ := json.Marshal(live); !strings.Contains(string(raw), `"text":"second"`) || !strings.Contains(string(raw), `"text":"two"`) {
		t.Errorf("the attached connection missed the other host's turn: %s", raw)
	}
	// Its own turn: every update arrives before the answer.
	var res struct{ StopReason string }
	if err := c.call("session/prompt", map[string]any{"sessionId": owner.ID(), "prompt": []any{map[string]any{"type": "text", "text": "third"}}}, &res); err != nil || res.StopReason != "end_turn" {
		t.Fatalf("session/prompt: %+v %+v", res, err)
	}
	if raw, _ := json.Marshal(c.drain()); !strings.Contains(string(raw), `"text":"three"`) {
		t.Errorf("the turn's updates did not precede its answer: %s", raw)
	}
	if err := c.call("session/close", map[string]any{"sessionId": owner.ID()}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Prompt(context.Background(), []Content{Text("fourth")}); err != nil {
		t.Errorf("closing the attached connection's session ended the owner's: %v", err)
	}
}
