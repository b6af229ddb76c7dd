package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coding-agent/coding-agent/session/models/modeltest"
)

// acpFactoryTurns runs test/acpfactory/turn.mjs: acp-factory (npm,
// unmodified) spawns our binary as its agent, against a scripted model,
// and prompts once per entry of prompts. It returns what the script saw.
func acpFactoryTurns(t *testing.T, ws, permissionMode, answer string, script modeltest.Script, prompts ...string) acpFactoryResult {
	t.Helper()
	dir, err := filepath.Abs("../../test/acpfactory")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "acp-factory")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("acp-factory is missing: .ci/run must run npm ci in test/acpfactory: %v", err)
		}
		t.Skip("acp-factory is not installed: run `npm ci` in test/acpfactory")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is required for the acp-factory tests")
	}
	srv := modeltest.NewAnthropicServer(t, script)
	cfg, err := json.Marshal(map[string]any{
		"command": os.Args[0],
		"args":    []string{"serve", "--data-dir", t.TempDir(), "--log-level", "error"},
		"env": map[string]string{asMainEnv: "1", "HOME": t.TempDir(), "CODING_AGENT_MODEL": "anthropic/claude-sonnet-4-5",
			"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": srv.BaseURL, "OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""},
		"cwd":            ws,
		"permissionMode": permissionMode,
		"answer":         answer,
		"prompts":        prompts,
	})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join(dir, "turn.mjs"), string(cfg))
	cmd.Dir = dir
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node turn.mjs: %v\nstdout %s\nstderr %s", err, stdout.String(), stderr.String())
	}
	var res acpFactoryResult
	if err := json.Unmarshal([]byte(stdout.String()), &res); err != nil {
		t.Fatalf("turn.mjs output: %v\n%s", err, stdout.String())
	}
	res.stderr = stderr.String()
	return res
}

type acpFactoryResult struct {
	SessionID string `json:"sessionId"`
	Updates   [][]struct {
		SessionUpdate string          `json:"sessionUpdate"`
		ToolCallID    string          `json:"toolCallId"`
		Status        string          `json:"status"`
		Content       json.RawMessage `json:"content"` // a block, or tool call content
		ToolCall      struct {
			ToolCallID string `json:"toolCallId"`
		} `json:"toolCall"` // permission_request (acp-factory's interactive mode)
	} `json:"updates"`
	FSWrites []string `json:"fsWrites"`
	stderr   string
}

// TestAcpFactoryTurns: two turns through acp-factory, with its
// "auto-approve" (both files written) and "auto-deny" (neither) modes, and
// its "interactive" mode, where the permission request is in the update
// stream: it comes after the tool_call and before in_progress.
// The provider reuses its tool id; the agent's ids stay unique.
func TestAcpFactoryTurns(t *testing.T) {
	turn := func(path, content string) modeltest.Response {
		return modeltest.Response{Steps: []modeltest.Step{modeltest.Text("Writing it."),
			modeltest.Tool("toolu_1", "write", `{"path":"`+path+`",`, `"content":"`+content+`\n"}`)}}
	}
	for _, test := range []struct {
		mode, answer string
		written      bool
		final        string
	}{
		{"auto-approve", "", true, "completed"},
		{"auto-deny", "", false, "failed"},
		{"interactive", "allow_once", true, "completed"},
		{"interactive", "reject_once", false, "failed"},
	} {
		t.Run(test.mode+test.answer, func(t *testing.T) {
			ws := t.TempDir()
			script := modeltest.Script{
				turn("a.txt", "first"), {Steps: []modeltest.Step{modeltest.Text("Done one.")}},
				turn("b.txt", "second"), {Steps: []modeltest.Step{modeltest.Text("Done two.")}},
			}
			res := acpFactoryTurns(t, ws, test.mode, test.answer, script, "write a.txt", "write b.txt")
			if len(res.Updates) != 2 {
				t.Fatalf("%d turns seen, want 2: %+v", len(res.Updates), res)
			}
			ids := map[string]int{}
			for i, updates := range res.Updates {
				var calls, perms int
				var last, text, callID string
				for _, u := range updates {
					switch u.SessionUpdate {
					case "permission_request":
						perms++
						if u.ToolCall.ToolCallID != callID {
							t.Errorf("turn %d: permission for %q, the tool call is %q", i+1, u.ToolCall.ToolCallID, callID)
						}
						if last != "" {
							t.Errorf("turn %d: permission asked after the tool call went %q", i+1, last)
						}
					case "tool_call":
						calls++
						callID = u.ToolCallID
						ids[u.ToolCallID]++
						if u.Status != "pending" {
							t.Errorf("turn %d: tool_call status %q, want pending", i+1, u.Status)
						}
					case "tool_call_update":
						if u.Status != "" {
							last = u.Status
						}
					case "agent_message_chunk":
						var block struct {
							Text string `json:"text"`
						}
						if err := json.Unmarshal(u.Content, &block); err != nil {
							t.Errorf("turn %d: agent_message_chunk content %s: %v", i+1, u.Content, err)
						}
						text += block.Text
					case "user_message_chunk":
						t.Errorf("turn %d: the prompt came back as user_message_chunk", i+1)
					}
				}
				if test.mode == "interactive" && perms != 1 {
					t.Errorf("turn %d: %d permission requests, want 1: %+v", i+1, perms, updates)
				}
				if calls != 1 || last != test.final {
					t.Errorf("turn %d: %d tool_call updates, final status %q; want 1, %q: %+v", i+1, calls, last, test.final, updates)
				}
				if want := []string{"Done one.", "Done two."}[i]; !strings.Contains(text, want) {
					t.Errorf("turn %d: agent text %q, want it to hold %q", i+1, text, want)
				}
			}
			if len(ids) != 2 {
				t.Errorf("tool call ids %v: want two distinct ids across the turns", ids)
			}
			for file, want := range map[string]string{"a.txt": "first\n", "b.txt": "second\n"} {
				b, err := os.ReadFile(filepath.Join(ws, file))
				if written := err == nil; written != test.written || (written && string(b) != want) {
					t.Errorf("%s written %v (%q), want %v", file, written, b, test.written)
				}
			}
			if !test.written && len(res.FSWrites) != 0 {
				t.Errorf("a denied write reached the client's fs/write_text_file: %q", res.FSWrites)
			}
		})
	}
}
