package session

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coding-agent/coding-agent/rpc"
	"github.com/coding-agent/coding-agent/session/models"
	"github.com/coding-agent/coding-agent/tools"
)

// TestWireUpdates pins the ACP form of every event: what clients saw
// before the SDK had events of its own.
func TestWireUpdates(t *testing.T) {
	old := "a\n"
	cost := 0.25
	size := int64(3)
	for _, test := range []struct {
		name string
		ev   Event
		want string
	}{
		{"user text", &UserMessage{MessageID: "m1", Content: Text("hi")},
			`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"hi"},"messageId":"m1"}`},
		{"user link", &UserMessage{Content: Content{Type: ContentResourceLink, URI: "file:///a", Name: "a", Size: &size, Annotations: json.RawMessage(`{"priority":1}`)}},
			`{"sessionUpdate":"user_message_chunk","content":{"type":"resource_link","uri":"file:///a","name":"a","size":3,"annotations":{"priority":1}}}`},
		{"message", &MessageChunk{MessageID: "m2", Text: ""},
			`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":""},"messageId":"m2"}`},
		{"thought", &ThoughtChunk{MessageID: "m3", Text: "hmm"},
			`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"},"messageId":"m3"}`},
		{"started streaming", &ToolCallStarted{CallID: "c", Tool: "bash", Title: "Bash", Kind: tools.KindExecute},
			`{"sessionUpdate":"tool_call","toolCallId":"c","title":"Bash","name":"bash","kind":"execute","status":"pending"}`},
		{"started direct", &ToolCallStarted{CallID: "c", Tool: "read", Title: "Read a", Kind: tools.KindRead, Input: json.RawMessage(`{"path":"a"}`)},
			`{"sessionUpdate":"tool_call","toolCallId":"c","title":"Read a","name":"read","kind":"read","status":"pending","rawInput":{"path":"a"}}`},
		{"title", &ToolCallUpdated{CallID: "c", Title: "Bash · ls"},
			`{"sessionUpdate":"tool_call_update","toolCallId":"c","title":"Bash · ls"}`},
		{"in progress", &ToolCallUpdated{CallID: "c", Status: StatusInProgress},
			`{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"in_progress"}`},
		{"progress", &ToolCallUpdated{CallID: "c", Progress: &tools.Progress{Tail: "out"}},
			`{"sessionUpdate":"tool_call_update","toolCallId":"c","content":[{"type":"content","content":{"type":"text","text":"out"}}]}`},
		{"finished", &ToolCallFinished{CallID: "c", Status: StatusCompleted, Text: []string{"Wrote a"}, Diffs: []Diff{{Path: "/p/a", OldText: &old, NewText: "b\n"}, {Path: "/p/n", NewText: "x"}},
			Locations: []Location{{Path: "/p/a", Line: 1}}, Input: json.RawMessage(`{}`), Details: json.RawMessage(`{"bytes":2}`)},
			`{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"completed","content":[{"type":"content","content":{"type":"text","text":"Wrote a"}},{"type":"diff","path":"/p/a","oldText":"a\n","newText":"b\n"},{"type":"diff","path":"/p/n","oldText":null,"newText":"x"}],"locations":[{"path":"/p/a","line":1}],"rawInput":{},"rawOutput":{"bytes":2}}`},
		{"finished empty", &ToolCallFinished{CallID: "c", Status: StatusFailed, Input: json.RawMessage(`{}`), Details: json.RawMessage(`{}`)},
			`{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"failed","content":[],"locations":[],"rawInput":{},"rawOutput":{}}`},
		{"never ran", failedUpdate("c", "cancelled"),
			`{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"failed","content":[{"type":"content","content":{"type":"text","text":"cancelled"}}]}`},
		{"usage", &Usage{Used: 10, Size: 100, CostUSD: &cost},
			`{"sessionUpdate":"usage_update","used":10,"size":100,"cost":{"amount":0.25,"currency":"USD"}}`},
		{"usage unpriced", &Usage{Used: 10, Size: 100},
			`{"sessionUpdate":"usage_update","used":10,"size":100}`},
		{"mode", &ModeChanged{Preset: tools.WorkspaceWrite},
			`{"sessionUpdate":"current_mode_update","currentModeId":"workspace-write"}`},
		{"config", &ConfigChanged{Options: []ConfigOption{{ID: "model", Name: "Model", Category: "model"}}},
			`{"sessionUpdate":"config_option_update","configOptions":[{"id":"model","name":"Model","category":"model","type":"select","currentValue":"","options":[]}]}`},
		{"info", &InfoChanged{Title: "Fix the build"},
			`{"sessionUpdate":"session_info_update","title":"Fix the build"}`},
	} {
		t.Run(test.name, func(t *testing.T) {
			raw, err := json.Marshal(rpc.SessionNotification{SessionID: "s", Update: wireUpdate(test.ev)})
			if err != nil {
				t.Fatal(err)
			}
			want := `{"sessionId":"s","update":` + test.want + `}`
			if string(raw) != want {
				t.Errorf("wire form\n got %s\nwant %s", raw, want)
			}
		})
	}
	if wireUpdate(&Lagged{Missed: 3}) != nil {
		t.Error("Lagged has a wire form; it is a subscriber's own notice")
	}
}

// TestApprovalDecisions checks the SDK's approval handler: the request
// names the tool, the real target and the reasons; allow once allows one
// change, allow always the same change again without asking, reject
// nothing.
func TestApprovalDecisions(t *testing.T) {
	write := func(i int, path string) []models.Event {
		args, _ := json.Marshal(map[string]string{"path": path, "content": "x", "justification": "asked for"})
		return toolCall(i, "", "write", string(args))
	}
	m := &scriptModel{responses: [][]models.Event{
		concat(write(0, "a.txt"), write(1, "a.txt"), write(2, "b.txt"), write(3, "c.txt"), []models.Event{done(models.StopToolUse)}),
		{text("done"), done(models.StopEndTurn)},
	}}
	var asked []*ApprovalRequest
	decisions := map[string]Decision{"a.txt": AllowAlways, "b.txt": AllowOnce, "c.txt": Reject}
	s, _ := newTestSession(t, m, Options{Approve: func(ctx context.Context, req *ApprovalRequest) (Decision, error) {
		asked = append(asked, req)
		return decisions[filepath.Base(req.Path)], nil
	}})
	if _, err := s.Prompt(context.Background(), []Content{Text("write")}); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 3 {
		t.Fatalf("asked %d times, want 3 (a.txt once, then allowed always)", len(asked))
	}
	r := asked[0]
	if r.Tool != "write" || r.Kind != tools.KindEdit || r.Title != "Write a.txt" || r.Request != tools.RequestFileChange ||
		r.Path != filepath.Join(s.Cwd(), "a.txt") || r.Change == nil || r.Change.NewText != "x" ||
		r.Justification != "asked for" || r.Reason == "" || r.SessionID != s.ID() || r.CallID == "" {
		t.Errorf("approval request %+v", r)
	}
	for name, want := range map[string]bool{"a.txt": true, "b.txt": true, "c.txt": false} {
		if _, err := os.Stat(filepath.Join(s.Cwd(), name)); (err == nil) != want {
			t.Errorf("%s written: %v, want %v", name, err == nil, want)
		}
	}
	last := m.requests[1].Messages
	res := last[len(last)-1].Parts[3]
	if !res.IsError || !strings.Contains(res.Text, "not allowed: the user rejected it") {
		t.Errorf("rejected call's result %+v", res)
	}
}
