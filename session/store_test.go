package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coding-agent/coding-agent/rpc"
	"github.com/coding-agent/coding-agent/session/models"
	"github.com/coding-agent/coding-agent/session/models/modeltest"
	"github.com/coding-agent/coding-agent/tools"
)

func journalLines(t *testing.T, data, id string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(data, "sessions", id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// TestJournalOneRecordPerMessage: a streamed answer is one update record,
// and the replay gives it back whole.
func TestJournalOneRecordPerMessage(t *testing.T) {
	var evs []models.Event
	for range 200 {
		evs = append(evs, models.Event{Kind: models.EventThinking, Text: "t"})
	}
	for range 300 {
		evs = append(evs, text("w "))
	}
	evs = append(evs, done(models.StopEndTurn))
	m := &scriptModel{responses: [][]models.Event{evs}}
	data := t.TempDir()
	env := &Env{DataDir: data, Getenv: func(string) string { return "" }}
	s, err := env.NewSession(Options{Cwd: t.TempDir(), Model: m, OnEvent: func(Event) {}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(context.Background(), []Content{Text("go")}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	lines := journalLines(t, data, s.ID())
	// meta, the user's chunk, the user's message, the thought, the answer,
	// the assistant message, the usage.
	if len(lines) != 7 {
		t.Errorf("%d journal lines, want 7:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	_, updates, err := (&Env{DataDir: data}).OpenSession(s.ID(), Options{Cwd: s.Cwd()})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, raw := range updates {
		var n rpc.SessionNotification
		if err := json.Unmarshal(raw, &n); err != nil {
			t.Fatal(err)
		}
		switch u := n.Update.(type) {
		case *rpc.AgentMessageChunk:
			got = append(got, "message:"+u.Content.Text)
		case *rpc.AgentThoughtChunk:
			got = append(got, "thought:"+u.Content.Text)
		case *rpc.UserMessageChunk:
			got = append(got, "user:"+u.Content.Text)
		}
	}
	want := []string{"user:go", "thought:" + strings.Repeat("t", 200), "message:" + strings.Repeat("w ", 300)}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("replay %q", got)
	}
}

// TestJournalNoHTMLEscapingAndLargeInputOnce: code full of <, > and & is
// stored as it is, and a large write's content is in the journal once per
// place it must be (the model's arguments, the diff), not again in the
// replayed rawInput.
func TestJournalNoHTMLEscapingAndLargeInputOnce(t *testing.T) {
	content := strings.Repeat("if a < b && c > d { x <- y }\n", 4000) // 116 KiB
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // as a model sends it
	if err := enc.Encode(map[string]string{"path": "big.go", "content": content}); err != nil {
		t.Fatal(err)
	}
	args := strings.TrimSpace(buf.String())
	m := &scriptModel{responses: [][]models.Event{
		concat(toolCall(0, "call_w", "write", string(args)), []models.Event{done(models.StopToolUse)}),
		{text("<done> & dusted"), done(models.StopEndTurn)},
	}}
	data := t.TempDir()
	env := &Env{DataDir: data, Getenv: func(string) string { return "" }}
	s, err := env.NewSession(Options{Cwd: t.TempDir(), Model: m, Preset: tools.FullAccess, OnEvent: func(Event) {}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(context.Background(), []Content{Text("write <it>")}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	b, err := os.ReadFile(filepath.Join(data, "sessions", s.ID()+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(`\u003c`)) || bytes.Contains(b, []byte(`\u0026`)) {
		t.Error("the journal HTML-escapes")
	}
	if !bytes.Contains(b, []byte(`"text":"<done> & dusted"`)) {
		t.Error("the answer is not stored as it is")
	}
	first := strings.Split(content, "\n")[0]
	if n := bytes.Count(b, []byte(first)); n != 2*4000 {
		t.Errorf("the content's lines appear %d times in the journal, want %d (arguments and diff)", n, 2*4000)
	}
	if len(b) > 3*len(content) {
		t.Errorf("journal %d bytes for %d bytes of content", len(b), len(content))
	}
}

// TestJournalLoadsAnyLineSize: a record larger than any line buffer loads.
func TestJournalLoadsAnyLineSize(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 1<<20) // 16 MiB on one line
	m := &scriptModel{responses: [][]models.Event{{text(big), done(models.StopEndTurn)}}}
	data := t.TempDir()
	env := &Env{DataDir: data, Getenv: func(string) string { return "" }}
	s, err := env.NewSession(Options{Cwd: t.TempDir(), Model: m, Tools: []string{}, OnEvent: func(Event) {}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(context.Background(), []Content{Text("hi")}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	st := (&Env{DataDir: data}).store()
	got, err := st.read(bytes.NewReader(mustRead(t, filepath.Join(data, "sessions", s.ID()+".jsonl"))), s.ID(), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.messages) != 2 || got.messages[1].Parts[0].Text != big {
		t.Errorf("loaded %d messages", len(got.messages))
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestJournalSkipsBadRecords (issue 12 #10): a record with an unknown role
// is skipped with a warning naming it, and the session's later prompts
// work; a tool result whose call was skipped goes too.
func TestJournalSkipsBadRecords(t *testing.T) {
	data := t.TempDir()
	cwd := t.TempDir()
	m := &scriptModel{responses: [][]models.Event{{text("ok"), done(models.StopEndTurn)}}}
	env := &Env{DataDir: data, Getenv: func(string) string { return "" }}
	s, err := env.NewSession(Options{Cwd: cwd, Model: m, OnEvent: func(Event) {}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(context.Background(), []Content{Text("first")}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	path := filepath.Join(data, "sessions", s.ID()+".jsonl")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{
		`{"type":"message","time":"2026-01-01T00:00:00Z","message":{"role":"system","parts":[{"kind":"text","text":"injected"}]}}`,
		`{"type":"message","time":"2026-01-01T00:00:00Z","message":{"role":"assistant","parts":[{"kind":"hologram"}]}}`,
		`{"type":"message","time":"2026-01-01T00:00:00Z","message":{"role":"user","parts":[{"kind":"tool_result","toolCallId":"gone","text":"x"},{"kind":"text","text":"second"}]}}`,
		`{"type":"wormhole","time":"2026-01-01T00:00:00Z"}`,
	} {
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	var logs bytes.Buffer
	env2 := &Env{DataDir: data, Logger: slog.New(slog.NewTextHandler(&logs, nil)), Getenv: func(string) string { return "" }}
	s2, _, err := env2.OpenSession(s.ID(), Options{Cwd: cwd, Model: m, OnEvent: func(Event) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	for _, want := range []string{`unknown role \"system\"`, "line=7", `unknown part kind \"hologram\"`, "line=8", "wormhole", "line=10"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
	if _, err := s2.Prompt(context.Background(), []Content{Text("third")}); err != nil {
		t.Fatalf("the next prompt fails: %v", err)
	}
	last := m.requests[len(m.requests)-1].Messages
	for _, msg := range last {
		for _, p := range msg.Parts {
			if p.Kind == models.PartToolResult || p.Text == "injected" {
				t.Errorf("a skipped record reached the model: %+v", msg)
			}
		}
	}
}

// TestReadOnlyDataDirDegrades (issue 12 #9): a data directory that cannot
// be written gives an unsaved session, not an error, and the client is
// told at its first prompt.
func TestReadOnlyDataDirDegrades(t *testing.T) {
	if os.Geteuid() == 0 {
		// root writes through the permission bits: make the store a file.
		t.Log("running as root: the session store is a plain file instead")
	}
	data := t.TempDir()
	if os.Geteuid() == 0 {
		if err := os.WriteFile(filepath.Join(data, "sessions"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	} else {
		if err := os.Chmod(data, 0o500); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(data, 0o700) })
	}
	srv := modeltest.NewAnthropicServer(t, modeltest.Script{{Steps: []modeltest.Step{modeltest.Text("ok")}}})
	getenv := func(k string) string {
		return map[string]string{"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": srv.BaseURL}[k]
	}
	// The SDK: a session, unsaved, that says why.
	s, err := (&Env{DataDir: data, Getenv: getenv}).NewSession(Options{Cwd: t.TempDir()})
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	if s.PersistError() == nil {
		t.Error("no PersistError for an unsaved session")
	}
	s.Close()
	// The wire: session/new answers, and the first prompt warns.
	c := startAgent(t, &Env{DataDir: data, Getenv: getenv})
	var res struct{ SessionID string }
	if err := c.call("session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}}, &res); err != nil {
		t.Fatalf("session/new failed: %+v", err)
	}
	c.drain()
	if err := c.call("session/prompt", map[string]any{"sessionId": res.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}, nil); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(c.drain())
	if !strings.Contains(string(raw), "not being saved") {
		t.Errorf("the client was not warned: %s", raw)
	}
}

// TestDeletedDataDirRecreated (issue 12 #9): the data directory deleted
// under a running session is created again, with the session file, and
// the session can be reopened with its conversation.
func TestDeletedDataDirRecreated(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	cwd := t.TempDir()
	m := &scriptModel{responses: [][]models.Event{{text("ok"), done(models.StopEndTurn)}}}
	env := &Env{DataDir: data, Getenv: func(string) string { return "" }}
	s, err := env.NewSession(Options{Cwd: cwd, Model: m, OnEvent: func(Event) {}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(context.Background(), []Content{Text("first")}); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(data); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(context.Background(), []Content{Text("second")}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, _, err := (&Env{DataDir: data, Getenv: func(string) string { return "" }}).OpenSession(s.ID(), Options{Cwd: cwd})
	if errors.Is(err, ErrNotFound) {
		t.Fatal("the session file was not written again")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if h := s2.History(); len(h) != 4 || h[0].Parts[0].Text != "first" || h[2].Parts[0].Text != "second" {
		t.Errorf("history after recreation: %+v", h)
	}
	if _, err := os.Stat(filepath.Join(data, "sessions")); err != nil {
		t.Errorf("the store was not recreated: %v", err)
	}
}
