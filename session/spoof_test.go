package session

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/coding-agent/coding-agent/session/display"
)

// TestAgentApprovalCannotBeSpoofed (issue 12 #5, over ACP): a command whose
// first line is "ls -la" followed by a carriage return and "touch PWNED",
// with a justification full of escape sequences. The permission request's
// title is one line with no control characters, its content shows the
// policy's reason beside the model's justification, every visible text is
// neutralized, and, rejected, nothing ran.
func TestAgentApprovalCannotBeSpoofed(t *testing.T) {
	dir := t.TempDir()
	c := startAgent(t, &Env{DataDir: t.TempDir()})
	var mu sync.Mutex
	var asked []json.RawMessage
	c.onRequest = func(method string, params json.RawMessage) (any, *wireError) {
		mu.Lock()
		asked = append(asked, params)
		mu.Unlock()
		return selected("reject_once")(params)
	}
	sid := newSession(t, c, dir, nil)
	command := "ls -la\rtouch PWNED\x1b[2K\x1b[1G$ ls -la\u2028echo"
	var res struct{ IsError bool }
	if err := c.call("_coding-agent/tools/call", map[string]any{"sessionId": sid, "name": "bash",
		"arguments": map[string]any{"command": command, "sandbox_permissions": "require_escalated",
			"justification": "\x1b[2K\rJust listing\u202etxt.exe"}}, &res); err != nil {
		t.Fatal(err)
	}
	if !res.IsError {
		t.Error("a rejected escalation did not fail")
	}
	if _, err := os.Stat(filepath.Join(dir, "PWNED")); err == nil {
		t.Fatal("the rejected command ran")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 {
		t.Fatalf("%d permission requests, want 1", len(asked))
	}
	var p struct {
		ToolCall struct {
			Title   string
			Content []struct {
				Type    string
				Content struct{ Text string }
			}
		}
	}
	if err := json.Unmarshal(asked[0], &p); err != nil {
		t.Fatal(err)
	}
	checkTitle(t, "permission request", p.ToolCall.Title)
	if p.ToolCall.Title != "Bash · ls -la …" {
		t.Errorf("title %q, want the first line cut at the carriage return", p.ToolCall.Title)
	}
	var texts []string
	for _, c := range p.ToolCall.Content {
		if c.Type == "content" {
			texts = append(texts, c.Content.Text)
			if !display.Safe(c.Content.Text) {
				t.Errorf("content text %q keeps control characters", c.Content.Text)
			}
		}
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{`$ ls -la\rtouch PWNED\x1b[2K\x1b[1G$ ls -la\u2028echo`, "Policy: ", `The model's reason: \x1b[2K\rJust listing\u202etxt.exe`} {
		if !strings.Contains(all, want) {
			t.Errorf("permission content lacks %q:\n%s", want, all)
		}
	}
	for _, m := range c.drain() {
		var n struct {
			Update struct{ Title *string } `json:"update"`
		}
		_ = json.Unmarshal(m.Params, &n)
		if n.Update.Title != nil {
			checkTitle(t, "update", *n.Update.Title)
		}
	}
}

func checkTitle(t *testing.T, what, title string) {
	t.Helper()
	if strings.ContainsAny(title, "\n\r\x1b\u2028\u2029\u202e") || !display.Safe(title) || strings.Contains(title, "PWNED") {
		t.Errorf("%s title %q is not one clean line", what, title)
	}
}
