// Package modeltest runs fake model servers that speak the real streaming
// wire formats of Anthropic's Messages API and OpenAI's Chat Completions, for
// tests of the models package and end-to-end tests of the binary (point
// ANTHROPIC_BASE_URL or OPENAI_BASE_URL at [Server.BaseURL]).
//
// A server plays a [Script]: one [Response] per request, in order. A
// response is an HTTP error or a stream built from [Step]s. The server
// records every request and answers requests that break the real API's
// structural rules (a tool result without its call, a missing model) with
// 400, the way the provider would, so a test cannot pass with a conversation
// the real service would refuse.
package modeltest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
)

// Script is the responses a server gives, one per request, in order.
type Script []Response

// Response is one canned answer. With Status 0 or 200 it is an event stream
// of Steps; otherwise an error body in the provider's format.
type Response struct {
	Status int `json:"status,omitempty"`
	// Header is added to the answer, e.g. {"Retry-After": "2"}.
	Header map[string]string `json:"header,omitempty"`
	// ErrorType and ErrorMessage fill the error body of a non-200 answer.
	ErrorType    string `json:"errorType,omitempty"`
	ErrorMessage string `json:"errorMessage,omitempty"`

	Steps []Step `json:"steps,omitempty"`
	// StopReason is "end_turn" (default, or "tool_use" when a step calls a
	// tool), "tool_use", "max_tokens" or "refusal"; each server maps it to
	// its provider's word.
	StopReason string `json:"stopReason,omitempty"`
	Usage      Usage  `json:"usage,omitzero"`
	// ByteChunk, when positive, writes the stream in pieces of this many
	// bytes, each flushed on its own, so events, JSON and multi-byte
	// characters arrive split at every position.
	ByteChunk int `json:"byteChunk,omitempty"`
}

// Step is one piece of a streamed response; exactly one field is set.
type Step struct {
	// Text is one text delta. Consecutive text steps share a content block.
	Text string `json:"text,omitempty"`
	// Thinking is one reasoning delta (Anthropic thinking_delta, OpenAI
	// reasoning_content).
	Thinking string `json:"thinking,omitempty"`
	// Signature ends the current thinking block with its signature
	// (Anthropic only; ignored by the OpenAI server).
	Signature string `json:"signature,omitempty"`
	// Tool is a tool call whose arguments stream as its Chunks.
	Tool *ToolCall `json:"tool,omitempty"`
	// Error sends the provider's in-stream error event and ends the stream.
	Error *StreamError `json:"error,omitempty"`
	// Raw is written to the stream verbatim (for malformed events).
	Raw string `json:"raw,omitempty"`
	// Stall flushes what was sent and then sends nothing more, holding the
	// connection open until the client gives up or the test ends.
	Stall bool `json:"stall,omitempty"`
	// Disconnect flushes and drops the connection without ending the stream.
	Disconnect bool `json:"disconnect,omitempty"`
}

// ToolCall is a streamed tool call. Chunks are the argument deltas, in
// order; their concatenation is the JSON arguments.
type ToolCall struct {
	ID     string   `json:"id"`
	Name   string   `json:"name"`
	Chunks []string `json:"chunks,omitempty"`
}

// StreamError is an error event inside a stream.
type StreamError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Usage is the token counts a response reports. InputTokens are the
// uncached input tokens; each server reports the cached ones the way its
// provider does (OpenAI counts them inside prompt_tokens).
type Usage struct {
	InputTokens      int64 `json:"inputTokens,omitempty"`
	OutputTokens     int64 `json:"outputTokens,omitempty"`
	CacheReadTokens  int64 `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int64 `json:"cacheWriteTokens,omitempty"`
}

// Text returns a step with one text delta.
func Text(s string) Step { return Step{Text: s} }

// Thinking returns a step with one reasoning delta.
func Thinking(s string) Step { return Step{Thinking: s} }

// Tool returns a step calling tool name with id, its arguments streamed in
// chunks.
func Tool(id, name string, chunks ...string) Step {
	return Step{Tool: &ToolCall{ID: id, Name: name, Chunks: chunks}}
}

// LoadScript reads a Script from a JSON file (an array of Response objects,
// with the field names of their JSON tags).
func LoadScript(path string) (Script, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Script
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("modeltest: %s: %w", path, err)
	}
	return s, nil
}

// Request is a request the server received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// Decode unmarshals the JSON body into v.
func (r Request) Decode(v any) error { return json.Unmarshal(r.Body, v) }

// Server is a running fake provider.
type Server struct {
	// BaseURL is the value for ANTHROPIC_BASE_URL or OPENAI_BASE_URL.
	BaseURL string

	t         testing.TB // nil for a server started without a test
	format    format
	done      chan struct{}
	closeOnce sync.Once
	srv       *httptest.Server

	mu       sync.Mutex
	script   Script
	requests []Request
	models   map[string]any // GET /v1/models answers with these, if set
}

// ServeModels makes an OpenAI server answer GET /v1/models with one entry
// per model id, each carrying the extra fields given (e.g. vLLM's
// "max_model_len"). Such requests are not scripted and not recorded.
func (s *Server) ServeModels(models map[string]map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = map[string]any{}
	for id, extra := range models {
		e := map[string]any{"id": id, "object": "model", "owned_by": "modeltest"}
		for k, v := range extra {
			e[k] = v
		}
		s.models[id] = e
	}
}

// format is one provider's wire format.
type format interface {
	name() string
	path() string
	// check returns a description of what the real API would reject in
	// body, "" if nothing.
	check(body []byte) string
	errorBody(typ, msg string) any
	stream(w *streamWriter, model string, resp Response)
}

func newServer(t testing.TB, f format, prefix string, script Script) *Server {
	s := &Server{t: t, format: f, done: make(chan struct{}), script: script}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.BaseURL = s.srv.URL + prefix
	if t != nil {
		t.Helper()
		t.Cleanup(s.Close)
	}
	return s
}

// Close releases stalled handlers and stops the server, waiting for its
// handlers. A server of a test closes when the test ends; one started
// with [StartAnthropic] or [StartOpenAI] must be closed by its caller.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		s.srv.Close()
	})
}

// StartAnthropic is [NewAnthropicServer] outside a test (an Example, a
// benchmark script): the caller closes it. A request beyond the script is
// answered with HTTP 500 and not reported elsewhere.
func StartAnthropic(script Script) *Server { return newServer(nil, anthropicFormat{}, "", script) }

// StartOpenAI is [NewOpenAIServer] outside a test; the caller closes it.
func StartOpenAI(script Script) *Server { return newServer(nil, openAIFormat{}, "/v1", script) }

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Remaining is the number of scripted responses not served yet.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != s.format.path() {
		// Not a model request: not scripted, not recorded.
		s.mu.Lock()
		models := s.models
		s.mu.Unlock()
		if r.Method == http.MethodGet && r.URL.Path == "/v1/models" && models != nil {
			var data []any
			for _, m := range models {
				data = append(data, m)
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(s.format.errorBody("not_found_error", fmt.Sprintf("modeltest: %s serves POST %s, not %s %s", s.format.name(), s.format.path(), r.Method, r.URL.Path)))
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	n := len(s.requests)
	var resp Response
	haveResp := len(s.script) > 0
	if haveResp {
		resp, s.script = s.script[0], s.script[1:]
	}
	s.mu.Unlock()

	fail := func(status int, typ, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(s.format.errorBody(typ, msg))
	}
	if !haveResp {
		if s.t != nil {
			s.t.Errorf("modeltest: %s request %d: no scripted response left", s.format.name(), n)
		}
		fail(http.StatusInternalServerError, "api_error", fmt.Sprintf("modeltest: no scripted response left for request %d", n))
		return
	}
	for k, v := range resp.Header {
		w.Header().Set(k, v)
	}
	if resp.Status != 0 && resp.Status != http.StatusOK {
		fail(resp.Status, resp.ErrorType, resp.ErrorMessage)
		return
	}
	if msg := s.format.check(body); msg != "" {
		fail(http.StatusBadRequest, "invalid_request_error", msg)
		return
	}
	var head struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &head)

	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	sw := &streamWriter{w: w, rc: http.NewResponseController(w), chunk: resp.ByteChunk, req: r, done: s.done}
	s.format.stream(sw, head.Model, resp)
}

// streamWriter writes a stream, optionally in tiny flushed pieces.
type streamWriter struct {
	w     http.ResponseWriter
	rc    *http.ResponseController
	chunk int
	req   *http.Request
	done  chan struct{}
}

// event writes one SSE event; name may be "" (OpenAI sends data only).
func (sw *streamWriter) event(name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	var msg string
	if name != "" {
		msg = "event: " + name + "\n"
	}
	sw.raw(msg + "data: " + string(b) + "\n\n")
}

// raw writes s as it is.
func (sw *streamWriter) raw(s string) {
	if sw.chunk <= 0 {
		_, _ = io.WriteString(sw.w, s)
		_ = sw.rc.Flush()
		return
	}
	for len(s) > 0 {
		n := min(sw.chunk, len(s))
		_, _ = io.WriteString(sw.w, s[:n])
		_ = sw.rc.Flush()
		s = s[n:]
	}
}

// stall holds the connection open until the client leaves or the test ends.
func (sw *streamWriter) stall() {
	_ = sw.rc.Flush()
	select {
	case <-sw.req.Context().Done():
	case <-sw.done:
	}
}

// disconnect drops the connection mid-stream.
func (sw *streamWriter) disconnect() {
	_ = sw.rc.Flush()
	panic(http.ErrAbortHandler)
}

// stopReason is resp's neutral stop reason, defaulted.
func stopReason(resp Response) string {
	if resp.StopReason != "" {
		return resp.StopReason
	}
	for _, st := range resp.Steps {
		if st.Tool != nil {
			return "tool_use"
		}
	}
	return "end_turn"
}
