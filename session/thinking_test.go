package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coding-agent/coding-agent/session/models"
	"github.com/coding-agent/coding-agent/session/models/modeltest"
)

// TestThoughtLevelReachesTheRequest: the thought_level setting becomes
// Anthropic's thinking budget and OpenAI's reasoning_effort, and the
// thinking blocks (signed and redacted) go back in the history.
func TestThoughtLevelReachesTheRequest(t *testing.T) {
	t.Run("anthropic", func(t *testing.T) {
		redacted := `event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":2,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix"}}` + "\n\n" +
			`event: content_block_stop` + "\n" + `data: {"type":"content_block_stop","index":2}` + "\n\n"
		srv := modeltest.NewAnthropicServer(t, modeltest.Script{
			{Steps: []modeltest.Step{modeltest.Thinking("Read it first."), {Signature: "sig-1"}, modeltest.Tool("toolu_1", "read", `{"path":"a.txt"}`), {Raw: redacted}}},
			{Steps: []modeltest.Step{modeltest.Text("It says hi.")}},
			{Steps: []modeltest.Step{modeltest.Text("ok")}},
		})
		m, err := models.NewAnthropic("claude-sonnet-4-5", "sk-test", srv.BaseURL, models.Options{MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		s, _ := newTestSession(t, m, Options{})
		if err := os.WriteFile(filepath.Join(s.Cwd(), "a.txt"), []byte("hi\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetThinking("high"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Prompt(context.Background(), []Content{Text("read a.txt")}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetThinking(ThinkingDefault); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Prompt(context.Background(), []Content{Text("thanks")}); err != nil {
			t.Fatal(err)
		}
		reqs := srv.Requests()
		var body struct {
			MaxTokens int `json:"max_tokens"`
			Thinking  *struct {
				Type         string `json:"type"`
				BudgetTokens int    `json:"budget_tokens"`
			} `json:"thinking"`
		}
		if err := reqs[0].Decode(&body); err != nil {
			t.Fatal(err)
		}
		if body.Thinking == nil || body.Thinking.Type != "enabled" || body.Thinking.BudgetTokens != 32000 || body.MaxTokens <= body.Thinking.BudgetTokens {
			t.Errorf("high: thinking %+v max_tokens %d", body.Thinking, body.MaxTokens)
		}
		second := string(reqs[1].Body)
		if !strings.Contains(second, `{"type":"thinking","thinking":"Read it first.","signature":"sig-1"}`) || !strings.Contains(second, `{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix"}`) {
			t.Errorf("the thinking blocks are not replayed as they came:\n%s", second)
		}
		body.Thinking = nil
		if err := reqs[2].Decode(&body); err != nil {
			t.Fatal(err)
		}
		if body.Thinking != nil {
			t.Errorf("default: thinking %+v sent", body.Thinking)
		}
	})
	t.Run("openai", func(t *testing.T) {
		srv := modeltest.NewOpenAIServer(t, modeltest.Script{
			{Steps: []modeltest.Step{modeltest.Text("a")}},
			{Steps: []modeltest.Step{modeltest.Text("b")}},
		})
		m, err := models.NewOpenAI("gpt-5", "sk-test", srv.BaseURL, models.Options{MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		s, _ := newTestSession(t, m, Options{Tools: []string{}})
		if _, err := s.SetThinking("low"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Prompt(context.Background(), []Content{Text("hi")}); err != nil {
			t.Fatal(err)
		}
		s.SetThinking("")
		if _, err := s.Prompt(context.Background(), []Content{Text("hi")}); err != nil {
			t.Fatal(err)
		}
		reqs := srv.Requests()
		if !strings.Contains(string(reqs[0].Body), `"reasoning_effort":"low"`) {
			t.Errorf("low: %s", reqs[0].Body)
		}
		if strings.Contains(string(reqs[1].Body), "reasoning_effort") {
			t.Errorf("default sends reasoning_effort: %s", reqs[1].Body)
		}
	})
	t.Run("persisted and validated", func(t *testing.T) {
		data := t.TempDir()
		env := &Env{DataDir: data, Getenv: func(string) string { return "" }}
		s, err := env.NewSession(Options{Cwd: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetThinking("extreme"); err == nil {
			t.Error("an unknown level was accepted")
		}
		if _, err := s.SetThinking("medium"); err != nil {
			t.Fatal(err)
		}
		s.Close()
		s2, _, err := env.OpenSession(s.ID(), Options{Cwd: s.Cwd()})
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		if s2.Thinking() != "medium" {
			t.Errorf("reloaded thought level %q", s2.Thinking())
		}
	})
}
