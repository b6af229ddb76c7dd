package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestFramingAutoDetectAndReplyFraming(t *testing.T) {
	bothFramings(t, func(t *testing.T, framing Framing) {
		p := startPeer(t, framing, &fakeAgent{}, Options{}) // Framing: auto
		// Leading whitespace before the first message must not confuse detection.
		p.sendRaw([]byte("\n  \r\n"))
		p.initialize()
		m := p.call("_coding-agent/tools/list", map[string]any{})
		mustContain(t, string(m.Result), `"name":"read"`)
	})
}

func TestForcedFramingIgnoresDetection(t *testing.T) {
	// Forced NDJSON: a Content-Length header is garbage, answered as such.
	p := startPeer(t, FramingNDJSON, &fakeAgent{}, Options{Framing: FramingNDJSON})
	p.sendRaw([]byte("Content-Length: 2\n"))
	m := p.next()
	if m.Error == nil || m.Error.Code != CodeParseError || string(m.ID) != "null" {
		t.Fatalf("got %s, want parse error with id null", m.raw)
	}
	p.initialize()
}

func TestMethods(t *testing.T) {
	for _, test := range []struct {
		name     string
		method   string
		params   any
		wantCode int64  // 0: success
		wantText string // substring of the result or of the error message
	}{
		{"initialize", "initialize", map[string]any{"protocolVersion": 1}, 0, `"protocolVersion":1`},
		{"initialize authMethods array", "initialize", map[string]any{"protocolVersion": 1}, 0, `"authMethods":[]`},
		{"initialize missing version", "initialize", map[string]any{}, CodeInvalidParams, "protocolVersion: required"},
		{"initialize wrong type", "initialize", map[string]any{"protocolVersion": "one"}, CodeInvalidParams, "protocolVersion: expected a number"},
		{"new", "session/new", map[string]any{"cwd": "/tmp", "mcpServers": []any{}}, 0, `"sessionId":"s1"`},
		{"new relative cwd", "session/new", map[string]any{"cwd": "rel", "mcpServers": []any{}}, CodeInvalidParams, "cwd: must be an absolute path"},
		{"new missing cwd", "session/new", map[string]any{"mcpServers": []any{}}, CodeInvalidParams, "cwd: required"},
		{"new bad dirs", "session/new", map[string]any{"cwd": "/tmp", "additionalDirectories": []string{"x"}}, CodeInvalidParams, "additionalDirectories[0]"},
		{"new bad preset", "session/new", map[string]any{"cwd": "/tmp", "_meta": map[string]any{"coding-agent": map[string]any{"preset": "yolo"}}}, CodeInvalidParams, "_meta.coding-agent.preset"},
		{"new bad tools type", "session/new", map[string]any{"cwd": "/tmp", "_meta": map[string]any{"coding-agent": map[string]any{"tools": "read"}}}, CodeInvalidParams, "_meta.coding-agent.tools"},
		{"new bad timeout", "session/new", map[string]any{"cwd": "/tmp", "_meta": map[string]any{"coding-agent": map[string]any{"approvalTimeoutSeconds": -1}}}, CodeInvalidParams, "approvalTimeoutSeconds"},
		{"new params not object", "session/new", []any{"/tmp"}, CodeInvalidParams, "params: must be an object"},
		{"load", "session/load", map[string]any{"sessionId": "s1", "cwd": "/tmp", "mcpServers": []any{}}, 0, `{}`},
		{"load unknown", "session/load", map[string]any{"sessionId": "nope", "cwd": "/tmp", "mcpServers": []any{}}, CodeSessionNotFound, `nope`},
		{"resume missing cwd", "session/resume", map[string]any{"sessionId": "s1"}, CodeInvalidParams, "cwd: required"},
		{"resume", "session/resume", map[string]any{"sessionId": "s1", "cwd": "/tmp"}, 0, `{}`},
		{"list", "session/list", nil, 0, `"sessions":[]`},
		{"close", "session/close", map[string]any{"sessionId": "s1"}, 0, `{}`},
		{"close unknown", "session/close", map[string]any{"sessionId": "zz"}, CodeSessionNotFound, "zz"},
		{"close empty id", "session/close", map[string]any{"sessionId": ""}, CodeInvalidParams, "sessionId: must not be empty"},
		{"set_mode missing mode", "session/set_mode", map[string]any{"sessionId": "s1"}, CodeInvalidParams, "modeId: required"},
		{"set_mode", "session/set_mode", map[string]any{"sessionId": "s1", "modeId": "read-only"}, 0, `{}`},
		{"set_config_option bool value", "session/set_config_option", map[string]any{"sessionId": "s1", "configId": "preset", "value": true}, CodeInvalidParams, "value: expected a string"},
		{"set_config_option", "session/set_config_option", map[string]any{"sessionId": "s1", "configId": "preset", "value": "full-access"}, 0, `"configOptions"`},
		{"prompt no model", "session/prompt", map[string]any{"sessionId": "s1", "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}, CodeAuthRequired, "no model"},
		{"prompt missing", "session/prompt", map[string]any{"sessionId": "s1"}, CodeInvalidParams, "prompt: required"},
		{"prompt bad block", "session/prompt", map[string]any{"sessionId": "s1", "prompt": []any{map[string]any{"type": "video"}}}, CodeInvalidParams, "prompt[0].type"},
		{"prompt block wrong type", "session/prompt", map[string]any{"sessionId": "s1", "prompt": []any{map[string]any{"type": "text", "text": 5}}}, CodeInvalidParams, "prompt.text: expected a string"},
		{"tools/list", "_coding-agent/tools/list", map[string]any{}, 0, `"inputSchema":{"type":"object"}`},
		{"tools/call standalone", "_coding-agent/tools/call", map[string]any{"name": "read", "arguments": map[string]any{"path": "a"}, "cwd": "/tmp"}, 0, `"isError":false`},
		{"tools/call no cwd", "_coding-agent/tools/call", map[string]any{"name": "read", "arguments": map[string]any{}}, CodeInvalidParams, "cwd: required when sessionId is absent"},
		{"tools/call in session", "_coding-agent/tools/call", map[string]any{"name": "read", "arguments": map[string]any{}, "sessionId": "s1"}, 0, `"content":[{"type":"text","text":"ok"}]`},
		{"tools/call no name", "_coding-agent/tools/call", map[string]any{"cwd": "/tmp"}, CodeInvalidParams, "name: required"},
		{"tools/call args not object", "_coding-agent/tools/call", map[string]any{"name": "read", "cwd": "/tmp", "arguments": "x"}, CodeInvalidParams, "arguments: must be an object"},
		{"tools/call bad preset", "_coding-agent/tools/call", map[string]any{"name": "read", "cwd": "/tmp", "preset": "root"}, CodeInvalidParams, "preset: unknown preset"},
		{"outputs/list", "_coding-agent/outputs/list", nil, 0, `"outputs":[]`},
		{"outputs/remove neither", "_coding-agent/outputs/remove", map[string]any{}, CodeInvalidParams, "path"},
		{"outputs/remove both", "_coding-agent/outputs/remove", map[string]any{"path": "/x", "all": true}, CodeInvalidParams, "exactly one"},
		{"outputs/remove all", "_coding-agent/outputs/remove", map[string]any{"all": true}, 0, `"removed":[]`},
		{"unknown method", "session/fork", map[string]any{}, CodeMethodNotFound, "session/fork"},
		{"unknown extension", "_other/thing", nil, CodeMethodNotFound, "_other/thing"},
	} {
		t.Run(test.name, func(t *testing.T) {
			p := startPeer(t, FramingNDJSON, &fakeAgent{}, Options{})
			if test.method != "initialize" {
				p.initialize()
			}
			m := p.call(test.method, test.params)
			if test.wantCode == 0 {
				if m.Error != nil {
					t.Fatalf("got error %s", m.raw)
				}
				mustContain(t, string(m.Result), test.wantText)
				return
			}
			if m.Error == nil || m.Error.Code != test.wantCode {
				t.Fatalf("got %s, want error code %d", m.raw, test.wantCode)
			}
			mustContain(t, m.Error.Message, test.wantText)
		})
	}
}

func TestErrorData(t *testing.T) {
	p := startPeer(t, FramingNDJSON, &fakeAgent{}, Options{})
	p.initialize()
	m := p.call("session/close", map[string]any{"sessionId": "gone"})
	if m.Error == nil || string(m.Error.Data) != `{"sessionId":"gone"}` {
		t.Fatalf("got %s, want data.sessionId", m.raw)
	}
	m = p.call("session/prompt", map[string]any{"sessionId": "s1", "prompt": []any{}})
	if m.Error == nil || !strings.Contains(string(m.Error.Data), `"variables":["CODING_AGENT_MODEL"`) {
		t.Fatalf("got %s, want data.variables", m.raw)
	}
}

func TestNotInitialized(t *testing.T) {
	a := &fakeAgent{}
	p := startPeer(t, FramingNDJSON, a, Options{})
	p.notify("document/didOpen", map[string]any{"sessionId": "s1", "uri": "file:///a", "version": 1, "text": "x"})
	for _, method := range []string{"session/new", "_coding-agent/tools/list", "no/such/method"} {
		m := p.call(method, map[string]any{"cwd": "/tmp"})
		if m.Error == nil || m.Error.Code != CodeInvalidRequest || !strings.Contains(m.Error.Message, "not initialized") {
			t.Fatalf("%s: got %s, want -32600 not initialized", method, m.raw)
		}
	}
	p.initialize()
	if got := a.seen(); len(got) != 0 {
		t.Fatalf("notification before initialize reached the agent: %v", got)
	}
	if m := p.call("session/new", map[string]any{"cwd": "/tmp"}); m.Error != nil {
		t.Fatalf("after initialize: %s", m.raw)
	}
}

func TestFailedInitializeKeepsGate(t *testing.T) {
	a := &fakeAgent{initialize: func(ctx context.Context, req *InitializeRequest) (*InitializeResponse, error) {
		if req.ProtocolVersion == 99 {
			return nil, InvalidParams("protocolVersion", "boom")
		}
		return &InitializeResponse{ProtocolVersion: 1}, nil
	}}
	p := startPeer(t, FramingNDJSON, a, Options{})
	// Pipelined: session/new is sent before initialize has answered.
	initID := p.request("initialize", map[string]any{"protocolVersion": 99})
	newID := p.request("session/new", map[string]any{"cwd": "/tmp"})
	if m := p.response(initID, nil); m.Error == nil {
		t.Fatalf("initialize: got %s, want error", m.raw)
	}
	if m := p.response(newID, nil); m.Error == nil || m.Error.Code != CodeInvalidRequest {
		t.Fatalf("session/new after failed initialize: got %s, want -32600", m.raw)
	}
	p.initialize()
	if m := p.call("session/new", map[string]any{"cwd": "/tmp"}); m.Error != nil {
		t.Fatalf("after retry: %s", m.raw)
	}
}

func TestPipelinedRequestWaitsForInitialize(t *testing.T) {
	release := make(chan struct{})
	a := &fakeAgent{initialize: func(ctx context.Context, req *InitializeRequest) (*InitializeResponse, error) {
		<-release
		return &InitializeResponse{ProtocolVersion: 1}, nil
	}}
	p := startPeer(t, FramingNDJSON, a, Options{})
	initID := p.request("initialize", map[string]any{"protocolVersion": 1})
	newID := p.request("session/new", map[string]any{"cwd": "/tmp"})
	close(release)
	if m := p.response(initID, nil); m.Error != nil {
		t.Fatal(string(m.raw))
	}
	if m := p.response(newID, nil); m.Error != nil {
		t.Fatalf("pipelined session/new: %s", m.raw)
	}
}

func TestUnknownNotificationIgnored(t *testing.T) {
	a := &fakeAgent{}
	p := startPeer(t, FramingNDJSON, a, Options{})
	p.initialize()
	p.notify("_vendor/thing", map[string]any{"x": 1})
	p.notify("$/progress", nil)
	p.notify("document/didSave", map[string]any{"uri": "file:///a"}) // invalid: no sessionId
	p.notify("document/didSave", map[string]any{"sessionId": "s1", "uri": "file:///b"})
	m := p.call("session/list", nil) // the next message must be this answer
	if m.Error != nil {
		t.Fatal(string(m.raw))
	}
	if got := a.seen(); len(got) != 1 || got[0] != "save file:///b" {
		t.Fatalf("agent saw %v, want only the valid didSave", got)
	}
	mustContain(t, p.logs.String(), "sessionId: required")
}

func TestMalformedInput(t *testing.T) {
	bothFramings(t, func(t *testing.T, framing Framing) {
		a := &fakeAgent{}
		p := startPeer(t, framing, a, Options{Framing: framing})
		p.initialize()
		cases := []struct {
			body string
			code int64
			id   string
		}{
			{`{"jsonrpc":"2.0","id":1,"method":`, CodeParseError, "null"},
			{`not json at all`, CodeParseError, "null"},
			{`[{"jsonrpc":"2.0","id":7,"method":"session/list"},{"jsonrpc":"2.0","id":8,"method":"session/list"}]`, CodeInvalidRequest, "null"},
			{`[]`, CodeInvalidRequest, "null"},
			{`42`, CodeInvalidRequest, "null"},
			{`{"jsonrpc":"2.0","id":3}`, CodeInvalidRequest, "3"},
			{`{"jsonrpc":"1.0","id":4,"method":"session/list"}`, CodeInvalidRequest, "4"},
			{`{"id":"five","method":"session/list"}`, CodeInvalidRequest, `"five"`},
			{`{"jsonrpc":"2.0","id":1.5,"method":"session/list"}`, CodeInvalidRequest, "null"},
			{`{"jsonrpc":"2.0","id":6,"method":""}`, CodeInvalidRequest, "6"},
			{`{"jsonrpc":"2.0","id":9,"method":5}`, CodeInvalidRequest, "9"},
		}
		for i := 0; i < 1000; i++ {
			c := cases[i%len(cases)]
			p.send(c.body)
			m := p.next()
			if m.Error == nil || m.Error.Code != c.code || string(m.ID) != c.id {
				t.Fatalf("message %d %q: got %s, want code %d id %s", i, c.body, m.raw, c.code, c.id)
			}
		}
		if m := p.call("session/list", nil); m.Error != nil {
			t.Fatalf("valid request after malformed input: %s", m.raw)
		}
		if framing == FramingNDJSON {
			// Blank lines are skipped silently.
			p.sendRaw([]byte("\n\n   \r\n\t\n"))
		}
		if m := p.call("session/list", nil); m.Error != nil {
			t.Fatal(string(m.raw))
		}
	})
}

func TestBatchNotExecuted(t *testing.T) {
	a := &fakeAgent{}
	p := startPeer(t, FramingNDJSON, a, Options{})
	p.initialize()
	p.send(`[{"jsonrpc":"2.0","method":"document/didSave","params":{"sessionId":"s1","uri":"file:///x"}}]`)
	m := p.next()
	if m.Error == nil || m.Error.Code != CodeInvalidRequest {
		t.Fatalf("got %s", m.raw)
	}
	p.call("session/list", nil)
	if got := a.seen(); len(got) != 0 {
		t.Fatalf("batch member executed: %v", got)
	}
}

func TestOversizedMessage(t *testing.T) {
	bothFramings(t, func(t *testing.T, framing Framing) {
		p := startPeer(t, framing, &fakeAgent{}, Options{Framing: framing, MaxMessageBytes: 1024})
		p.initialize()
		big := encodeRequest(50, "_coding-agent/tools/call", map[string]any{"name": "read", "cwd": "/tmp", "arguments": map[string]any{"x": strings.Repeat("a", 5000)}})
		p.send(big)
		m := p.next()
		if m.Error == nil || m.Error.Code != CodeInvalidRequest || string(m.ID) != "null" {
			t.Fatalf("got %s, want -32600 with id null", m.raw)
		}
		mustContain(t, m.Error.Message, "exceeds the limit of 1024 bytes")
		if m := p.call("session/list", nil); m.Error != nil {
			t.Fatalf("after oversize: %s", m.raw)
		}
	})
}

func TestConcurrentCalls(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	a := &fakeAgent{prompt: func(ctx context.Context, req *PromptRequest) (*PromptResponse, error) {
		close(started)
		<-release
		return &PromptResponse{StopReason: StopEndTurn}, nil
	}}
	p := startPeer(t, FramingNDJSON, a, Options{})
	p.initialize()
	slow := p.request("session/prompt", map[string]any{"sessionId": "s1", "prompt": []any{}})
	<-started
	// The slow prompt must not block another call or initialize.
	if m := p.call("_coding-agent/tools/call", map[string]any{"name": "read", "cwd": "/tmp"}); m.Error != nil {
		t.Fatal(string(m.raw))
	}
	if m := p.call("initialize", map[string]any{"protocolVersion": 1}); m.Error != nil {
		t.Fatal(string(m.raw))
	}
	close(release)
	m := p.response(slow, nil)
	mustContain(t, string(m.Result), `"stopReason":"end_turn"`)
}

func TestNotificationOrder(t *testing.T) {
	bothFramings(t, func(t *testing.T, framing Framing) {
		a := &fakeAgent{}
		p := startPeer(t, framing, a, Options{})
		p.initialize()
		for v := 1; v <= 100; v++ {
			p.notify("document/didChange", map[string]any{"sessionId": "s1", "uri": "file:///a", "version": v,
				"contentChanges": []any{map[string]any{"text": fmt.Sprint(v)}}})
		}
		p.call("session/list", nil)
		got := a.seen()
		if len(got) != 100 {
			t.Fatalf("saw %d notifications before the later call's answer, want 100", len(got))
		}
		for i, ev := range got {
			if want := fmt.Sprintf("change file:///a %d", i+1); ev != want {
				t.Fatalf("notification %d: got %q, want %q", i, ev, want)
			}
		}
	})
}

func TestCallbackDuringRequest(t *testing.T) {
	bothFramings(t, func(t *testing.T, framing Framing) {
		a := &fakeAgent{}
		a.prompt = func(ctx context.Context, req *PromptRequest) (*PromptResponse, error) {
			if err := a.client.SessionUpdate(ctx, &SessionNotification{SessionID: req.SessionID,
				Update: &ToolCall{ToolCallID: "c1", Title: "Edit a.txt", Kind: ToolKindEdit, Status: ToolStatusPending}}); err != nil {
				return nil, err
			}
			resp, err := a.client.RequestPermission(ctx, &RequestPermissionRequest{
				SessionID: req.SessionID,
				ToolCall:  ToolCallUpdate{ToolCallID: "c1", Title: "Edit a.txt"},
				Options: []PermissionOption{{OptionID: "allow_once", Name: "Allow once", Kind: PermissionAllowOnce},
					{OptionID: "reject_once", Name: "Reject", Kind: PermissionRejectOnce}},
			})
			if err != nil {
				return nil, err
			}
			return &PromptResponse{StopReason: resp.Outcome.OptionID}, nil
		}
		p := startPeer(t, framing, a, Options{})
		p.initialize()
		id := p.request("session/prompt", map[string]any{"sessionId": "s1", "prompt": []any{}})
		var sawUpdate bool
		m := p.response(id, func(m wireMsg) {
			switch m.Method {
			case "session/update":
				sawUpdate = true
				mustContain(t, string(m.Params), `"sessionUpdate":"tool_call"`)
			case "session/request_permission":
				if !sawUpdate {
					t.Errorf("permission request before the tool_call update")
				}
				// Ids of the two directions are independent: answer while
				// our own request with a possibly equal id is pending.
				p.answer(m, map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}})
			default:
				t.Fatalf("unexpected %s", m.raw)
			}
		})
		if m.Error != nil || !strings.Contains(string(m.Result), "allow_once") {
			t.Fatalf("got %s", m.raw)
		}
	})
}

func TestRequestPermissionAnswers(t *testing.T) {
	for _, test := range []struct {
		name    string
		answer  string // raw JSON-RPC response members after "id"
		want    string // substring of the prompt result (stopReason carries the outcome)
		wantErr string
	}{
		{"selected", `"result":{"outcome":{"outcome":"selected","optionId":"reject_once"}}`, "selected reject_once", ""},
		{"cancelled", `"result":{"outcome":{"outcome":"cancelled"}}`, "cancelled", ""},
		{"error answer", `"error":{"code":-32000,"message":"user closed"}`, "", "user closed"},
		{"selected without option", `"result":{"outcome":{"outcome":"selected"}}`, "", "optionId is missing"},
		{"unknown outcome", `"result":{"outcome":{"outcome":"maybe"}}`, "", `"maybe"`},
		{"not an object", `"result":5`, "", "decoding answer"},
	} {
		t.Run(test.name, func(t *testing.T) {
			a := &fakeAgent{}
			a.prompt = func(ctx context.Context, req *PromptRequest) (*PromptResponse, error) {
				resp, err := a.client.RequestPermission(ctx, &RequestPermissionRequest{SessionID: "s1", ToolCall: ToolCallUpdate{ToolCallID: "c"}})
				if err != nil {
					var e *Error
					if errors.As(err, &e) {
						return nil, fmt.Errorf("client error %d: %w", e.Code, err)
					}
					return nil, err
				}
				return &PromptResponse{StopReason: resp.Outcome.Outcome + " " + resp.Outcome.OptionID}, nil
			}
			p := startPeer(t, FramingNDJSON, a, Options{})
			p.initialize()
			id := p.request("session/prompt", map[string]any{"sessionId": "s1", "prompt": []any{}})
			m := p.response(id, func(m wireMsg) {
				p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,%s}`, m.ID, test.answer))
			})
			if test.wantErr != "" {
				if m.Error == nil {
					t.Fatalf("got %s, want error", m.raw)
				}
				mustContain(t, m.Error.Message, test.wantErr)
				return
			}
			mustContain(t, string(m.Result), test.want)
		})
	}
}

func TestIncomingCancel(t *testing.T) {
	for _, test := range []struct {
		name   string
		id     string
		cancel string
	}{
		{"acp", `21`, `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":21}}`},
		{"lsp", `22`, `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":22}}`},
		{"acp string id", `"abc"`, `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"abc"}}`},
	} {
		t.Run(test.name, func(t *testing.T) {
			started := make(chan struct{})
			a := &fakeAgent{toolsCall: func(ctx context.Context, req *ToolsCallRequest) (*ToolsCallResponse, error) {
				close(started)
				<-ctx.Done()
				return nil, ctx.Err()
			}}
			p := startPeer(t, FramingNDJSON, a, Options{})
			p.initialize()
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"_coding-agent/tools/call","params":{"name":"bash","cwd":"/tmp"}}`, test.id))
			<-started
			p.send(test.cancel)
			m := p.next()
			if string(m.ID) != test.id || m.Error == nil || m.Error.Code != CodeRequestCancelled {
				t.Fatalf("got %s, want -32800 for id %s", m.raw, test.id)
			}
		})
	}
}

func TestCancelBeforeHandlerRuns(t *testing.T) {
	// The cancel arrives right behind the request on the wire; it must
	// still find the request (registered before the read loop moves on).
	for i := 0; i < 50; i++ {
		a := &fakeAgent{toolsCall: func(ctx context.Context, req *ToolsCallRequest) (*ToolsCallResponse, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}}
		p := startPeer(t, FramingNDJSON, a, Options{})
		p.initialize()
		p.sendRaw([]byte(`{"jsonrpc":"2.0","id":5,"method":"_coding-agent/tools/call","params":{"name":"x","cwd":"/"}}` + "\n" +
			`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":5}}` + "\n"))
		if m := p.next(); m.Error == nil || m.Error.Code != CodeRequestCancelled {
			t.Fatalf("got %s", m.raw)
		}
	}
}

func TestOutgoingCancel(t *testing.T) {
	bothFramings(t, func(t *testing.T, framing Framing) {
		a := &fakeAgent{}
		var mu sync.Mutex
		turns := map[string]context.CancelFunc{}
		a.cancel = func(ctx context.Context, n *CancelNotification) {
			mu.Lock()
			defer mu.Unlock()
			if c := turns[n.SessionID]; c != nil {
				c()
			}
		}
		a.prompt = func(ctx context.Context, req *PromptRequest) (*PromptResponse, error) {
			turn, cancel := context.WithCancel(ctx)
			defer cancel()
			mu.Lock()
			turns[req.SessionID] = cancel
			mu.Unlock()
			_, err := a.client.RequestPermission(turn, &RequestPermissionRequest{SessionID: req.SessionID, ToolCall: ToolCallUpdate{ToolCallID: "c"}})
			if !errors.Is(err, context.Canceled) {
				return nil, fmt.Errorf("RequestPermission returned %v, want context.Canceled", err)
			}
			return &PromptResponse{StopReason: StopCancelled}, nil
		}
		p := startPeer(t, framing, a, Options{})
		p.initialize()
		id := p.request("session/prompt", map[string]any{"sessionId": "s1", "prompt": []any{}})
		var permID string
		var sawCancel bool
		m := p.response(id, func(m wireMsg) {
			switch m.Method {
			case "session/request_permission":
				permID = string(m.ID)
				p.notify("session/cancel", map[string]any{"sessionId": "s1"})
			case "$/cancel_request":
				var params struct{ RequestID json.RawMessage }
				json.Unmarshal(m.Params, &params)
				if string(params.RequestID) != permID {
					t.Errorf("$/cancel_request for %s, want %s", params.RequestID, permID)
				}
				sawCancel = true
			default:
				t.Errorf("unexpected %s", m.raw)
			}
		})
		if m.Error != nil || !strings.Contains(string(m.Result), "cancelled") {
			t.Fatalf("got %s", m.raw)
		}
		if !sawCancel {
			t.Fatalf("no $/cancel_request sent for the abandoned permission request")
		}
	})
}

func TestHandlerPanic(t *testing.T) {
	a := &fakeAgent{toolsCall: func(ctx context.Context, req *ToolsCallRequest) (*ToolsCallResponse, error) {
		panic("kaboom")
	}, didChange: func(ctx context.Context, n *DidChangeNotification) { panic("notification kaboom") }}
	p := startPeer(t, FramingNDJSON, a, Options{})
	p.initialize()
	m := p.call("_coding-agent/tools/call", map[string]any{"name": "read", "cwd": "/tmp"})
	if m.Error == nil || m.Error.Code != CodeInternal {
		t.Fatalf("got %s, want -32603", m.raw)
	}
	mustContain(t, m.Error.Message, "kaboom")
	p.notify("document/didChange", map[string]any{"sessionId": "s1", "uri": "u", "version": 1, "contentChanges": []any{}})
	if m := p.call("session/list", nil); m.Error != nil {
		t.Fatalf("connection broken after panic: %s", m.raw)
	}
	mustContain(t, p.logs.String(), "notification kaboom")
	mustContain(t, p.logs.String(), "handler panic")
}

func TestErrorMapping(t *testing.T) {
	for _, test := range []struct {
		name string
		err  error
		code int64
	}{
		{"plain", errBoom, CodeInternal},
		{"wrapped plain", fmt.Errorf("x: %w", errBoom), CodeInternal},
		{"zero code", &Error{Message: "zero"}, CodeInternal},
		{"out of range code", &Error{Code: 1 << 40, Message: "big"}, CodeInternal},
		{"coded", &Error{Code: -32001, Message: "custom"}, -32001},
		{"wrapped coded", fmt.Errorf("ctx: %w", SessionNotFound("x")), CodeSessionNotFound},
		{"canceled", context.Canceled, CodeRequestCancelled},
		{"deadline", fmt.Errorf("waiting: %w", context.DeadlineExceeded), CodeRequestCancelled},
	} {
		t.Run(test.name, func(t *testing.T) {
			a := &fakeAgent{toolsCall: func(ctx context.Context, req *ToolsCallRequest) (*ToolsCallResponse, error) {
				return nil, test.err
			}}
			p := startPeer(t, FramingNDJSON, a, Options{})
			p.initialize()
			m := p.call("_coding-agent/tools/call", map[string]any{"name": "read", "cwd": "/tmp"})
			if m.Error == nil || m.Error.Code != test.code {
				t.Fatalf("got %s, want code %d", m.raw, test.code)
			}
		})
	}
}

// TestAsyncContextCrashRegression drives many calls whose handlers derive
// cancellable contexts, with cancellations racing them. go.lsp.dev/jsonrpc2
// v1.0.1 panics ("cannot create context from nil parent") when a context
// derived from its pooled request context outlives a synchronous handler;
// our dispatch must never expose that context. Run under -race.
func TestAsyncContextCrashRegression(t *testing.T) {
	a := &fakeAgent{toolsCall: func(ctx context.Context, req *ToolsCallRequest) (*ToolsCallResponse, error) {
		tctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		cctx, cancel2 := context.WithCancel(tctx)
		go func() { <-cctx.Done() }()
		cancel2()
		return &ToolsCallResponse{}, nil
	}}
	// Every call may be in flight at once: this test is about contexts,
	// not about the bound (TestCallsInFlightBound).
	p := startPeer(t, FramingNDJSON, a, Options{MaxCallsInFlight: 2 * 2000})
	p.initialize()
	const n = 2000
	sent := make(chan error, 1)
	go func() {
		for i := 1; i <= n; i++ {
			msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"_coding-agent/tools/call","params":{"name":"read","cwd":"/"}}`+"\n", 1000+i)
			if i%2 == 0 {
				msg += fmt.Sprintf(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":%d}}`+"\n", 1000+i)
			}
			if _, err := io.WriteString(p.w, msg); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	for i := 0; i < n; i++ {
		m := p.next()
		if m.Error != nil && m.Error.Code != CodeRequestCancelled {
			t.Fatalf("got %s", m.raw)
		}
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
}

func TestServeEndsOnEOFAndCancelsHandlers(t *testing.T) {
	started := make(chan struct{})
	cancelled := make(chan struct{})
	a := &fakeAgent{toolsCall: func(ctx context.Context, req *ToolsCallRequest) (*ToolsCallResponse, error) {
		close(started)
		<-ctx.Done()
		close(cancelled)
		return nil, ctx.Err()
	}}
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	go io.Copy(io.Discard, sr)
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), cr, sw, func(Client) Agent { return a }, Options{})
	}()
	io.WriteString(cw, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`+"\n")
	io.WriteString(cw, `{"jsonrpc":"2.0","id":2,"method":"_coding-agent/tools/call","params":{"name":"bash","cwd":"/"}}`+"\n")
	<-started
	cw.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve after EOF = %v, want nil", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("Serve did not return after EOF")
	}
	select {
	case <-cancelled:
	default:
		t.Fatal("running handler's context was not cancelled when the connection ended")
	}
}

func TestServeReturnsWhenContextEnds(t *testing.T) {
	cr, cw := io.Pipe()
	defer cw.Close()
	sr, sw := io.Pipe()
	go io.Copy(io.Discard, sr)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, cr, sw, func(Client) Agent { return &fakeAgent{} }, Options{}) }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Serve = %v, want context.Canceled", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("Serve did not return after ctx ended (reader blocked on input?)")
	}
}

func TestServeBoundsShutdownWait(t *testing.T) {
	// A handler that ignores its context must not hold Serve forever.
	block := make(chan struct{})
	defer close(block)
	started := make(chan struct{})
	a := &fakeAgent{toolsCall: func(ctx context.Context, req *ToolsCallRequest) (*ToolsCallResponse, error) {
		close(started)
		<-block
		return nil, errBoom
	}}
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	go io.Copy(io.Discard, sr)
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), cr, sw, func(Client) Agent { return a }, Options{ShutdownTimeout: 50 * time.Millisecond})
	}()
	io.WriteString(cw, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`+"\n")
	io.WriteString(cw, `{"jsonrpc":"2.0","id":2,"method":"_coding-agent/tools/call","params":{"name":"bash","cwd":"/"}}`+"\n")
	<-started
	cw.Close()
	select {
	case <-done:
	case <-time.After(waitTimeout):
		t.Fatal("Serve waited for a stuck handler without bound")
	}
}

func TestTrace(t *testing.T) {
	p := startPeer(t, FramingHeader, &fakeAgent{}, Options{})
	p.initialize()
	p.send("garbage")
	p.next()
	p.call("session/list", nil)
	tr := p.trace.String()
	for _, want := range []string{
		`recv {"id":1,"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":1}}`,
		`send {"jsonrpc":"2.0","id":1,"result":{`,
		`recv "garbage"`,
		`send {"jsonrpc":"2.0","id":null,"error":{"code":-32700`,
		`"method":"session/list"`,
	} {
		mustContain(t, tr, want)
	}
	for _, line := range strings.Split(strings.TrimSpace(tr), "\n") {
		if !strings.HasPrefix(line, "recv ") && !strings.HasPrefix(line, "send ") {
			t.Fatalf("trace line without direction: %q", line)
		}
	}
}

func TestNotificationsToClient(t *testing.T) {
	a := &fakeAgent{}
	a.toolsCall = func(ctx context.Context, req *ToolsCallRequest) (*ToolsCallResponse, error) {
		err := a.client.FilesChanged(ctx, &FilesChangedNotification{SessionID: "s1", Changes: []FileChange{
			{Path: "/w/a.txt", URI: "file:///w/a.txt", Kind: ChangeModified, Origin: &ChangeOrigin{ToolCallID: "c1", Tool: "edit"}, Open: true},
			{Path: "/w/b.txt", URI: "file:///w/b.txt", Kind: ChangeCreated},
		}})
		return &ToolsCallResponse{}, err
	}
	p := startPeer(t, FramingNDJSON, a, Options{})
	p.initializeWith(optIn)
	var got string
	id := p.request("_coding-agent/tools/call", map[string]any{"name": "edit", "sessionId": "s1"})
	p.response(id, func(m wireMsg) { got = string(m.raw) })
	want := `{"jsonrpc":"2.0","method":"_coding-agent/files_changed","params":{"sessionId":"s1","changes":[` +
		`{"path":"/w/a.txt","uri":"file:///w/a.txt","kind":"modified","origin":{"toolCallId":"c1","tool":"edit"},"open":true},` +
		`{"path":"/w/b.txt","uri":"file:///w/b.txt","kind":"created","origin":null,"open":false}]}}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestResultEncodingFailure(t *testing.T) {
	a := &fakeAgent{toolsCall: func(ctx context.Context, req *ToolsCallRequest) (*ToolsCallResponse, error) {
		return &ToolsCallResponse{Details: json.RawMessage(`{not json`)}, nil
	}}
	p := startPeer(t, FramingNDJSON, a, Options{})
	p.initialize()
	m := p.call("_coding-agent/tools/call", map[string]any{"name": "read", "cwd": "/tmp"})
	if m.Error == nil || m.Error.Code != CodeInternal {
		t.Fatalf("got %s, want -32603", m.raw)
	}
	mustContain(t, m.Error.Message, "encoding result")
	if m := p.call("session/list", nil); m.Error != nil {
		t.Fatal(string(m.raw))
	}
}

type failingWriter struct{}

func (failingWriter) Write(p []byte) (int, error) { return 0, errors.New("disk on fire") }

func TestServeReturnsWriteError(t *testing.T) {
	cr, cw := io.Pipe()
	defer cw.Close()
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), cr, failingWriter{}, func(Client) Agent { return &fakeAgent{} }, Options{})
	}()
	go io.WriteString(cw, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`+"\n")
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "disk on fire") {
			t.Fatalf("Serve = %v, want the write error", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("Serve kept running after a write error")
	}
}

func TestLargeMessages(t *testing.T) {
	// Larger sizes (64 MiB) are measured by the benchmarks of the research
	// note; here the point is crossing the buffer boundaries.
	bothFramings(t, func(t *testing.T, framing Framing) {
		got := make(chan int, 1)
		a := &fakeAgent{toolsCall: func(ctx context.Context, req *ToolsCallRequest) (*ToolsCallResponse, error) {
			var args struct{ Content string }
			json.Unmarshal(req.Arguments, &args)
			got <- len(args.Content)
			return &ToolsCallResponse{Content: []ContentBlock{TextBlock(args.Content)}}, nil
		}}
		p := startPeer(t, framing, a, Options{})
		p.initialize()
		// Above the 64 KiB read buffer and the 1 MiB buffer-reuse limit.
		content := strings.Repeat("0123456789abcdef", 3<<19/16) // 1.5 MiB
		m := p.call("_coding-agent/tools/call", map[string]any{"name": "write", "cwd": "/tmp", "arguments": map[string]any{"content": content}})
		if m.Error != nil {
			t.Fatalf("error %v", m.Error)
		}
		if n := <-got; n != len(content) {
			t.Fatalf("agent got %d bytes, want %d", n, len(content))
		}
		if len(m.Result) < len(content) {
			t.Fatalf("result of %d bytes, want the %d-byte content back", len(m.Result), len(content))
		}
	})
}

// TestAnswersAfterEndOfInput: a client that closes our input right after a
// request still gets the answer, even when the handler finishes after the
// end of input was read (the library would drop it once its reader failed).
func TestAnswersAfterEndOfInput(t *testing.T) {
	release := make(chan struct{})
	a := &fakeAgent{initialize: func(ctx context.Context, req *InitializeRequest) (*InitializeResponse, error) {
		<-release
		return &InitializeResponse{ProtocolVersion: 1}, nil
	}}
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), cr, sw, func(Client) Agent { return a }, Options{})
		sw.Close()
	}()
	io.WriteString(cw, `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":1}}`+"\n")
	cw.Close()
	close(release)
	out, err := io.ReadAll(sr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"id":7`) || !strings.Contains(string(out), `"protocolVersion":1`) {
		t.Errorf("output %q, want the answer to request 7", out)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve = %v, want nil after EOF", err)
	}
}

// TestExtensionsOptIn checks that _coding-agent/* notifications reach only a
// client that asked for them in initialize. The handler sends files_changed
// and then session/update; notifications are written in call order, so a
// session/update that arrives alone proves files_changed was not sent.
func TestExtensionsOptIn(t *testing.T) {
	caps := func(codingAgent any) map[string]any {
		return map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{
			"_meta": map[string]any{"coding-agent": codingAgent},
		}}
	}
	for _, tc := range []struct {
		name   string
		params any
		want   bool
	}{
		{"no capabilities", map[string]any{"protocolVersion": 1}, false},
		{"empty capabilities", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, false},
		{"other vendor", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{
			"_meta": map[string]any{"zed": map[string]any{"extensions": true}}}}, false},
		{"extensions false", caps(map[string]any{"extensions": false}), false},
		{"extensions a string", caps(map[string]any{"extensions": "true"}), false},
		{"other method listed", caps(map[string]any{"extensions": []string{"_coding-agent/other"}}), false},
		{"extensions true", caps(map[string]any{"extensions": true}), true},
		{"method listed", caps(map[string]any{"extensions": []string{"_coding-agent/files_changed"}}), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &fakeAgent{}
			a.toolsCall = func(ctx context.Context, req *ToolsCallRequest) (*ToolsCallResponse, error) {
				if err := a.client.FilesChanged(ctx, &FilesChangedNotification{SessionID: "s1", Changes: []FileChange{{Path: "/w/a", URI: "file:///w/a", Kind: ChangeCreated}}}); err != nil {
					return nil, err
				}
				return &ToolsCallResponse{}, a.client.SessionUpdate(ctx, &SessionNotification{SessionID: "s1", Update: &AgentMessageChunk{Content: TextBlock("<b>")}})
			}
			p := startPeer(t, FramingNDJSON, a, Options{})
			p.initializeWith(tc.params)
			var methods []string
			id := p.request(MethodToolsCall, map[string]any{"name": "read", "cwd": "/tmp"})
			if m := p.response(id, func(m wireMsg) { methods = append(methods, m.Method) }); m.Error != nil {
				t.Fatalf("tools/call: %s", m.raw)
			}
			want := []string{MethodSessionUpdate}
			if tc.want {
				want = []string{MethodFilesChanged, MethodSessionUpdate}
			}
			if !slices.Equal(methods, want) {
				t.Fatalf("client received %q, want %q", methods, want)
			}
		})
	}
}

// TestAfterAnswer checks the ordering hook: what a handler arranges with
// AfterAnswer runs only once its answer is on the wire. The hook sends a
// notification, which must therefore follow the answer.
func TestAfterAnswer(t *testing.T) {
	a := &fakeAgent{}
	ran := make(chan struct{})
	a.initialize = func(ctx context.Context, req *InitializeRequest) (*InitializeResponse, error) {
		AfterAnswer(ctx, func() {
			defer close(ran)
			if err := a.client.SessionUpdate(context.Background(), &SessionNotification{SessionID: "s1", Update: &AgentMessageChunk{Content: TextBlock("after")}}); err != nil {
				t.Errorf("notification from the hook: %v", err)
			}
		})
		return &InitializeResponse{ProtocolVersion: 1}, nil
	}
	p := startPeer(t, FramingNDJSON, a, Options{})
	id := p.request("initialize", map[string]any{"protocolVersion": 1})
	if m := p.next(); m.Method != "" || string(m.ID) != fmt.Sprint(id) {
		t.Fatalf("first message is not the initialize answer: %s", m.raw)
	}
	if m := p.next(); m.Method != MethodSessionUpdate {
		t.Fatalf("second message is not the hook's notification: %s", m.raw)
	}
	<-ran
	// Outside a handler the function runs at once.
	done := false
	AfterAnswer(context.Background(), func() { done = true })
	if !done {
		t.Fatal("AfterAnswer outside a handler did not run f")
	}
}

// TestNoHTMLEscaping checks that '<', '>' and '&' go out as themselves in
// results, notifications and requests to the client, also inside raw JSON
// that another encoder HTML-escaped, while a literal backslash-u text stays.
func TestNoHTMLEscaping(t *testing.T) {
	const text = `if a < b && c > d { x := "<b>" }`
	escaped, _ := json.Marshal(map[string]string{"cmd": text, "literal": `\u003c`})
	a := &fakeAgent{}
	a.toolsCall = func(ctx context.Context, req *ToolsCallRequest) (*ToolsCallResponse, error) {
		old := text
		err := a.client.SessionUpdate(ctx, &SessionNotification{SessionID: "s1", Update: &ToolCallUpdate{
			ToolCallID: "c1", RawInput: escaped, Content: []ToolCallContent{DiffContent("/w/a.go", &old, text+"\n")},
		}})
		return &ToolsCallResponse{Content: []ContentBlock{TextBlock(text)}, Details: escaped}, err
	}
	p := startPeer(t, FramingNDJSON, a, Options{})
	p.initialize()
	var raws []string
	id := p.request(MethodToolsCall, map[string]any{"name": "read", "cwd": "/tmp"})
	m := p.response(id, func(m wireMsg) { raws = append(raws, string(m.raw)) })
	raws = append(raws, string(m.raw))
	if len(raws) != 2 {
		t.Fatalf("got %d messages, want the update and the answer: %q", len(raws), raws)
	}
	for _, raw := range raws {
		for _, bad := range []string{`\u003c`, `\u003e`, `\u0026`} {
			if strings.Contains(strings.ReplaceAll(raw, `\\u003c`, ""), bad) {
				t.Errorf("%s on the wire: %s", bad, raw)
			}
		}
		mustContain(t, raw, `a < b && c > d`)
		mustContain(t, raw, `"literal":"\\u003c"`)
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			t.Errorf("invalid JSON on the wire: %v: %s", err, raw)
		}
	}
}

// FuzzUnescapeHTML checks that undoing HTML escaping keeps any string's
// JSON encoding valid and equal in meaning, and removes the escapes.
func FuzzUnescapeHTML(f *testing.F) {
	for _, s := range []string{"", "<>&", `\u003c`, `\\u003c`, "a\\<b", "\u2028<\x00\"", `\`, "é&<\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		in, err := json.Marshal(map[string]string{s: s})
		if err != nil {
			t.Skip()
		}
		out := unescapeHTML(in)
		var got map[string]string
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("unescapeHTML(%s) = %s: invalid JSON: %v", in, out, err)
		}
		var want map[string]string
		_ = json.Unmarshal(in, &want)
		if len(got) != 1 || !maps.Equal(got, want) {
			t.Fatalf("unescapeHTML(%s) = %s: decodes to %q, want %q", in, out, got, want)
		}
		if !strings.Contains(s, `u00`) && (bytes.Contains(out, []byte(`\u003c`)) || bytes.Contains(out, []byte(`\u0026`))) {
			t.Fatalf("unescapeHTML(%s) = %s: escape left", in, out)
		}
	})
}

// TestCallsInFlightBound checks the per-connection bound: a call beyond
// MaxCallsInFlight, or whose params would take the calls in flight beyond
// MaxBytesInFlight, is answered at once with CodeServerBusy; once answers
// are written, calls are served again.
func TestCallsInFlightBound(t *testing.T) {
	release, release2 := make(chan struct{}), make(chan struct{})
	a := &fakeAgent{toolsCall: func(ctx context.Context, req *ToolsCallRequest) (*ToolsCallResponse, error) {
		switch req.Name {
		case "block":
			<-release
		case "block2":
			<-release2
		}
		return &ToolsCallResponse{}, nil
	}}
	p := startPeer(t, FramingNDJSON, a, Options{MaxCallsInFlight: 2, MaxBytesInFlight: 300})
	p.initialize()
	block := map[string]any{"name": "block", "cwd": "/tmp"}
	first := p.request(MethodToolsCall, block)
	second := p.request(MethodToolsCall, block)
	// Two calls in flight: the third is refused, and so answered before
	// the two blocked ones.
	if m := p.call(MethodToolsCall, map[string]any{"name": "read", "cwd": "/tmp"}); m.Error == nil || m.Error.Code != CodeServerBusy {
		t.Fatalf("third call: got %s, want error %d", m.raw, CodeServerBusy)
	}
	close(release)
	for range 2 {
		m := p.next()
		if id := string(m.ID); (id != fmt.Sprint(first) && id != fmt.Sprint(second)) || m.Error != nil {
			t.Fatalf("want the answers to the blocked calls %d and %d, got %s", first, second, m.raw)
		}
	}
	if m := p.call(MethodToolsCall, map[string]any{"name": "read", "cwd": "/tmp"}); m.Error != nil {
		t.Fatalf("after the answers were written: %s", m.raw)
	}

	// Bytes: one call alone may be large; a second that would take the
	// total beyond the bound is refused.
	big := p.request(MethodToolsCall, map[string]any{"name": "block2", "cwd": "/tmp", "arguments": map[string]any{"pad": strings.Repeat("x", 400)}})
	if m := p.call(MethodToolsCall, map[string]any{"name": "read", "cwd": "/tmp", "arguments": map[string]any{"pad": strings.Repeat("x", 100)}}); m.Error == nil || m.Error.Code != CodeServerBusy {
		t.Fatalf("call beyond the byte bound: got %s, want error %d", m.raw, CodeServerBusy)
	}
	close(release2)
	if m := p.response(big, func(wireMsg) {}); m.Error != nil {
		t.Fatalf("large call: %s", m.raw)
	}
}
