package session

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coding-agent/coding-agent/rpc"
	"github.com/coding-agent/coding-agent/session/models"
	"github.com/coding-agent/coding-agent/session/models/modeltest"
	"github.com/coding-agent/coding-agent/tools"
)

func TestParseCommand(t *testing.T) {
	for _, test := range []struct {
		text, name, arg string
		ok              bool
	}{
		{"/preset full-access", "preset", "full-access", true},
		{"  /help  ", "help", "", true},
		{"/model\topenai/gpt-5", "model", "openai/gpt-5", true},
		{"/sessions", "sessions", "", true},
		{"/compact keep the API", "compact", "keep the API", true},
		{"/unknown x", "", "", false},
		{"/presets", "", "", false},
		{"please /help", "", "", false},
		{"/ help", "", "", false},
	} {
		name, arg, ok := parseCommand([]Content{Text(test.text)})
		if name != test.name || arg != test.arg || ok != test.ok {
			t.Errorf("parseCommand(%q) = %q, %q, %v; want %q, %q, %v", test.text, name, arg, ok, test.name, test.arg, test.ok)
		}
	}
	if _, _, ok := parseCommand([]Content{Text("/help"), Text("more")}); ok {
		t.Error("a prompt of two blocks is not a command")
	}
}

// TestSlashCommands: commands run without the model, even with none
// configured, and answer as an agent message; /preset changes the preset
// and says so to watchers; an unknown command goes to the model.
func TestSlashCommands(t *testing.T) {
	m := &scriptModel{responses: [][]models.Event{{text("model answer"), done(models.StopEndTurn)}}}
	s, rec := newTestSession(t, m, Options{})
	say := func(prompt string) string {
		t.Helper()
		before := len(rec.all())
		stop, err := s.Prompt(context.Background(), []Content{Text(prompt)})
		if err != nil || stop != StopEndTurn {
			t.Fatalf("%s: %q, %v", prompt, stop, err)
		}
		var b strings.Builder
		for _, u := range rec.all()[before:] {
			if c, ok := u.(*rpc.AgentMessageChunk); ok {
				b.WriteString(c.Content.Text)
			}
		}
		return b.String()
	}
	if got := say("/help"); !strings.Contains(got, "/preset") || !strings.Contains(got, "/compact") {
		t.Errorf("/help: %q", got)
	}
	if got := say("/preset workspace-write"); !strings.Contains(got, "workspace-write") || s.Preset() != tools.WorkspaceWrite {
		t.Errorf("/preset: %q, preset %s", got, s.Preset())
	}
	var sawMode bool
	for _, u := range rec.all() {
		if u, ok := u.(*rpc.CurrentModeUpdate); ok && u.CurrentModeID == "workspace-write" {
			sawMode = true
		}
	}
	if !sawMode {
		t.Error("/preset sent no current_mode_update")
	}
	if got := say("/preset yolo"); !strings.Contains(got, "Not changed") || s.Preset() != tools.WorkspaceWrite {
		t.Errorf("/preset yolo: %q, preset %s", got, s.Preset())
	}
	if got := say("/sessions"); !strings.Contains(got, s.ID()) {
		t.Errorf("/sessions does not list this session: %q", got)
	}
	if n := m.nrequests(); n != 0 {
		t.Errorf("commands made %d model requests", n)
	}
	if h := s.History(); len(h) != 0 {
		t.Errorf("commands went into the model's history: %+v", h)
	}
	if got := say("/unknown"); got != "model answer" {
		t.Errorf("an unknown command: %q, want it sent to the model", got)
	}
}

// TestAvailableCommandsAfterNewSession: the client hears of the commands
// after the answer that names the session.
func TestAvailableCommandsAfterNewSession(t *testing.T) {
	c := startAgent(t, &Env{DataDir: t.TempDir()})
	var res struct{ SessionID string }
	if err := c.call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}}, &res); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-c.commands:
		var n struct {
			SessionID string
			Update    struct {
				SessionUpdate     string
				AvailableCommands []struct{ Name string }
			}
		}
		json.Unmarshal(m.Params, &n)
		var names []string
		for _, c := range n.Update.AvailableCommands {
			names = append(names, c.Name)
		}
		if n.SessionID != res.SessionID || !strings.Contains(strings.Join(names, ","), "preset,model,sessions,compact,help") {
			t.Errorf("available_commands_update %+v", n)
		}
	case <-time.After(10 * time.Second):
		t.Error("no available_commands_update after session/new")
	}
}

// TestSessionInfoAndListPaging: the first prompt titles the session
// (session_info_update, no model call for it); session/list filters by cwd,
// is newest first and pages with an opaque cursor; a bad cursor names the
// field.
func TestSessionInfoAndListPaging(t *testing.T) {
	m := &scriptModel{responses: [][]models.Event{{text("ok"), done(models.StopEndTurn)}}}
	s, rec := newTestSession(t, m, Options{})
	if _, err := s.Prompt(context.Background(), []Content{Text("Fix the parser\nand more")}); err != nil {
		t.Fatal(err)
	}
	var info *rpc.SessionInfoUpdate
	for _, u := range rec.all() {
		if u, ok := u.(*rpc.SessionInfoUpdate); ok {
			info = u
		}
	}
	if info == nil || info.Title == nil || *info.Title != "Fix the parser" || info.UpdatedAt == nil {
		t.Fatalf("session_info_update %+v", info)
	}
	if n := m.nrequests(); n != 1 {
		t.Errorf("%d model requests, want 1 (no extra one for the title)", n)
	}

	data, cwd, other := t.TempDir(), t.TempDir(), t.TempDir()
	env := &Env{DataDir: data}
	var ids []string
	for i := range listPage + 10 {
		dir := cwd
		if i%10 == 9 {
			dir = other
		}
		s, err := env.NewSession(Options{Cwd: dir})
		if err != nil {
			t.Fatal(err)
		}
		if dir == cwd {
			ids = append(ids, s.ID())
		}
		s.Close()
	}
	c := startAgent(t, env)
	var got []string
	cursor := ""
	pages := 0
	for {
		var res struct {
			Sessions   []struct{ SessionID, Cwd string }
			NextCursor string
		}
		params := map[string]any{"cwd": cwd}
		if cursor != "" {
			params["cursor"] = cursor
		}
		if err := c.call("session/list", params, &res); err != nil {
			t.Fatal(err)
		}
		pages++
		for _, s := range res.Sessions {
			if s.Cwd != cwd {
				t.Errorf("session of %s listed for cwd %s", s.Cwd, cwd)
			}
			got = append(got, s.SessionID)
		}
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	if pages != 2 || len(got) != len(ids) {
		t.Errorf("%d pages, %d sessions; want 2 pages, %d sessions", pages, len(got), len(ids))
	}
	seen := map[string]bool{}
	for _, id := range got {
		if seen[id] {
			t.Errorf("%s listed twice", id)
		}
		seen[id] = true
	}
	if err := c.call("session/list", map[string]any{"cursor": "nope"}, nil); err == nil || err.Code != -32602 || !strings.Contains(err.Message, "cursor") {
		t.Errorf("bad cursor: %+v", err)
	}
}

// TestModelChoicesFromLocalServer: against an OpenAI-compatible server, the
// model choice lists what it serves (/v1/models) and what config.json
// names, never OpenAI's own models it does not have.
func TestModelChoicesFromLocalServer(t *testing.T) {
	srv := modeltest.NewOpenAIServer(t, modeltest.Script{})
	srv.ServeModels(map[string]map[string]any{"qwen3-coder": nil, "llama-3.3-70b": nil})
	data := t.TempDir()
	os.WriteFile(filepath.Join(data, "config.json"), []byte(`{"models":{"openai/my-finetune":{"contextWindow":32768}}}`), 0o600)
	env := &Env{DataDir: data, Getenv: func(k string) string {
		return map[string]string{"OPENAI_BASE_URL": srv.BaseURL, "CODING_AGENT_MODEL": "openai/qwen3-coder"}[k]
	}}
	s, err := env.NewSession(Options{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var values []string
	for _, o := range s.ConfigOptions() {
		if o.ID == "model" {
			for _, v := range o.Values {
				values = append(values, v.Value)
			}
		}
	}
	got := strings.Join(values, ",")
	for _, want := range []string{"openai/qwen3-coder", "openai/llama-3.3-70b", "openai/my-finetune"} {
		if !strings.Contains(got, want) {
			t.Errorf("model choices %q lack %s", got, want)
		}
	}
	if strings.Contains(got, "gpt-5") {
		t.Errorf("model choices %q offer OpenAI's models to a local server", got)
	}
}
