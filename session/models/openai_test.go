package models

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coding-agent/coding-agent/session/models/modeltest"
)

func newOpenAIModel(t *testing.T, srv *modeltest.Server, key string, opts Options) Model {
	t.Helper()
	m, err := NewOpenAI("qwen3:8b", key, srv.BaseURL, opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestOpenAIStreamsTextReasoningAndToolCalls(t *testing.T) {
	for _, byteChunk := range []int{0, 1, 3} {
		t.Run("byteChunk="+itoa(byteChunk), func(t *testing.T) {
			srv := modeltest.NewOpenAIServer(t, modeltest.Script{{
				ByteChunk: byteChunk,
				Steps: []modeltest.Step{
					modeltest.Thinking("Hmm, "), modeltest.Thinking("two files ☃."),
					modeltest.Text("Reading "), modeltest.Text("both."),
					modeltest.Tool("call_a", "read", awkwardChunks...),
					modeltest.Tool("call_b", "bash", `{"comm`, `and":"ls \u00e9"}`),
					modeltest.Tool("call_c", "noargs"),
				},
				Usage: modeltest.Usage{InputTokens: 321, OutputTokens: 45},
			}})
			m := newOpenAIModel(t, srv, "", fastOpts())
			r, on := collect(t)
			if err := m.Stream(context.Background(), sampleRequest(), on); err != nil {
				t.Fatal(err)
			}
			if r.thinking != "Hmm, two files ☃." || r.text != "Reading both." {
				t.Errorf("thinking %q text %q", r.thinking, r.text)
			}
			want := []call{{"call_a", "read", awkwardArgs}, {"call_b", "bash", `{"command":"ls \u00e9"}`}, {"call_c", "noargs", "{}"}}
			if len(r.calls) != len(want) {
				t.Fatalf("calls %+v", r.calls)
			}
			for i := range want {
				if r.calls[i] != want[i] {
					t.Errorf("call %d = %+v, want %+v", i, r.calls[i], want[i])
				}
			}
			if r.stop != StopToolUse {
				t.Errorf("stop %q", r.stop)
			}
			if r.usage != (Usage{InputTokens: 321, OutputTokens: 45}) {
				t.Errorf("usage %+v", r.usage)
			}
			// Usage and done come after every tool end.
			kinds := []string{}
			for _, e := range r.events[len(r.events)-3:] {
				kinds = append(kinds, e.Kind)
			}
			if strings.Join(kinds, ",") != "tool_end,usage,done" {
				t.Errorf("last events %v", kinds)
			}
		})
	}
}

func TestOpenAIRequestBody(t *testing.T) {
	srv := modeltest.NewOpenAIServer(t, modeltest.Script{
		{Steps: []modeltest.Step{modeltest.Text("ok")}},
		{Steps: []modeltest.Step{modeltest.Text("ok")}},
	})
	m := newOpenAIModel(t, srv, "sk-test", fastOpts())
	req := sampleRequest()
	req.MaxTokens = 1000
	_, on := collect(t)
	if err := m.Stream(context.Background(), req, on); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization %q", got)
	}
	if reqs[0].Header.Get("X-Api-Key") != "" {
		t.Error("x-api-key sent to an OpenAI server")
	}
	var got map[string]any
	if err := reqs[0].Decode(&got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"model":          "qwen3:8b",
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
		"max_tokens":     1000.0,
		"tools": []any{
			map[string]any{"type": "function", "function": map[string]any{"name": "read", "description": "Read a file.", "parameters": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"}}}},
			map[string]any{"type": "function", "function": map[string]any{"name": "bash", "description": "Run a command.", "parameters": map[string]any{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}}}},
		},
		"messages": []any{
			map[string]any{"role": "system", "content": "You are a careful coding agent."},
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": "What is in this picture and in a.txt?"},
				map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,iVBORw0KGgo="}},
			}},
			map[string]any{"role": "assistant", "content": "Reading.", "tool_calls": []any{
				map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "read", "arguments": `{"path":"a.txt"}`}},
				map[string]any{"id": "call_2", "type": "function", "function": map[string]any{"name": "bash", "arguments": `{"command":"false"}`}},
			}},
			map[string]any{"role": "tool", "tool_call_id": "call_1", "content": "hello"},
			map[string]any{"role": "tool", "tool_call_id": "call_2", "content": "Error: exit status 1"},
		},
	}
	gotJSON, _ := json.MarshalIndent(got, "", " ")
	wantJSON, _ := json.MarshalIndent(want, "", " ")
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("request body:\n%s\nwant:\n%s", gotJSON, wantJSON)
	}

	// No key: no Authorization header at all (local servers).
	m = newOpenAIModel(t, srv, "", fastOpts())
	if err := m.Stream(context.Background(), Request{Messages: userText("hi")}, func(Event) {}); err != nil {
		t.Fatal(err)
	}
	if h := srv.Requests()[1].Header; len(h.Values("Authorization")) != 0 {
		t.Errorf("Authorization sent without a key: %q", h.Values("Authorization"))
	}
	var plain struct {
		Messages []struct {
			Content any `json:"content"`
		} `json:"messages"`
		MaxTokens *int `json:"max_tokens"`
	}
	if err := srv.Requests()[1].Decode(&plain); err != nil {
		t.Fatal(err)
	}
	if len(plain.Messages) != 1 || plain.Messages[0].Content != "hi" || plain.MaxTokens != nil {
		t.Errorf("plain text prompt not sent as a string, or max_tokens sent unasked: %+v", plain)
	}
}

func TestOpenAIOfficialUsesMaxCompletionTokens(t *testing.T) {
	m, err := NewOpenAI("gpt-5", "sk", "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	body, err := m.(*openAIModel).encode(Request{MaxTokens: 50, Messages: userText("hi")})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `"max_completion_tokens":50`) || strings.Contains(string(body), `"max_tokens"`) {
		t.Errorf("body %s", body)
	}
	if m.(*openAIModel).url != "https://api.openai.com/v1/chat/completions" {
		t.Errorf("url %q", m.(*openAIModel).url)
	}
}

// chunk is one raw Chat Completions data line carrying delta.
func chunk(delta string) string {
	return `data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}` + "\n\n"
}

func TestOpenAICompatibleServerQuirks(t *testing.T) {
	tests := []struct {
		name  string
		resp  modeltest.Response
		calls []call
		text  string
		think string
		stop  string
	}{{
		name: "every call at index 0 with its own id",
		resp: modeltest.Response{Steps: []modeltest.Step{
			{Raw: chunk(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read","arguments":"{\"path\":"}}]}`)},
			{Raw: chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"a\"}"}}]}`)},
			{Raw: chunk(`{"tool_calls":[{"index":0,"id":"c2","type":"function","function":{"name":"read","arguments":"{\"path\":\"b\"}"}}]}`)},
		}, StopReason: "tool_use"},
		calls: []call{{"c1", "read", `{"path":"a"}`}, {"c2", "read", `{"path":"b"}`}},
		stop:  StopToolUse,
	}, {
		name: "finish stop after tool calls still runs them",
		resp: modeltest.Response{Steps: []modeltest.Step{
			{Raw: chunk(`{"tool_calls":[{"index":0,"id":"c1","function":{"name":"bash","arguments":"{}"}}]}`)},
		}, StopReason: "end_turn"},
		calls: []call{{"c1", "bash", "{}"}},
		stop:  StopToolUse,
	}, {
		name: "arguments before the name",
		resp: modeltest.Response{Steps: []modeltest.Step{
			{Raw: chunk(`{"tool_calls":[{"index":0,"id":"c1","function":{"arguments":"{\"a\":"}}]}`)},
			{Raw: chunk(`{"tool_calls":[{"index":0,"function":{"name":"read","arguments":"1}"}}]}`)},
		}},
		calls: []call{{"c1", "read", `{"a":1}`}},
		stop:  StopToolUse,
	}, {
		name: "ollama reasoning field and refusal",
		resp: modeltest.Response{Steps: []modeltest.Step{
			{Raw: chunk(`{"reasoning":"mull"}`)},
			{Raw: chunk(`{"refusal":"I can't help with that."}`)},
		}},
		think: "mull",
		text:  "I can't help with that.",
		stop:  StopRefusal,
	}, {
		name: "length",
		resp: modeltest.Response{Steps: []modeltest.Step{modeltest.Text("cut")}, StopReason: "max_tokens"},
		text: "cut",
		stop: StopMaxTokens,
	}, {
		name: "comments and CRLF line ends",
		resp: modeltest.Response{Steps: []modeltest.Step{
			{Raw: ": keep-alive\r\n\r\n"},
			{Raw: strings.ReplaceAll(chunk(`{"content":"crlf"}`), "\n", "\r\n")},
		}},
		text: "crlf",
		stop: StopEndTurn,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := modeltest.NewOpenAIServer(t, modeltest.Script{tc.resp})
			m := newOpenAIModel(t, srv, "", fastOpts())
			r, on := collect(t)
			if err := m.Stream(context.Background(), Request{Messages: userText("hi")}, on); err != nil {
				t.Fatal(err)
			}
			if len(r.calls) != len(tc.calls) {
				t.Fatalf("calls %+v, want %+v", r.calls, tc.calls)
			}
			for i := range tc.calls {
				if r.calls[i] != tc.calls[i] {
					t.Errorf("call %d = %+v, want %+v", i, r.calls[i], tc.calls[i])
				}
			}
			if r.text != tc.text || r.thinking != tc.think || r.stop != tc.stop {
				t.Errorf("text %q thinking %q stop %q; want %q %q %q", r.text, r.thinking, r.stop, tc.text, tc.think, tc.stop)
			}
		})
	}
}

func TestOpenAIGeneratesMissingCallIDs(t *testing.T) {
	srv := modeltest.NewOpenAIServer(t, modeltest.Script{{Steps: []modeltest.Step{
		{Raw: chunk(`{"tool_calls":[{"function":{"name":"read","arguments":"{}"}}]}`)},
		{Raw: chunk(`{"tool_calls":[{"function":{"name":"bash","arguments":"{}"}}]}`)},
	}}})
	m := newOpenAIModel(t, srv, "", fastOpts())
	r, on := collect(t)
	if err := m.Stream(context.Background(), Request{Messages: userText("hi")}, on); err != nil {
		t.Fatal(err)
	}
	// Without index or id the second chunk continues the first call.
	if len(r.calls) != 1 || !strings.HasPrefix(r.calls[0].ID, "call_") || len(r.calls[0].ID) < 10 {
		t.Errorf("calls %+v", r.calls)
	}
}

func TestOpenAIErrors(t *testing.T) {
	tests := []struct {
		name     string
		script   modeltest.Script
		wantErr  []string
		requests int
	}{{
		name: "429 then success",
		script: modeltest.Script{
			{Status: 429, ErrorType: "requests", ErrorMessage: "Rate limit reached for gpt-5"},
			{Steps: []modeltest.Step{modeltest.Text("ok")}},
		},
		requests: 2,
	}, {
		name: "500 after partial output is not retried",
		script: modeltest.Script{
			{Steps: []modeltest.Step{modeltest.Text("partial"), {Error: &modeltest.StreamError{Type: "server_error", Message: "The server had an error"}}}},
			{},
		},
		wantErr:  []string{"openai: stream error: server_error: The server had an error"},
		requests: 1,
	}, {
		name: "dropped connection after output",
		script: modeltest.Script{
			{Steps: []modeltest.Step{modeltest.Text("partial"), {Disconnect: true}}},
			{},
		},
		wantErr:  []string{"openai: "},
		requests: 1,
	}, {
		name: "malformed chunk",
		script: modeltest.Script{
			{Steps: []modeltest.Step{{Raw: "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}\n\n"}}},
			{},
		},
		wantErr:  []string{`openai: malformed "chunk" event`, `data: {"choices"`},
		requests: 1,
	}, {
		name:     "ollama-style string error",
		script:   modeltest.Script{{Status: 404, ErrorMessage: `model "qwen3:8b" not found, try pulling it first`}},
		wantErr:  []string{`openai: HTTP 404 Not Found`, `model "qwen3:8b" not found, try pulling it first`},
		requests: 1,
	}, {
		name: "stall",
		script: modeltest.Script{
			{Steps: []modeltest.Step{modeltest.Text("x"), {Stall: true}}},
			{},
		},
		wantErr:  []string{"openai: no data from the stream for 200ms"},
		requests: 1,
	}, {
		name: "stream cut before finish",
		script: modeltest.Script{
			{Steps: []modeltest.Step{modeltest.Text("x"), {Disconnect: true}}},
			{},
		},
		wantErr:  []string{"openai: "},
		requests: 1,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := modeltest.NewOpenAIServer(t, tc.script)
			m := newOpenAIModel(t, srv, "sk", fastOpts())
			_, on := collect(t)
			err := m.Stream(context.Background(), Request{Messages: userText("hi")}, on)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
			} else {
				mustContain(t, err, tc.wantErr...)
			}
			if n := len(srv.Requests()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
		})
	}
}

func TestOpenAIEndWithoutDone(t *testing.T) {
	// A server that finishes but closes without "data: [DONE]" is accepted;
	// one that closes before finishing is an error.
	p := &openAIParser{}
	r, on := collect(t)
	in := chunk(`{"content":"hi"}`) + `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n"
	if err := p.parse(strings.NewReader(in), on); err != nil || r.stop != StopEndTurn || r.text != "hi" {
		t.Errorf("err %v stop %q text %q", err, r.stop, r.text)
	}
	p = &openAIParser{}
	err := p.parse(strings.NewReader(chunk(`{"content":"hi"}`)), func(Event) {})
	mustContain(t, err, "openai: the stream ended before the response was complete")
}

func TestOpenAIJSONInsteadOfStream(t *testing.T) {
	// A server that ignores "stream": true answers 200 with one JSON object.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"error":{"message":"streaming is not supported by this backend"}}`)
	}))
	defer srv.Close()
	m, err := NewOpenAI("m", "", srv.URL, fastOpts())
	if err != nil {
		t.Fatal(err)
	}
	err = m.Stream(context.Background(), Request{Messages: userText("hi")}, func(Event) {})
	mustContain(t, err, "openai: expected an event stream, got application/json: streaming is not supported by this backend")
}

func TestWrongPathIsA404WithTheServersMessage(t *testing.T) {
	srv := modeltest.NewOpenAIServer(t, nil)
	m, err := NewOpenAI("m", "", strings.TrimSuffix(srv.BaseURL, "/v1"), fastOpts()) // forgot the /v1
	if err != nil {
		t.Fatal(err)
	}
	err = m.Stream(context.Background(), Request{Messages: userText("hi")}, func(Event) {})
	mustContain(t, err, "openai: HTTP 404 Not Found", "modeltest: openai serves POST /v1/chat/completions")
}

func TestNewOpenAIRejects(t *testing.T) {
	_, err := NewOpenAI("gpt-5", "", "", Options{})
	mustContain(t, err, "OPENAI_API_KEY is not set")
	_, err = NewOpenAI("gpt-5", "", "localhost:11434", Options{})
	mustContain(t, err, "invalid URL")
	if _, err := NewOpenAI("llama3", "", "http://localhost:11434/v1", Options{StallTimeout: time.Second}); err != nil {
		t.Errorf("local server without key: %v", err)
	}
}
