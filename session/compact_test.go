package session

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coding-agent/coding-agent/session/models"
	"github.com/coding-agent/coding-agent/session/models/modeltest"
)

// compactEnv is a session on a scripted Anthropic server whose model has
// a 20,000-token window (config.json): compaction starts above 17,000
// (window − (2,000 output + 5%)), and about 5,000 tokens stay verbatim.
func compactEnv(t *testing.T, script modeltest.Script) (*Env, *modeltest.Server, models.Model, string) {
	t.Helper()
	data := t.TempDir()
	cfg := `{"models":{"anthropic/claude-sonnet-4-5":{"contextWindow":20000,"maxOutputTokens":2000}}}`
	if err := os.WriteFile(filepath.Join(data, "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := modeltest.NewAnthropicServer(t, script)
	m, err := models.NewAnthropic("claude-sonnet-4-5", "sk-test", srv.BaseURL, models.Options{MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return &Env{DataDir: data, Getenv: func(string) string { return "" }}, srv, m, data
}

// antBody is the part of an Anthropic request body the tests look at.
type antBody struct {
	ToolChoice *struct {
		Type string `json:"type"`
	} `json:"tool_choice"`
	Messages []struct {
		Role    string `json:"role"`
		Content []struct {
			Type      string `json:"type"`
			Text      string `json:"text"`
			ID        string `json:"id"`
			ToolUseID string `json:"tool_use_id"`
		} `json:"content"`
	} `json:"messages"`
}

func decodeBody(t *testing.T, r modeltest.Request) (antBody, string) {
	t.Helper()
	var b antBody
	if err := r.Decode(&b); err != nil {
		t.Fatal(err)
	}
	raw, _ := marshalNoEscape(b.Messages)
	return b, string(raw)
}

func prompt(t *testing.T, s *Session, text string) StopReason {
	t.Helper()
	stop, err := s.Prompt(context.Background(), []Content{Text(text)})
	if err != nil {
		t.Fatalf("prompt %q: %v", text, err)
	}
	return stop
}

const summaryText = "## User's goals\nCount the words.\n## Decisions\nNone.\n## Files\na.txt read.\n## Errors\nNone.\n## Remaining work\nAnswer."

func TestCompactionTriggersAtTheThreshold(t *testing.T) {
	answer := strings.Repeat("All work and no play. ", 300) // 6.6 KB
	env, srv, m, data := compactEnv(t, modeltest.Script{
		// Turn 1: 10,000 tokens of context: no compaction before turn 2.
		{Steps: []modeltest.Step{modeltest.Text("ONE " + answer)}, Usage: modeltest.Usage{InputTokens: 2000, CacheReadTokens: 8000, OutputTokens: 2000}},
		// Turn 2: a tool call and its result, then an answer at 16,000.
		{Steps: []modeltest.Step{modeltest.Tool("toolu_1", "read", `{"path":"a.txt"}`)}, Usage: modeltest.Usage{InputTokens: 13000, OutputTokens: 50}},
		{Steps: []modeltest.Step{modeltest.Text("TWO " + answer)}, Usage: modeltest.Usage{InputTokens: 16000, OutputTokens: 2000}},
		// Turn 3: 16,000 + the answer + the prompt > 17,000: the summary
		// request, then the turn's own request.
		{Steps: []modeltest.Step{modeltest.Text(summaryText)}, Usage: modeltest.Usage{InputTokens: 15000, OutputTokens: 100}},
		{Steps: []modeltest.Step{modeltest.Text("THREE done")}, Usage: modeltest.Usage{InputTokens: 4000, OutputTokens: 10}},
	})
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "a.txt"), []byte(strings.Repeat("file line\n", 900)), 0o600); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	s, err := env.NewSession(Options{Cwd: cwd, Model: m, OnEvent: rec.add})
	if err != nil {
		t.Fatal(err)
	}
	prompt(t, s, "first: write a story")
	prompt(t, s, "second: read a.txt")
	if n := len(srv.Requests()); n != 3 {
		t.Fatalf("%d requests before turn 3, want 3 (no compaction yet)", n)
	}
	for _, r := range srv.Requests() {
		if _, raw := decodeBody(t, r); strings.Contains(raw, "## User's goals") {
			t.Fatal("compacted before the threshold")
		}
	}
	prompt(t, s, "third: count the words")
	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5 (turn 3: summary, then the turn)", len(reqs))
	}

	// The summary request: the older conversation, tools forbidden, the
	// structured instruction last; not the recent turn.
	sum, sumRaw := decodeBody(t, reqs[3])
	if sum.ToolChoice == nil || sum.ToolChoice.Type != "none" {
		t.Errorf("summary request tool_choice %+v, want none", sum.ToolChoice)
	}
	last := sum.Messages[len(sum.Messages)-1]
	lastText := last.Content[len(last.Content)-1].Text
	for _, want := range []string{"## User's goals", "## Decisions", "## Files", "## Errors", "## Remaining work"} {
		if !strings.Contains(lastText, want) {
			t.Errorf("the summary instruction lacks %q", want)
		}
	}
	if !strings.Contains(sumRaw, "first: write a story") || !strings.Contains(sumRaw, "ONE All work") {
		t.Errorf("the summary request lacks the older turns")
	}

	// The next request: shorter than the full history, with the summary
	// and the recent turns verbatim, every tool result after its call.
	next, nextRaw := decodeBody(t, reqs[4])
	if len(reqs[4].Body) >= len(reqs[2].Body) {
		t.Errorf("the request after compaction has %d bytes, the last one before it %d", len(reqs[4].Body), len(reqs[2].Body))
	}
	if !strings.Contains(nextRaw, "<summary>") || !strings.Contains(nextRaw, "Count the words.") {
		t.Errorf("the next request lacks the summary: %.300s", nextRaw)
	}
	if !strings.Contains(nextRaw, "third: count the words") {
		t.Error("the latest prompt is not kept verbatim")
	}
	if strings.Contains(nextRaw, "ONE All work") {
		t.Error("the oldest answer is still there verbatim")
	}
	if next.Messages[0].Role != "user" {
		t.Errorf("the compacted conversation starts with %s", next.Messages[0].Role)
	}
	checkPairs(t, next)

	// The client saw the compaction.
	var marker []string
	for _, ev := range rec.events {
		if c, ok := ev.(*Compaction); ok {
			marker = append(marker, c.Status+"/"+c.Trigger)
		}
	}
	if strings.Join(marker, ",") != "in_progress/auto,completed/auto" {
		t.Errorf("compaction events %q", marker)
	}
	compacted := s.History()
	s.Close()

	// Load: the replay is what the user saw, with the marker; the context
	// is the compacted one, and a resumed prompt continues from it.
	env2 := &Env{DataDir: data, Getenv: func(string) string { return "" }}
	s2, updates, err := env2.OpenSession(s.ID(), Options{Cwd: cwd, Model: m})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	raw, _ := json.Marshal(updates)
	for _, want := range []string{"first: write a story", "ONE All work", "Compacting the conversation", "third: count the words"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("the replay lacks %q", want)
		}
	}
	h2 := s2.History()
	if len(h2) != len(compacted) || h2[0].Parts[0].Text != compacted[0].Parts[0].Text {
		t.Errorf("loaded history: %d messages, want the %d of the compacted one", len(h2), len(compacted))
	}
	b, _ := os.ReadFile(filepath.Join(data, "sessions", s.ID()+".jsonl"))
	if !strings.Contains(string(b), `"type":"compaction"`) || !strings.Contains(string(b), "ONE All work") {
		t.Error("the journal lacks the compaction record or the full history")
	}
}

// checkPairs fails when a tool result is not answered in the message right
// after its call (the modeltest server would also refuse it).
func checkPairs(t *testing.T, b antBody) {
	t.Helper()
	var calls []string
	for i, m := range b.Messages {
		var results []string
		for _, c := range m.Content {
			if c.Type == "tool_result" {
				results = append(results, c.ToolUseID)
			}
		}
		if strings.Join(results, ",") != strings.Join(calls, ",") && m.Role == "user" {
			t.Errorf("message %d answers %v, the calls before were %v", i, results, calls)
		}
		calls = nil
		for _, c := range m.Content {
			if c.Type == "tool_use" {
				calls = append(calls, c.ID)
			}
		}
	}
}

// TestCompactionKeepsCallsWithResults: a long turn of tool calls (no user
// prompt to start again from) is cut before an assistant message, never
// between a call and its result, and the user's request survives.
func TestCompactionKeepsCallsWithResults(t *testing.T) {
	big := strings.Repeat("x", 12000)
	var script modeltest.Script
	for i := range 4 {
		id := "toolu_" + string(rune('a'+i))
		script = append(script, modeltest.Response{Steps: []modeltest.Step{modeltest.Text("step"), modeltest.Tool(id, "read", `{"path":"big.txt"}`)}, Usage: modeltest.Usage{InputTokens: int64(4000 + 4000*i), OutputTokens: 20}})
	}
	script = append(script,
		modeltest.Response{Steps: []modeltest.Step{modeltest.Text(summaryText)}},
		modeltest.Response{Steps: []modeltest.Step{modeltest.Text("finished")}})
	env, srv, m, _ := compactEnv(t, script)
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "big.txt"), []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := env.NewSession(Options{Cwd: cwd, Model: m, OnEvent: func(Event) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	prompt(t, s, "read big.txt four times")
	reqs := srv.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d requests, want 6", len(reqs))
	}
	next, raw := decodeBody(t, reqs[5])
	checkPairs(t, next)
	if !strings.Contains(raw, "read big.txt four times") {
		t.Error("the user's request was lost in the compaction of its own turn")
	}
	if next.Messages[1].Role != "assistant" {
		t.Errorf("the kept part starts with %s, want an assistant message", next.Messages[1].Role)
	}
}

// TestOverflowCompactsAndRetriesOnce: a "prompt is too long" refusal
// compacts and retries; a second refusal is the user's error.
func TestOverflowCompactsAndRetriesOnce(t *testing.T) {
	tooLong := modeltest.Response{Status: 400, ErrorType: "invalid_request_error", ErrorMessage: "prompt is too long: 250000 tokens > 200000 maximum"}
	t.Run("retry succeeds", func(t *testing.T) {
		env, srv, m, _ := compactEnv(t, modeltest.Script{
			{Steps: []modeltest.Step{modeltest.Text("hello")}, Usage: modeltest.Usage{InputTokens: 100, OutputTokens: 5}},
			tooLong,
			{Steps: []modeltest.Step{modeltest.Text(summaryText)}},
			{Steps: []modeltest.Step{modeltest.Text("fits now")}},
		})
		rec := &recorder{}
		s, err := env.NewSession(Options{Cwd: t.TempDir(), Model: m, OnEvent: rec.add})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		prompt(t, s, "hi")
		if stop := prompt(t, s, "again"); stop != StopEndTurn {
			t.Errorf("stop %q", stop)
		}
		reqs := srv.Requests()
		if len(reqs) != 4 {
			t.Fatalf("%d requests, want 4", len(reqs))
		}
		if _, raw := decodeBody(t, reqs[3]); !strings.Contains(raw, "<summary>") || !strings.Contains(raw, "again") {
			t.Errorf("the retry lacks the summary or the prompt: %.300s", raw)
		}
		found := false
		for _, ev := range rec.events {
			if c, ok := ev.(*Compaction); ok && c.Trigger == compactOverflow && c.Status == CompactionCompleted {
				found = true
			}
		}
		if !found {
			t.Error("no overflow compaction event")
		}
	})
	t.Run("second failure is an error", func(t *testing.T) {
		env, _, m, _ := compactEnv(t, modeltest.Script{
			{Steps: []modeltest.Step{modeltest.Text("hello")}},
			tooLong,
			{Steps: []modeltest.Step{modeltest.Text(summaryText)}},
			tooLong,
		})
		s, err := env.NewSession(Options{Cwd: t.TempDir(), Model: m, OnEvent: func(Event) {}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		prompt(t, s, "hi")
		if _, err := s.Prompt(context.Background(), []Content{Text("again")}); err == nil || !strings.Contains(err.Error(), "prompt is too long") {
			t.Errorf("second overflow: %v", err)
		}
	})
}

func TestCompactCommand(t *testing.T) {
	env, srv, m, _ := compactEnv(t, modeltest.Script{
		{Steps: []modeltest.Step{modeltest.Text("hello")}},
		{Steps: []modeltest.Step{modeltest.Text(summaryText)}},
	})
	s, err := env.NewSession(Options{Cwd: t.TempDir(), Model: m, OnEvent: func(Event) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	prompt(t, s, "hi")
	if stop := prompt(t, s, "/compact the greeting"); stop != StopEndTurn {
		t.Errorf("stop %q", stop)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if _, raw := decodeBody(t, reqs[1]); !strings.Contains(raw, "focus on: the greeting") {
		t.Error("the focus did not reach the summary request")
	}
	h := s.History()
	if len(h) != 1 || !strings.Contains(h[0].Parts[0].Text, "Count the words.") {
		t.Errorf("history after /compact: %+v", h)
	}
	for _, p := range []string{"/compact", "/compact focus on tests", " /compact\n"} {
		if _, ok := compactCommand([]Content{Text(p)}); !ok {
			t.Errorf("%q not recognized", p)
		}
	}
	for _, p := range []string{"/compacting", "please /compact", "/compactx y"} {
		if _, ok := compactCommand([]Content{Text(p)}); ok {
			t.Errorf("%q recognized", p)
		}
	}
}

func TestIsContextOverflow(t *testing.T) {
	for _, tc := range []struct {
		err  *models.APIError
		want bool
	}{
		{&models.APIError{Provider: "anthropic", Status: 400, Type: "invalid_request_error", Message: "prompt is too long: 210000 tokens > 200000 maximum"}, true},
		{&models.APIError{Provider: "anthropic", Status: 400, Type: "invalid_request_error", Message: "input length and `max_tokens` exceed context limit: 190000 + 32000 > 200000, decrease input length or `max_tokens` and try again"}, true},
		{&models.APIError{Provider: "openai", Status: 400, Type: "context_length_exceeded", Message: "whatever"}, true},
		{&models.APIError{Provider: "openai", Status: 400, Type: "invalid_request_error", Message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens."}, true},
		{&models.APIError{Provider: "openai", Status: 400, Type: "exceed_context_size_error", Message: "the request exceeds the available context size, try increasing it"}, true},
		{&models.APIError{Provider: "openai", Status: 400, Message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion)."}, true},
		{&models.APIError{Provider: "openai", Status: 500, Message: "input exceeds maximum context length"}, true},
		{&models.APIError{Provider: "anthropic", Status: 400, Type: "invalid_request_error", Message: "messages.1: tool_use ids were found without tool_result blocks"}, false},
		{&models.APIError{Provider: "anthropic", Status: 429, Type: "rate_limit_error", Message: "prompt is too long"}, false},
		{&models.APIError{Provider: "anthropic", Status: 413, Type: "request_too_large", Message: "Request exceeds the maximum size"}, false},
	} {
		if got := models.IsContextOverflow(tc.err); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestCompactionNotRepeatedWhenKeptPartIsTooLarge: when what stays
// verbatim is over the threshold by itself, the turn does not summarize
// again before each of its requests.
func TestCompactionNotRepeatedWhenKeptPartIsTooLarge(t *testing.T) {
	env, srv, m, _ := compactEnv(t, modeltest.Script{
		{Steps: []modeltest.Step{modeltest.Tool("toolu_1", "read", `{"path":"a.txt"}`), modeltest.Tool("toolu_2", "read", `{"path":"b.txt"}`)}, Usage: modeltest.Usage{InputTokens: 1000}},
		{Steps: []modeltest.Step{modeltest.Text(summaryText)}},
		{Steps: []modeltest.Step{modeltest.Tool("toolu_3", "read", `{"path":"a.txt"}`)}},
		{Steps: []modeltest.Step{modeltest.Text("done")}},
	})
	cwd := t.TempDir()
	for _, f := range []string{"a.txt", "b.txt"} {
		if err := os.WriteFile(filepath.Join(cwd, f), []byte(strings.Repeat("0123456789 abcdef\n", 2800)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, err := env.NewSession(Options{Cwd: cwd, Model: m, OnEvent: func(Event) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	prompt(t, s, "read both")
	if n := len(srv.Requests()); n != 4 {
		t.Errorf("%d requests, want 4 (one summary only)", n)
	}
}

// TestCompactionOnTheWire: a client that advertises
// session.compaction gets compaction_update; another gets a text marker.
func TestCompactionOnTheWire(t *testing.T) {
	for _, native := range []bool{true, false} {
		t.Run(map[bool]string{true: "compaction_update", false: "text"}[native], func(t *testing.T) {
			srv := modeltest.NewAnthropicServer(t, modeltest.Script{
				{Steps: []modeltest.Step{modeltest.Text("hello")}},
				{Steps: []modeltest.Step{modeltest.Text(summaryText)}},
			})
			getenv := func(k string) string {
				return map[string]string{"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": srv.BaseURL}[k]
			}
			c := startAgent(t, &Env{DataDir: t.TempDir(), Getenv: getenv})
			caps := map[string]any{}
			if native {
				caps["session"] = map[string]any{"compaction": map[string]any{}}
			}
			if err := c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": caps}, nil); err != nil {
				t.Fatal(err)
			}
			var res struct{ SessionID string }
			if err := c.call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}}, &res); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{"hi", "/compact"} {
				if err := c.call("session/prompt", map[string]any{"sessionId": res.SessionID, "prompt": []any{map[string]any{"type": "text", "text": p}}}, nil); err != nil {
					t.Fatal(err)
				}
			}
			raw, _ := marshalNoEscape(c.drain())
			got := string(raw)
			if native {
				if !strings.Contains(got, `"sessionUpdate":"compaction_update"`) || !strings.Contains(got, `"status":"in_progress"`) ||
					!strings.Contains(got, `"status":"completed","summary":[{"type":"text","text":"## User's goals`) {
					t.Errorf("no compaction_update pair: %s", got)
				}
				if strings.Contains(got, "Compacting the conversation") {
					t.Error("the text marker went to a client that takes compaction_update")
				}
			} else {
				if strings.Contains(got, "compaction_update") || !strings.Contains(got, "Compacting the conversation") {
					t.Errorf("text marker expected: %s", got)
				}
			}
		})
	}
}
