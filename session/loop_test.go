package session

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/coding-agent/coding-agent/rpc"
	"github.com/coding-agent/coding-agent/session/models"
	"github.com/coding-agent/coding-agent/tools"
)

// scriptModel is a models.Model that plays canned responses in order and
// records the requests it got. It tests the agent loop, not a provider:
// the providers are tested against their real wire formats in package
// models.
type scriptModel struct {
	mu        sync.Mutex
	responses [][]models.Event
	requests  []models.Request
	// block, if set, makes the n-th (0-based) response wait for ctx.
	block map[int]bool
}

func (m *scriptModel) Name() string { return "test/script" }

func (m *scriptModel) Stream(ctx context.Context, req models.Request, on func(models.Event)) error {
	m.mu.Lock()
	n := len(m.requests)
	m.requests = append(m.requests, req)
	var evs []models.Event
	if n < len(m.responses) {
		evs = m.responses[n]
	} else if len(m.responses) > 0 {
		evs = m.responses[len(m.responses)-1]
	}
	block := m.block[n]
	m.mu.Unlock()
	for _, ev := range evs {
		if err := ctx.Err(); err != nil {
			return err
		}
		on(ev)
	}
	if block {
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

func (m *scriptModel) nrequests() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.requests)
}

// toolCall returns the events of one streamed tool call, its arguments
// split into the given pieces.
func toolCall(index int, id, name string, pieces ...string) []models.Event {
	evs := []models.Event{{Kind: models.EventToolStart, Index: index, ToolCallID: id, ToolName: name}}
	for _, p := range pieces {
		evs = append(evs, models.Event{Kind: models.EventToolDelta, Index: index, ArgsDelta: p})
	}
	return append(evs, models.Event{Kind: models.EventToolEnd, Index: index})
}

func text(s string) models.Event { return models.Event{Kind: models.EventText, Text: s} }

func done(reason string) models.Event {
	return models.Event{Kind: models.EventDone, StopReason: reason}
}

func concat(parts ...[]models.Event) []models.Event {
	var out []models.Event
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// recorder collects a session's updates.
type recorder struct {
	mu      sync.Mutex
	events  []Event
	updates []rpc.SessionUpdate // the events as ACP sends them
	// on, if set, sees every update as it arrives.
	on func(rpc.SessionUpdate)
}

func (r *recorder) add(ev Event) {
	u := wireUpdate(ev)
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.updates = append(r.updates, u)
	on := r.on
	r.mu.Unlock()
	if on != nil {
		on(u)
	}
}

func (r *recorder) all() []rpc.SessionUpdate {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]rpc.SessionUpdate(nil), r.updates...)
}

// trace renders updates compactly: "tool_call call_1 pending", ….
func trace(us []rpc.SessionUpdate) []string {
	var out []string
	for _, u := range us {
		switch u := u.(type) {
		case *rpc.ToolCall:
			out = append(out, "tool_call "+u.ToolCallID+" "+u.Status)
		case *rpc.ToolCallUpdate:
			if u.Status != "" {
				out = append(out, "update "+u.ToolCallID+" "+u.Status)
			}
		}
	}
	return out
}

func newTestSession(t *testing.T, model models.Model, opts Options) (*Session, *recorder) {
	t.Helper()
	env := &Env{DataDir: t.TempDir(), Getenv: func(string) string { return "" }}
	rec := &recorder{}
	if opts.Cwd == "" {
		opts.Cwd = t.TempDir()
	}
	opts.Model = model
	opts.OnEvent = rec.add
	s, err := env.NewSession(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, rec
}

func TestPromptRunsToolCallsInOrder(t *testing.T) {
	m := &scriptModel{responses: [][]models.Event{
		concat(
			[]models.Event{text("Let me write it.")},
			toolCall(0, "call_w", "write", `{"path":"a.txt",`, `"content":"one\n"}`),
			toolCall(1, "call_r", "read", `{"path":"a.txt"}`),
			[]models.Event{done(models.StopToolUse)},
		),
		{text("Done."), done(models.StopEndTurn)},
	}}
	s, rec := newTestSession(t, m, Options{Preset: tools.FullAccess})
	stop, err := s.Prompt(context.Background(), []Content{Text("write a.txt")})
	if err != nil || stop != StopEndTurn {
		t.Fatalf("Prompt = %q, %v", stop, err)
	}
	want := []string{
		"tool_call call_w pending", "tool_call call_r pending",
		"update call_w in_progress", "update call_w completed",
		"update call_r in_progress", "update call_r completed",
	}
	if got := trace(rec.all()); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("updates:\n got %q\nwant %q", got, want)
	}
	// The read ran after the write: it saw the file.
	if len(m.requests) != 2 {
		t.Fatalf("%d model requests, want 2", len(m.requests))
	}
	last := m.requests[1].Messages
	results := last[len(last)-1]
	if results.Role != models.RoleUser || len(results.Parts) != 2 {
		t.Fatalf("tool results message %+v", results)
	}
	if r := results.Parts[1]; r.ToolCallID != "call_r" || r.IsError || !strings.Contains(r.Text, "one") {
		t.Errorf("read result %+v", r)
	}
	if !strings.Contains(m.requests[0].System, "justification") || !strings.Contains(m.requests[0].System, s.Cwd()) {
		t.Errorf("system prompt lacks the approval rule or the cwd:\n%s", m.requests[0].System)
	}
	if len(m.requests[0].Tools) != 4 {
		t.Errorf("%d tool specs, want 4", len(m.requests[0].Tools))
	}
}

func TestPromptValidationFailureNotDispatched(t *testing.T) {
	m := &scriptModel{responses: [][]models.Event{
		concat(toolCall(0, "call_1", "write", `{"path":"x.txt"}`), []models.Event{done(models.StopToolUse)}),
		{text("Sorry."), done(models.StopEndTurn)},
	}}
	s, rec := newTestSession(t, m, Options{Preset: tools.FullAccess})
	if _, err := s.Prompt(context.Background(), []Content{Text("go")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.Cwd(), "x.txt")); err == nil {
		t.Error("the invalid call was dispatched: x.txt exists")
	}
	got := trace(rec.all())
	if got[len(got)-1] != "update call_1 failed" {
		t.Errorf("updates %q, want the call failed", got)
	}
	res := m.requests[1].Messages[2].Parts[0]
	if !res.IsError || !strings.Contains(res.Text, "content") {
		t.Errorf("the model got %+v, want a validation error naming content", res)
	}
}

// TestInvalidCallNeverInProgress checks issue 10 #2: a call the session
// refuses (unknown tool, cut or invalid arguments, a rule of the tool) goes
// pending → failed with the error returned to the model, and is never
// in_progress.
func TestInvalidCallNeverInProgress(t *testing.T) {
	for _, test := range []struct {
		name, tool, args, want string
	}{
		{"unknown tool", "rm", `{"path":"x"}`, "unknown tool"},
		{"cut arguments", "write", `{"path":"x.txt","content":"ab`, "not a complete JSON object"},
		{"schema", "write", `{"path":"x.txt"}`, "content"},
		{"wrong type", "read", `{"path":7}`, "/path"},
		{"unknown member", "edit", `{"path":"x.txt","edits":[{"oldText":"a","newText":"b"}],"force":true}`, "force"},
		{"blank command", "bash", `{"command":"   "}`, "must not be blank"},
		{"escalation without justification", "bash", `{"command":"touch x.txt","sandbox_permissions":"require_escalated"}`, "justification"},
	} {
		t.Run(test.name, func(t *testing.T) {
			m := &scriptModel{responses: [][]models.Event{
				concat(toolCall(0, "call_1", test.tool, test.args), []models.Event{done(models.StopToolUse)}),
				{text("Sorry."), done(models.StopEndTurn)},
			}}
			s, rec := newTestSession(t, m, Options{Preset: tools.FullAccess})
			if _, err := s.Prompt(context.Background(), []Content{Text("go")}); err != nil {
				t.Fatal(err)
			}
			want := []string{"tool_call call_1 pending", "update call_1 failed"}
			if got := trace(rec.all()); strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("updates %q, want %q", got, want)
			}
			if _, err := os.Stat(filepath.Join(s.Cwd(), "x.txt")); err == nil {
				t.Error("the invalid call was dispatched: x.txt exists")
			}
			if len(m.requests) != 2 {
				t.Fatalf("%d model requests, want 2", len(m.requests))
			}
			res := m.requests[1].Messages[2].Parts[0]
			if !res.IsError || !strings.Contains(res.Text, test.want) {
				t.Errorf("the model got %+v, want an error naming %q", res, test.want)
			}
		})
	}
}

func TestPromptTitleFollowsStreamedArguments(t *testing.T) {
	m := &scriptModel{responses: [][]models.Event{
		concat(toolCall(0, "call_1", "bash", `{"comm`, `and":"go te`, `st ./...\nmore"}`), []models.Event{done(models.StopToolUse)}),
		{done(models.StopEndTurn)},
	}}
	s, rec := newTestSession(t, m, Options{Tools: []string{"bash"}, Preset: tools.FullAccess})
	if _, err := s.Prompt(context.Background(), []Content{Text("test")}); err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, u := range rec.all() {
		switch u := u.(type) {
		case *rpc.ToolCall:
			titles = append(titles, u.Title)
		case *rpc.ToolCallUpdate:
			if u.Title != "" {
				titles = append(titles, u.Title)
			}
		}
	}
	want := []string{"Bash", "Bash · go te", "Bash · go test ./..."}
	if strings.Join(titles, "|") != strings.Join(want, "|") {
		t.Errorf("titles %q, want %q", titles, want)
	}
}

func TestPromptMaxTurnRequests(t *testing.T) {
	m := &scriptModel{responses: [][]models.Event{
		concat(toolCall(0, "", "read", `{"path":"."}`), []models.Event{done(models.StopToolUse)}),
	}}
	s, _ := newTestSession(t, m, Options{MaxTurnRequests: 3})
	stop, err := s.Prompt(context.Background(), []Content{Text("loop")})
	if err != nil || stop != StopMaxTurnRequests {
		t.Fatalf("Prompt = %q, %v; want max_turn_requests", stop, err)
	}
	if n := m.nrequests(); n != 3 {
		t.Errorf("%d model requests, want 3", n)
	}
}

func TestPromptCancelMidBash(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	m := &scriptModel{responses: [][]models.Event{
		concat(
			toolCall(0, "call_b", "bash", `{"command":"echo $$ > `+pidFile+`; echo started; exec sleep 1000"}`),
			toolCall(1, "call_after", "write", `{"path":"after.txt","content":"x"}`),
			[]models.Event{done(models.StopToolUse)},
		),
	}}
	s, rec := newTestSession(t, m, Options{Cwd: dir, Preset: tools.FullAccess})
	started := make(chan struct{})
	var once sync.Once
	rec.on = func(u rpc.SessionUpdate) {
		// The live output says the shell wrote its pid and is running.
		if tu, ok := u.(*rpc.ToolCallUpdate); ok && tu.ToolCallID == "call_b" {
			for _, c := range tu.Content {
				if c.Content != nil && strings.Contains(c.Content.Text, "started") {
					once.Do(func() { close(started) })
				}
			}
		}
	}
	go func() {
		<-started
		s.Cancel()
	}()
	stop, err := s.Prompt(context.Background(), []Content{Text("sleep")})
	if err != nil || stop != StopCancelled {
		t.Fatalf("Prompt = %q, %v; want cancelled", stop, err)
	}
	got := trace(rec.all())
	if !contains(got, "update call_b failed") || !contains(got, "update call_after failed") {
		t.Errorf("updates %q: want both calls failed", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "after.txt")); err == nil {
		t.Error("a call queued after the cancel ran")
	}
	pid := strings.TrimSpace(readFile(t, pidFile))
	if _, err := os.Stat("/proc/" + pid); err == nil {
		if st := readFile(t, "/proc/"+pid+"/stat"); !strings.Contains(st, ") Z") {
			t.Errorf("process %s still runs after cancel", pid)
		}
	}
	// The history stays well formed: every tool call has a result.
	h := s.History()
	if last := h[len(h)-1]; last.Role != models.RoleUser || len(last.Parts) != 2 || !last.Parts[0].IsError {
		t.Errorf("last message %+v, want the two cancelled results", last)
	}
}

func TestPromptCancelDuringApproval(t *testing.T) {
	m := &scriptModel{responses: [][]models.Event{
		concat(toolCall(0, "call_w", "write", `{"path":"w.txt","content":"x","justification":"because"}`), []models.Event{done(models.StopToolUse)}),
	}}
	asked := make(chan struct{})
	var sawCancel bool
	var s *Session
	s, _ = newTestSession(t, m, Options{Approve: func(ctx context.Context, req *ApprovalRequest) (Decision, error) {
		close(asked)
		<-ctx.Done()
		sawCancel = true
		return Reject, ctx.Err()
	}})
	go func() {
		<-asked
		s.Cancel()
	}()
	stop, err := s.Prompt(context.Background(), []Content{Text("write")})
	if err != nil || stop != StopCancelled {
		t.Fatalf("Prompt = %q, %v; want cancelled", stop, err)
	}
	if !sawCancel {
		t.Error("the pending permission request was not cancelled")
	}
	if _, err := os.Stat(filepath.Join(s.Cwd(), "w.txt")); err == nil {
		t.Error("the write happened although its approval was cancelled")
	}
}

func TestPromptNoModel(t *testing.T) {
	s, _ := newTestSession(t, nil, Options{})
	if _, err := s.Prompt(context.Background(), []Content{Text("hi")}); !errors.Is(err, ErrNoModel) {
		t.Fatalf("err = %v, want ErrNoModel", err)
	}
}

func TestPromptRejectsAudio(t *testing.T) {
	s, _ := newTestSession(t, &scriptModel{}, Options{})
	_, err := s.Prompt(context.Background(), []Content{{Type: ContentAudio, Data: "AA==", MimeType: "audio/wav"}})
	var pe *ParamError
	if !errors.As(err, &pe) || pe.Field != "prompt[0]" {
		t.Fatalf("err = %v, want a ParamError for prompt[0]", err)
	}
}

func TestPromptImagesReachTheModel(t *testing.T) {
	m := &scriptModel{responses: [][]models.Event{{text("a cat"), done(models.StopEndTurn)}}}
	s, _ := newTestSession(t, m, Options{})
	_, err := s.Prompt(context.Background(), []Content{Text("what is it?"), {Type: ContentImage, Data: "iVBORw0KGgo=", MimeType: "image/png"}})
	if err != nil {
		t.Fatal(err)
	}
	parts := m.requests[0].Messages[0].Parts
	if len(parts) != 2 || parts[1].Kind != models.PartImage || parts[1].MimeType != "image/png" || parts[1].Data != "iVBORw0KGgo=" {
		t.Errorf("user message parts %+v", parts)
	}
}

func TestPersistenceSurvivesReopen(t *testing.T) {
	data := t.TempDir()
	cwd := t.TempDir()
	m := &scriptModel{responses: [][]models.Event{
		concat(toolCall(0, "call_r", "read", `{"path":"f.txt"}`), []models.Event{done(models.StopToolUse)}),
		{text("It says hi."), done(models.StopEndTurn)},
	}}
	if err := os.WriteFile(filepath.Join(cwd, "f.txt"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := &Env{DataDir: data}
	s, err := env.NewSession(Options{Cwd: cwd, Model: m, Tools: []string{"read"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetPreset(tools.WorkspaceWrite); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(context.Background(), []Content{Text("What does f.txt say?\nPlease.")}); err != nil {
		t.Fatal(err)
	}
	want := s.History()
	s.Close()

	// A crash tears the last line.
	path := filepath.Join(data, "sessions", s.ID()+".jsonl")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"message","message":{"role":"us`)
	f.Close()

	env2 := &Env{DataDir: data}
	list, err := env2.StoredSessions()
	if err != nil || len(list) != 1 || list[0].ID != s.ID() || list[0].Title != "What does f.txt say?" {
		t.Fatalf("StoredSessions = %+v, %v", list, err)
	}
	s2, updates, err := env2.OpenSession(s.ID(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got := s2.History()
	if len(got) != len(want) {
		t.Fatalf("reopened history has %d messages, want %d", len(got), len(want))
	}
	if s2.Preset() != tools.WorkspaceWrite || strings.Join(s2.Tools(), ",") != "read" || s2.Cwd() != cwd {
		t.Errorf("reopened session: preset %s tools %q cwd %s", s2.Preset(), s2.Tools(), s2.Cwd())
	}
	var kinds []string
	for _, raw := range updates {
		var n rpc.SessionNotification
		if err := json.Unmarshal(raw, &n); err != nil {
			t.Fatalf("stored update %s: %v", raw, err)
		}
		kinds = append(kinds, n.Update.SessionUpdateKind())
	}
	for _, k := range []string{"user_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"} {
		if !contains(kinds, k) {
			t.Errorf("replay lacks %s: %q", k, kinds)
		}
	}
	// Appending after a torn line starts a fresh line.
	s2.appendHistory(models.Message{Role: models.RoleUser, Parts: []models.Part{{Kind: models.PartText, Text: "again"}}})
	s2.journal.close()
	s3, _, err := (&Env{DataDir: data}).OpenSession(s.ID(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	if n := len(s3.History()); n != len(want)+1 {
		t.Errorf("after a torn line and an append: %d messages, want %d", n, len(want)+1)
	}
}

func TestOpenSessionRejectsBadIDs(t *testing.T) {
	env := &Env{DataDir: t.TempDir()}
	for _, id := range []string{"", "../../etc/passwd", "sess_zz", "sess_0123"} {
		if _, _, err := env.OpenSession(id, Options{}); !errors.Is(err, ErrNotFound) {
			t.Errorf("OpenSession(%q) = %v, want ErrNotFound", id, err)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
