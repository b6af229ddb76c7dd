package models

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

// result is a response reassembled from its events.
type result struct {
	events    []Event
	text      string
	thinking  string
	signature string
	calls     []call
	usage     Usage
	stop      string
}

type call struct {
	ID, Name, Args string
}

// collect gathers events and checks the ordering rules of the Model
// contract: a tool call starts before its deltas, ends after them, ends
// once; Done comes last, once.
func collect(t *testing.T) (*result, func(Event)) {
	t.Helper()
	r := &result{}
	started := map[int]bool{}
	ended := map[int]bool{}
	done := false
	return r, func(e Event) {
		t.Helper()
		if done {
			t.Errorf("event %+v after done", e)
		}
		r.events = append(r.events, e)
		switch e.Kind {
		case EventText:
			r.text += e.Text
		case EventThinking:
			r.thinking += e.Text
			r.signature += e.Signature
		case EventToolStart:
			if started[e.Index] {
				t.Errorf("tool %d started twice", e.Index)
			}
			if e.Index != len(r.calls) {
				t.Errorf("tool start index %d, want %d (ordinal)", e.Index, len(r.calls))
			}
			started[e.Index] = true
			r.calls = append(r.calls, call{ID: e.ToolCallID, Name: e.ToolName})
		case EventToolDelta:
			if !started[e.Index] || ended[e.Index] {
				t.Errorf("delta for tool %d outside its start/end", e.Index)
				return
			}
			r.calls[e.Index].Args += e.ArgsDelta
		case EventToolEnd:
			if !started[e.Index] || ended[e.Index] {
				t.Errorf("bad end for tool %d", e.Index)
			}
			ended[e.Index] = true
		case EventUsage:
			r.usage = e.Usage
		case EventDone:
			done = true
			r.stop = e.StopReason
			for i := range started {
				if !ended[i] {
					t.Errorf("tool %d not ended before done", i)
				}
			}
		default:
			t.Errorf("unknown event kind %q", e.Kind)
		}
	}
}

// sleepRecorder replaces a client's sleep, recording the waits.
type sleepRecorder struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleepRecorder) install(m Model) {
	var c *client
	switch m := m.(type) {
	case *anthropicModel:
		c = m.c
	case *openAIModel:
		c = m.c
	}
	c.sleep = func(ctx context.Context, d time.Duration) error {
		s.mu.Lock()
		s.waits = append(s.waits, d)
		s.mu.Unlock()
		return ctx.Err()
	}
}

func (s *sleepRecorder) get() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// fastOpts are options for tests: tiny backoff, short stall timeout.
func fastOpts() Options {
	return Options{RetryBase: time.Millisecond, StallTimeout: 200 * time.Millisecond}
}

func mustContain(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}

func validJSONObject(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("arguments %q: %v", s, err)
	}
	return v
}

// sampleRequest is a conversation exercising every part kind: a user
// prompt with an image, an assistant turn with thinking, text and two tool
// calls, then their results (one failed) and a follow-up.
func sampleRequest() Request {
	return Request{
		System: "You are a careful coding agent.",
		Tools: []ToolSpec{
			{Name: "read", Description: "Read a file.", Schema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "bash", Description: "Run a command.", Schema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
		},
		Messages: []Message{
			{Role: RoleUser, Parts: []Part{
				{Kind: PartText, Text: "What is in this picture and in a.txt?"},
				{Kind: PartImage, MimeType: "image/png", Data: "iVBORw0KGgo="},
			}},
			{Role: RoleAssistant, Parts: []Part{
				{Kind: PartThinking, Text: "Look at both.", Signature: "sig-abc"},
				{Kind: PartText, Text: "Reading."},
				{Kind: PartToolCall, ToolCallID: "call_1", ToolName: "read", Args: json.RawMessage(`{"path":"a.txt"}`)},
				{Kind: PartToolCall, ToolCallID: "call_2", ToolName: "bash", Args: json.RawMessage(`{"command":"false"}`)},
			}},
			{Role: RoleUser, Parts: []Part{
				{Kind: PartToolResult, ToolCallID: "call_1", Text: "hello"},
				{Kind: PartToolResult, ToolCallID: "call_2", Text: "exit status 1", IsError: true},
			}},
		},
	}
}
