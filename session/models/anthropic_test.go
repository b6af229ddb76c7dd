package models

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coding-agent/coding-agent/session/models/modeltest"
)

// awkwardArgs is split below mid-key, mid-\u escape, between a backslash
// and the quote it escapes, and around multi-byte characters.
const awkwardArgs = `{"path":"d\u00e9j\u00e0 \"vu\".txt","note":"naïve ☃"}`

var awkwardChunks = []string{`{"pa`, `th":"d\u00`, `e9j\u00e0 \`, `"vu\".txt","no`, `te":"naïve ☃"}`}

func newAnthropicModel(t *testing.T, srv *modeltest.Server, opts Options) Model {
	t.Helper()
	m, err := NewAnthropic("claude-sonnet-4-5", "sk-ant-test", srv.BaseURL, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestAnthropicStreamsTextThinkingAndToolCalls(t *testing.T) {
	if strings.Join(awkwardChunks, "") != awkwardArgs {
		t.Fatal("test chunks do not add up to the arguments")
	}
	for _, byteChunk := range []int{0, 1, 5} {
		t.Run("byteChunk="+itoa(byteChunk), func(t *testing.T) {
			srv := modeltest.NewAnthropicServer(t, modeltest.Script{{
				ByteChunk: byteChunk,
				Steps: []modeltest.Step{
					modeltest.Thinking("Let me "), modeltest.Thinking("think ☃."), {Signature: "EqQBCkYI"},
					modeltest.Text("I'll read "), modeltest.Text("two files."),
					modeltest.Tool("toolu_01", "read", awkwardChunks...),
					modeltest.Tool("toolu_02", "bash", `{"command":"echo 'a\\nb'`, ` | wc -l"}`),
					modeltest.Tool("toolu_03", "noargs"),
				},
				Usage: modeltest.Usage{InputTokens: 1200, OutputTokens: 85},
			}})
			m := newAnthropicModel(t, srv, fastOpts())
			r, on := collect(t)
			if err := m.Stream(context.Background(), sampleRequest(), on); err != nil {
				t.Fatal(err)
			}
			if r.thinking != "Let me think ☃." || r.signature != "EqQBCkYI" {
				t.Errorf("thinking %q signature %q", r.thinking, r.signature)
			}
			if r.text != "I'll read two files." {
				t.Errorf("text %q", r.text)
			}
			want := []call{
				{"toolu_01", "read", awkwardArgs},
				{"toolu_02", "bash", `{"command":"echo 'a\\nb' | wc -l"}`},
				{"toolu_03", "noargs", "{}"},
			}
			if len(r.calls) != len(want) {
				t.Fatalf("calls %+v, want %+v", r.calls, want)
			}
			for i := range want {
				if r.calls[i] != want[i] {
					t.Errorf("call %d = %+v, want %+v", i, r.calls[i], want[i])
				}
			}
			if v := validJSONObject(t, r.calls[0].Args); v["path"] != `déjà "vu".txt` || v["note"] != "naïve ☃" {
				t.Errorf("decoded args %v", v)
			}
			if r.stop != StopToolUse {
				t.Errorf("stop %q", r.stop)
			}
			if r.usage != (Usage{InputTokens: 1200, OutputTokens: 85}) {
				t.Errorf("usage %+v", r.usage)
			}
		})
	}
}

func TestAnthropicRequestBody(t *testing.T) {
	srv := modeltest.NewAnthropicServer(t, modeltest.Script{{Steps: []modeltest.Step{modeltest.Text("ok")}}})
	m := newAnthropicModel(t, srv, fastOpts())
	r, on := collect(t)
	if err := m.Stream(context.Background(), sampleRequest(), on); err != nil {
		t.Fatal(err)
	}
	if r.text != "ok" || r.stop != StopEndTurn {
		t.Errorf("text %q stop %q", r.text, r.stop)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	h := reqs[0].Header
	for k, v := range map[string]string{"X-Api-Key": "sk-ant-test", "Anthropic-Version": "2023-06-01", "Content-Type": "application/json"} {
		if h.Get(k) != v {
			t.Errorf("header %s = %q, want %q", k, h.Get(k), v)
		}
	}
	if h.Get("Authorization") != "" {
		t.Errorf("Authorization header sent to Anthropic: %q", h.Get("Authorization"))
	}
	var got map[string]any
	if err := reqs[0].Decode(&got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"model":      "claude-sonnet-4-5",
		"max_tokens": 32000.0,
		"stream":     true,
		"system":     []any{map[string]any{"type": "text", "text": "You are a careful coding agent.", "cache_control": map[string]any{"type": "ephemeral"}}},
		"tools": []any{
			map[string]any{"name": "read", "description": "Read a file.", "input_schema": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"}}},
			map[string]any{"name": "bash", "description": "Run a command.", "input_schema": map[string]any{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}}, "cache_control": map[string]any{"type": "ephemeral"}},
		},
		"messages": []any{
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": "What is in this picture and in a.txt?"},
				map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}, "cache_control": map[string]any{"type": "ephemeral"}},
			}},
			map[string]any{"role": "assistant", "content": []any{
				map[string]any{"type": "thinking", "thinking": "Look at both.", "signature": "sig-abc"},
				map[string]any{"type": "text", "text": "Reading."},
				map[string]any{"type": "tool_use", "id": "call_1", "name": "read", "input": map[string]any{"path": "a.txt"}},
				map[string]any{"type": "tool_use", "id": "call_2", "name": "bash", "input": map[string]any{"command": "false"}},
			}},
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": "call_1", "content": "hello"},
				map[string]any{"type": "tool_result", "tool_use_id": "call_2", "content": "exit status 1", "is_error": true, "cache_control": map[string]any{"type": "ephemeral"}},
			}},
		},
	}
	gotJSON, _ := json.MarshalIndent(got, "", " ")
	wantJSON, _ := json.MarshalIndent(want, "", " ")
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("request body:\n%s\nwant:\n%s", gotJSON, wantJSON)
	}
}

func TestAnthropicEncodeEdgeCases(t *testing.T) {
	m, err := NewAnthropic("claude-3-5-haiku-latest", "k", "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	am := m.(*anthropicModel)
	body, err := am.encode(Request{Messages: []Message{
		{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: ""}, {Kind: PartText, Text: "hi"}}},
		{Role: RoleAssistant, Parts: []Part{
			{Kind: PartThinking, Text: "unsigned, from another provider"},
			{Kind: PartToolCall, ToolCallID: "t1", ToolName: "read", Args: json.RawMessage(`{"path": "unterminated`)},
		}},
		{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "after"}, {Kind: PartToolResult, ToolCallID: "t1", Text: ""}}},
		{Role: RoleAssistant, Parts: []Part{{Kind: PartText, Text: ""}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		MaxTokens int `json:"max_tokens"`
		Messages  []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if got.MaxTokens != 8192 {
		t.Errorf("max_tokens %d for a 3.5 model", got.MaxTokens)
	}
	if len(got.Messages) != 3 {
		t.Fatalf("messages %+v: want the empty assistant message dropped", got.Messages)
	}
	if c := got.Messages[0].Content; len(c) != 1 || c[0]["text"] != "hi" {
		t.Errorf("empty text block not dropped: %v", c)
	}
	if c := got.Messages[1].Content; len(c) != 1 || c[0]["type"] != "tool_use" || len(c[0]["input"].(map[string]any)) != 0 {
		t.Errorf("unsigned thinking kept or invalid args not replaced by {}: %v", c)
	}
	if c := got.Messages[2].Content; len(c) != 2 || c[0]["type"] != "tool_result" || c[0]["content"] != nil {
		t.Errorf("tool_result not first, or empty content sent: %v", c)
	}

	bad := []struct {
		name string
		req  Request
		want string
	}{
		{"role", Request{Messages: []Message{{Role: "system"}}}, `messages[0].role: unknown role "system"`},
		{"kind", Request{Messages: []Message{{Role: RoleUser, Parts: []Part{{Kind: "video"}}}}}, `messages[0].parts[0]: kind: unknown part kind "video"`},
		{"image mime", Request{Messages: []Message{{Role: RoleUser, Parts: []Part{{Kind: PartImage, Data: "x"}}}}}, "mimeType: empty"},
		{"tool call in user", Request{Messages: []Message{{Role: RoleUser, Parts: []Part{{Kind: PartToolCall, ToolCallID: "a", ToolName: "b"}}}}}, "tool_call parts belong in assistant messages"},
		{"result without id", Request{Messages: []Message{{Role: RoleUser, Parts: []Part{{Kind: PartToolResult}}}}}, "toolCallId: empty"},
		{"tool schema", Request{Tools: []ToolSpec{{Name: "x", Schema: json.RawMessage(`{`)}}}, `tools[0]: schema of "x": invalid JSON`},
		{"tool name", Request{Tools: []ToolSpec{{}}}, "tools[0]: name: empty"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := am.encode(tc.req)
			mustContain(t, err, "anthropic: ", tc.want)
		})
	}
}

func TestAnthropicStallAfterOutputIsNotRetried(t *testing.T) {
	srv := modeltest.NewAnthropicServer(t, modeltest.Script{
		{Steps: []modeltest.Step{modeltest.Text("partial"), {Stall: true}}},
		{Steps: []modeltest.Step{modeltest.Text("must not be requested")}},
	})
	m := newAnthropicModel(t, srv, fastOpts())
	r, on := collect(t)
	err := m.Stream(context.Background(), Request{Messages: userText("hi")}, on)
	mustContain(t, err, "anthropic: no data from the stream for 200ms")
	if r.text != "partial" {
		t.Errorf("text %q", r.text)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1 (no retry after output)", n)
	}
}

func TestAnthropicStallBeforeOutputIsRetried(t *testing.T) {
	srv := modeltest.NewAnthropicServer(t, modeltest.Script{
		{Steps: []modeltest.Step{{Stall: true}}},
		{Steps: []modeltest.Step{modeltest.Text("second try")}},
	})
	m := newAnthropicModel(t, srv, fastOpts())
	r, on := collect(t)
	if err := m.Stream(context.Background(), Request{Messages: userText("hi")}, on); err != nil {
		t.Fatal(err)
	}
	if r.text != "second try" || len(srv.Requests()) != 2 {
		t.Errorf("text %q after %d requests", r.text, len(srv.Requests()))
	}
}

func TestAnthropicRetryAfterIsHonouredScaled(t *testing.T) {
	srv := modeltest.NewAnthropicServer(t, modeltest.Script{
		{Status: 429, Header: map[string]string{"Retry-After": "2"}, ErrorType: "rate_limit_error", ErrorMessage: "Number of requests has exceeded your rate limit"},
		{Status: 529, ErrorType: "overloaded_error", ErrorMessage: "Overloaded"},
		{Steps: []modeltest.Step{modeltest.Text("finally")}},
	})
	m := newAnthropicModel(t, srv, fastOpts())
	var rec sleepRecorder
	rec.install(m)
	r, on := collect(t)
	if err := m.Stream(context.Background(), Request{Messages: userText("hi")}, on); err != nil {
		t.Fatal(err)
	}
	if r.text != "finally" {
		t.Errorf("text %q", r.text)
	}
	waits := rec.get()
	if len(waits) != 2 {
		t.Fatalf("waits %v, want 2", waits)
	}
	// Retry-After: 2 (seconds) scaled by 1ms/500ms.
	if waits[0] != 4*time.Millisecond {
		t.Errorf("first wait %v, want 4ms (Retry-After 2s scaled)", waits[0])
	}
	// Second attempt's backoff: base 1ms doubled, jittered into [1ms, 2ms].
	if waits[1] < time.Millisecond || waits[1] > 2*time.Millisecond {
		t.Errorf("second wait %v, want within [1ms, 2ms]", waits[1])
	}
}

func TestAnthropicHTTPErrors(t *testing.T) {
	tests := []struct {
		name     string
		script   modeltest.Script
		opts     func(*Options)
		wantErr  []string
		requests int
	}{{
		name: "overloaded until attempts run out",
		script: modeltest.Script{
			{Status: 529, ErrorType: "overloaded_error", ErrorMessage: "Overloaded"},
			{Status: 529, ErrorType: "overloaded_error", ErrorMessage: "Overloaded"},
			{Status: 529, ErrorType: "overloaded_error", ErrorMessage: "Overloaded"},
			{Status: 529, ErrorType: "overloaded_error", ErrorMessage: "Overloaded"},
		},
		wantErr:  []string{"anthropic: HTTP 529", "overloaded_error: Overloaded", "gave up after 4 attempts"},
		requests: 4,
	}, {
		name:     "max retries configurable",
		script:   modeltest.Script{{Status: 500, ErrorMessage: "boom"}, {Status: 500, ErrorMessage: "boom"}},
		opts:     func(o *Options) { o.MaxRetries = 1 },
		wantErr:  []string{"anthropic: HTTP 500 Internal Server Error", "boom", "gave up after 2 attempts"},
		requests: 2,
	}, {
		name:     "retries disabled",
		script:   modeltest.Script{{Status: 500, ErrorMessage: "boom"}, {}},
		opts:     func(o *Options) { o.MaxRetries = -1 },
		wantErr:  []string{"anthropic: HTTP 500", "boom"},
		requests: 1,
	}, {
		name:     "bad request is not retried",
		script:   modeltest.Script{{Status: 400, ErrorType: "invalid_request_error", ErrorMessage: "messages: roles must alternate"}, {}},
		wantErr:  []string{"anthropic: HTTP 400 Bad Request: invalid_request_error: messages: roles must alternate"},
		requests: 1,
	}, {
		name:     "authentication error",
		script:   modeltest.Script{{Status: 401, ErrorType: "authentication_error", ErrorMessage: "invalid x-api-key"}},
		wantErr:  []string{"anthropic: HTTP 401 Unauthorized: authentication_error: invalid x-api-key"},
		requests: 1,
	}, {
		name:     "x-should-retry false wins over 500",
		script:   modeltest.Script{{Status: 500, Header: map[string]string{"X-Should-Retry": "false"}, ErrorMessage: "no"}, {}},
		wantErr:  []string{"HTTP 500"},
		requests: 1,
	}, {
		name:     "retry-after too long is not waited for",
		script:   modeltest.Script{{Status: 429, Header: map[string]string{"Retry-After": "3600"}, ErrorMessage: "slow down"}, {}},
		wantErr:  []string{"HTTP 429", "slow down"},
		requests: 1,
	}, {
		name: "stream error after output is not retried",
		script: modeltest.Script{
			{Steps: []modeltest.Step{modeltest.Text("half an ans"), {Error: &modeltest.StreamError{Type: "overloaded_error", Message: "Overloaded"}}}},
			{},
		},
		wantErr:  []string{"anthropic: stream error: overloaded_error: Overloaded"},
		requests: 1,
	}, {
		name: "dropped connection after output is not retried",
		script: modeltest.Script{
			{Steps: []modeltest.Step{modeltest.Text("half"), {Disconnect: true}}},
			{},
		},
		wantErr:  []string{"anthropic: "},
		requests: 1,
	}, {
		name: "malformed event",
		script: modeltest.Script{
			{Steps: []modeltest.Step{modeltest.Text("a"), {Raw: "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"\n\n"}}},
			{},
		},
		wantErr:  []string{`anthropic: malformed "content_block_delta" event`, `data: {"type":"content_block_delta"`},
		requests: 1,
	}, {
		name: "delta for a block never started",
		script: modeltest.Script{
			{Steps: []modeltest.Step{{Raw: "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":7,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n"}}},
			{},
		},
		wantErr:  []string{`malformed "content_block_delta" event: no open content block 7`},
		requests: 1,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := modeltest.NewAnthropicServer(t, tc.script)
			opts := fastOpts()
			if tc.opts != nil {
				tc.opts(&opts)
			}
			m := newAnthropicModel(t, srv, opts)
			_, on := collect(t)
			err := m.Stream(context.Background(), Request{Messages: userText("hi")}, on)
			mustContain(t, err, tc.wantErr...)
			if n := len(srv.Requests()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
		})
	}
}

func TestAnthropicStreamErrorBeforeOutputIsRetried(t *testing.T) {
	srv := modeltest.NewAnthropicServer(t, modeltest.Script{
		{Steps: []modeltest.Step{{Error: &modeltest.StreamError{Type: "overloaded_error", Message: "Overloaded"}}}},
		{Steps: []modeltest.Step{{Disconnect: true}}},
		{Steps: []modeltest.Step{modeltest.Text("third time")}},
	})
	m := newAnthropicModel(t, srv, fastOpts())
	r, on := collect(t)
	if err := m.Stream(context.Background(), Request{Messages: userText("hi")}, on); err != nil {
		t.Fatal(err)
	}
	if r.text != "third time" || len(srv.Requests()) != 3 {
		t.Errorf("text %q after %d requests", r.text, len(srv.Requests()))
	}
}

func TestAnthropicCancelDuringStream(t *testing.T) {
	srv := modeltest.NewAnthropicServer(t, modeltest.Script{
		{Steps: []modeltest.Step{modeltest.Text("start"), {Stall: true}}},
	})
	opts := fastOpts()
	opts.StallTimeout = time.Hour // only the cancel may end this
	m := newAnthropicModel(t, srv, opts)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := m.Stream(ctx, Request{Messages: userText("hi")}, func(e Event) {
		if e.Kind == EventText {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || err != ctx.Err() {
		t.Errorf("err = %v, want ctx.Err()", err)
	}
}

func TestAnthropicSlowConsumerIsNotAStall(t *testing.T) {
	srv := modeltest.NewAnthropicServer(t, modeltest.Script{
		{Steps: []modeltest.Step{modeltest.Text("a"), modeltest.Text("b")}},
	})
	opts := fastOpts()
	opts.StallTimeout = 20 * time.Millisecond
	m := newAnthropicModel(t, srv, opts)
	var text string
	err := m.Stream(context.Background(), Request{Messages: userText("hi")}, func(e Event) {
		if e.Kind == EventText && text == "" {
			// The consumer is busy longer than the stall timeout; the
			// stream itself never stalled. A timer is the only way to be
			// busy, and this waits on a channel, not a sleep.
			<-time.After(100 * time.Millisecond)
		}
		text += e.Text
	})
	if err != nil || text != "ab" {
		t.Errorf("err %v text %q", err, text)
	}
}

func TestNewAnthropicRejects(t *testing.T) {
	_, err := NewAnthropic("claude-sonnet-4-5", "", "", Options{})
	mustContain(t, err, "ANTHROPIC_API_KEY is not set")
	_, err = NewAnthropic("claude-sonnet-4-5", "k", "ftp://x", Options{})
	mustContain(t, err, `invalid URL "ftp://x"`)
	_, err = NewAnthropic("", "k", "", Options{})
	mustContain(t, err, "empty model name")
}

func userText(s string) []Message {
	return []Message{{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: s}}}}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
