package goclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/coding-agent/coding-agent/session/models/modeltest"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// agentBinary builds cmd/coding-agent once per test process.
func agentBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "goclient-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "coding-agent")
		// Built in the product's own module, with its go.mod and go.sum,
		// exactly as a user builds it.
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/coding-agent")
		cmd.Dir = "../.."
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build ./cmd/coding-agent: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// event is one thing the client saw, in the order it saw it.
type event struct {
	kind   string // "tool_call", "tool_call_update", "permission"
	id     acp.ToolCallId
	status acp.ToolCallStatus
	// answered: for an in_progress update, whether the client had already
	// answered the permission request for this tool call.
	answered bool
}

// recorder is an acp.Client that records what the agent sends it and
// answers permission requests with the option of kind answer.
type recorder struct {
	answer acp.PermissionOptionKind
	// cancel, if set, is called instead of answering; the request is then
	// answered "cancelled", as ACP asks of a client that cancels a turn.
	cancel func(ctx context.Context, sid acp.SessionId)

	mu       sync.Mutex
	events   []event
	answered map[acp.ToolCallId]bool
	ext      []string    // extension methods the agent sent (it must send none)
	extSeen  chan string // if non-nil, each extension method is sent here too
	text     strings.Builder
	prompts  []string // the text of user_message_chunk updates
}

var _ acp.Client = (*recorder)(nil)
var _ acp.ExtensionMethodHandler = (*recorder)(nil)

func (r *recorder) RequestPermission(ctx context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev := event{kind: "permission", id: p.ToolCall.ToolCallId}
	if p.ToolCall.Status != nil {
		ev.status = *p.ToolCall.Status
	}
	r.events = append(r.events, ev)
	if r.cancel != nil {
		r.cancel(ctx, p.SessionId)
		return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{
			Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}, nil
	}
	for _, o := range p.Options {
		if o.Kind == r.answer {
			// Set before the handler returns, so before the answer is on the
			// wire: an in_progress the agent sends after reading the answer
			// is processed after this.
			r.answered[p.ToolCall.ToolCallId] = true
			return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{
				Selected: &acp.RequestPermissionOutcomeSelected{OptionId: o.OptionId}}}, nil
		}
	}
	return acp.RequestPermissionResponse{}, fmt.Errorf("no option of kind %q in %+v", r.answer, p.Options)
}

func (r *recorder) SessionUpdate(ctx context.Context, n acp.SessionNotification) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	u := n.Update
	switch {
	case u.AgentMessageChunk != nil:
		if c := u.AgentMessageChunk.Content; c.Text != nil {
			r.text.WriteString(c.Text.Text)
		}
	case u.UserMessageChunk != nil:
		if c := u.UserMessageChunk.Content; c.Text != nil {
			r.prompts = append(r.prompts, c.Text.Text)
		}
	case u.ToolCall != nil:
		r.events = append(r.events, event{kind: "tool_call", id: u.ToolCall.ToolCallId, status: u.ToolCall.Status})
	case u.ToolCallUpdate != nil:
		ev := event{kind: "tool_call_update", id: u.ToolCallUpdate.ToolCallId}
		if u.ToolCallUpdate.Status != nil {
			ev.status = *u.ToolCallUpdate.Status
		}
		ev.answered = r.answered[ev.id]
		r.events = append(r.events, ev)
	}
	return nil
}

func (r *recorder) HandleExtensionMethod(ctx context.Context, method string, params json.RawMessage) (any, error) {
	r.mu.Lock()
	r.ext = append(r.ext, method)
	ch := r.extSeen
	r.mu.Unlock()
	if ch != nil {
		select {
		case ch <- method:
		case <-ctx.Done():
		}
	}
	return nil, acp.NewMethodNotFound(method)
}

func (r *recorder) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, fmt.Errorf("fs/read_text_file was not advertised")
}

func (r *recorder) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, fmt.Errorf("fs/write_text_file was not advertised")
}

func (r *recorder) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, fmt.Errorf("terminal was not advertised")
}

func (r *recorder) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, fmt.Errorf("terminal was not advertised")
}

func (r *recorder) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, fmt.Errorf("terminal was not advertised")
}

func (r *recorder) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, fmt.Errorf("terminal was not advertised")
}

func (r *recorder) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, fmt.Errorf("terminal was not advertised")
}

// take returns the events seen so far and forgets them.
func (r *recorder) take() []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	evs := r.events
	r.events = nil
	return evs
}

// agent is the binary running under a scripted model, connected to a
// recorder through acp-go-sdk.
type agent struct {
	conn *acp.ClientSideConnection
	stop func() []string // ends the agent; returns every method it sent
}

// startAgent starts the binary on a scripted model and connects rec to it.
func startAgent(t *testing.T, dataDir string, script modeltest.Script, rec *recorder) *agent {
	t.Helper()
	srv := modeltest.NewAnthropicServer(t, script)
	cmd := exec.Command(agentBinary(t), "serve", "--data-dir", dataDir, "--log-level", "error")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "CODING_AGENT_MODEL=anthropic/claude-sonnet-4-5",
		"ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL="+srv.BaseURL, "OPENAI_API_KEY=", "OPENAI_BASE_URL=")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	// The agent's stdout goes to the SDK and to raw, a copy of every byte
	// it wrote: exec's copying goroutine ends before cmd.Wait returns, so
	// after Wait raw is complete.
	pr, pw := io.Pipe()
	var raw lockedBuffer
	cmd.Stdout = io.MultiWriter(pw, &raw)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	var methods []string
	stop := func() []string {
		once.Do(func() {
			stdin.Close() // end of input: the agent exits
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("agent exited with %v; stderr:\n%s", err, stderr.String())
				}
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Errorf("agent did not exit within 30s of stdin closing; stderr:\n%s", stderr.String())
			}
			pw.Close()
			for _, line := range strings.Split(raw.String(), "\n") {
				var msg struct {
					Method string `json:"method"`
				}
				if json.Unmarshal([]byte(line), &msg) == nil && msg.Method != "" {
					methods = append(methods, msg.Method)
				}
			}
		})
		return methods
	}
	t.Cleanup(func() { stop() })
	conn := acp.NewClientSideConnection(rec, stdin, pr)
	conn.SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	return &agent{conn: conn, stop: stop}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func writeTurn(path, content string) modeltest.Response {
	return modeltest.Response{Steps: []modeltest.Step{
		modeltest.Text("Writing it."),
		// The same provider id in every turn: the agent must still give
		// each tool call an id of its own within the session.
		modeltest.Tool("toolu_1", "write", `{"path":"`+path+`",`, `"content":"`+content+`\n"}`),
	}}
}

func TestGoClientTurns(t *testing.T) {
	for _, test := range []struct {
		name   string
		answer acp.PermissionOptionKind
		final  acp.ToolCallStatus
	}{
		{"allow_once", acp.PermissionOptionKindAllowOnce, acp.ToolCallStatusCompleted},
		{"reject_once", acp.PermissionOptionKindRejectOnce, acp.ToolCallStatusFailed},
	} {
		t.Run(test.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			ws := t.TempDir()
			script := modeltest.Script{
				writeTurn("a.txt", "first"), {Steps: []modeltest.Step{modeltest.Text("Done one.")}},
				writeTurn("b.txt", "second"), {Steps: []modeltest.Step{modeltest.Text("Done two.")}},
			}
			rec := &recorder{answer: test.answer, answered: map[acp.ToolCallId]bool{}}
			dataDir := t.TempDir()
			ag := startAgent(t, dataDir, script, rec)
			conn := ag.conn

			init, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber})
			if err != nil {
				t.Fatalf("initialize: %v", err)
			}
			if init.ProtocolVersion != acp.ProtocolVersionNumber {
				t.Errorf("protocol version %d, want %d", init.ProtocolVersion, acp.ProtocolVersionNumber)
			}
			sess, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: ws, McpServers: []acp.McpServer{}})
			if err != nil {
				t.Fatalf("session/new: %v", err)
			}

			seen := map[acp.ToolCallId]string{} // tool call id → the turn that used it
			for i, file := range []string{"a.txt", "b.txt"} {
				resp, err := conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId,
					Prompt: []acp.ContentBlock{acp.TextBlock("write " + file)}})
				if err != nil {
					t.Fatalf("turn %d: session/prompt: %v", i+1, err)
				}
				if resp.StopReason != acp.StopReasonEndTurn {
					t.Errorf("turn %d: stop reason %q, want end_turn", i+1, resp.StopReason)
				}
				evs := rec.take()
				id := checkLifecycle(t, i+1, evs, test.final)
				if prev, dup := seen[id]; dup && id != "" {
					t.Errorf("turn %d: tool call id %q was already used in %s", i+1, id, prev)
				}
				seen[id] = fmt.Sprintf("turn %d", i+1)

				b, rerr := os.ReadFile(filepath.Join(ws, file))
				want := map[int]string{0: "first\n", 1: "second\n"}[i]
				switch {
				case test.final == acp.ToolCallStatusCompleted && (rerr != nil || string(b) != want):
					t.Errorf("turn %d: %s = %q, %v; want %q", i+1, file, b, rerr, want)
				case test.final == acp.ToolCallStatusFailed && !os.IsNotExist(rerr):
					t.Errorf("turn %d: %s exists after a rejected write (%q, %v)", i+1, file, b, rerr)
				}
			}
			// Everything the agent ever wrote, once it has exited: no
			// _coding-agent/* message, since the client did not opt in.
			methods := ag.stop()
			for _, m := range methods {
				if strings.HasPrefix(m, "_") {
					t.Errorf("the client asked for no extensions, yet the agent sent %q", m)
				}
			}
			if !slices.Contains(methods, "session/request_permission") {
				t.Errorf("the raw stream shows no session/request_permission: %q", methods)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if len(rec.ext) != 0 {
				t.Errorf("the client asked for no extensions, yet its SDK handed it %q", rec.ext)
			}
			if len(rec.prompts) != 0 {
				t.Errorf("the prompts came back during the live turns: %q", rec.prompts)
			}
			if txt := rec.text.String(); !strings.Contains(txt, "Done one.") || !strings.Contains(txt, "Done two.") {
				t.Errorf("agent text %q lacks the model's final messages", txt)
			}

			// A new agent process on the same data directory replays the
			// session in session/load with the same tool call ids, each once.
			rec2 := &recorder{answer: test.answer, answered: map[acp.ToolCallId]bool{}}
			ag2 := startAgent(t, dataDir, modeltest.Script{}, rec2)
			if _, err := ag2.conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}); err != nil {
				t.Fatalf("second initialize: %v", err)
			}
			if _, err := ag2.conn.LoadSession(ctx, acp.LoadSessionRequest{SessionId: sess.SessionId, Cwd: ws, McpServers: []acp.McpServer{}}); err != nil {
				t.Fatalf("session/load: %v", err)
			}
			replayed := map[acp.ToolCallId]int{}
			for _, ev := range rec2.take() {
				if ev.kind == "tool_call" {
					replayed[ev.id]++
				}
				if ev.kind == "permission" {
					t.Errorf("session/load asked for permission again: %+v", ev)
				}
			}
			for id, n := range replayed {
				if _, live := seen[id]; !live || n != 1 {
					t.Errorf("replay: tool call %q announced %d times (live ids %v)", id, n, seen)
				}
			}
			rec2.mu.Lock()
			if got := strings.Join(rec2.prompts, ""); got != "write a.txtwrite b.txt" {
				t.Errorf("session/load replayed the prompts as %q, want each once, in order", rec2.prompts)
			}
			rec2.mu.Unlock()
			if len(replayed) != len(seen) {
				t.Errorf("replay announced %d tool calls %v, the live turns %d %v", len(replayed), replayed, len(seen), seen)
			}
		})
	}
}

// checkLifecycle checks one turn's tool call: announced pending, permission
// asked while pending, in_progress only after the answer, and the final
// status. It returns the tool call's id.
func checkLifecycle(t *testing.T, turn int, evs []event, final acp.ToolCallStatus) acp.ToolCallId {
	t.Helper()
	var id acp.ToolCallId
	var calls, perms int
	var last acp.ToolCallStatus
	var inProgress bool
	for _, ev := range evs {
		switch ev.kind {
		case "tool_call":
			calls++
			id = ev.id
			if ev.status != acp.ToolCallStatusPending {
				t.Errorf("turn %d: tool_call status %q, want pending", turn, ev.status)
			}
		case "permission":
			perms++
			if ev.id != id && id != "" {
				t.Errorf("turn %d: permission for %q, the tool call is %q", turn, ev.id, id)
			}
			if ev.status != "" && ev.status != acp.ToolCallStatusPending {
				t.Errorf("turn %d: permission asked with the tool call %q, want pending", turn, ev.status)
			}
		case "tool_call_update":
			if ev.id != id {
				t.Errorf("turn %d: update for %q, the tool call is %q", turn, ev.id, id)
			}
			if ev.status == acp.ToolCallStatusInProgress {
				inProgress = true
				if !ev.answered {
					t.Errorf("turn %d: in_progress before the permission was answered", turn)
				}
			}
			if ev.status != "" {
				last = ev.status
			}
		}
	}
	if calls != 1 || perms != 1 {
		t.Errorf("turn %d: %d tool_call and %d permission requests, want 1 each: %+v", turn, calls, perms, evs)
	}
	if id == "" {
		t.Errorf("turn %d: tool call with no id: %+v", turn, evs)
	}
	if final == acp.ToolCallStatusCompleted && !inProgress {
		t.Errorf("turn %d: an approved tool call never went in_progress: %+v", turn, evs)
	}
	if last != final {
		t.Errorf("turn %d: final tool call status %q, want %q: %+v", turn, last, final, evs)
	}
	return id
}

// TestGoClientExtensionsOptIn is the control for the "no extensions"
// checks above: the same client, opted in as docs/protocol.md §2 says, is
// handed _coding-agent/files_changed by its SDK after the write.
func TestGoClientExtensionsOptIn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ws := t.TempDir()
	script := modeltest.Script{writeTurn("a.txt", "first"), {Steps: []modeltest.Step{modeltest.Text("Done.")}}}
	rec := &recorder{answer: acp.PermissionOptionKindAllowOnce, answered: map[acp.ToolCallId]bool{}, extSeen: make(chan string, 16)}
	ag := startAgent(t, t.TempDir(), script, rec)
	if _, err := ag.conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber,
		ClientCapabilities: acp.ClientCapabilities{Meta: map[string]any{"coding-agent": map[string]any{"extensions": true}}}}); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	sess, err := ag.conn.NewSession(ctx, acp.NewSessionRequest{Cwd: ws, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	if _, err := ag.conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("write a.txt")}}); err != nil {
		t.Fatalf("session/prompt: %v", err)
	}
	for {
		select {
		case m := <-rec.extSeen:
			if m == "_coding-agent/files_changed" {
				return
			}
		case <-ctx.Done():
			t.Fatalf("an opted-in client never got _coding-agent/files_changed after a write")
		}
	}
}

// TestGoClientCancel: the client cancels the turn while the agent waits
// for its approval: the prompt ends "cancelled", the tool call does not
// complete, and nothing is written.
func TestGoClientCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ws := t.TempDir()
	rec := &recorder{answered: map[acp.ToolCallId]bool{}}
	ag := startAgent(t, t.TempDir(), modeltest.Script{writeTurn("a.txt", "first"), {Steps: []modeltest.Step{modeltest.Text("Done.")}}}, rec)
	rec.mu.Lock() // RequestPermission reads it under the lock
	rec.cancel = func(ctx context.Context, sid acp.SessionId) {
		if err := ag.conn.Cancel(ctx, acp.CancelNotification{SessionId: sid}); err != nil {
			t.Errorf("session/cancel: %v", err)
		}
	}
	rec.mu.Unlock()
	if _, err := ag.conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	sess, err := ag.conn.NewSession(ctx, acp.NewSessionRequest{Cwd: ws, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	resp, err := ag.conn.Prompt(ctx, acp.PromptRequest{SessionId: sess.SessionId, Prompt: []acp.ContentBlock{acp.TextBlock("write a.txt")}})
	if err != nil {
		t.Fatalf("session/prompt: %v", err)
	}
	if resp.StopReason != acp.StopReasonCancelled {
		t.Errorf("stop reason %q, want cancelled", resp.StopReason)
	}
	var perms int
	for _, ev := range rec.take() {
		switch {
		case ev.kind == "permission":
			perms++
		case ev.status == acp.ToolCallStatusCompleted || ev.status == acp.ToolCallStatusInProgress:
			t.Errorf("a cancelled tool call went %q", ev.status)
		}
	}
	if perms != 1 {
		t.Errorf("%d permission requests, want 1", perms)
	}
	if _, err := os.Stat(filepath.Join(ws, "a.txt")); !os.IsNotExist(err) {
		t.Errorf("a.txt exists after a cancelled turn (%v)", err)
	}
}
