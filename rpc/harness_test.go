package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// waitTimeout bounds every wait in these tests; a healthy run never gets
// near it.
const waitTimeout = 60 * time.Second

// wireMsg is one message as seen on the wire by the test peer.
type wireMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *wireErr        `json:"error,omitempty"`
	raw     []byte
}

type wireErr struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// peer is a raw JSON-RPC client driving a server over pipes. It writes exact
// bytes and reads frames with the package's own frame reader.
type peer struct {
	t       testing.TB
	framing Framing
	w       io.WriteCloser
	msgs    chan wireMsg
	readErr chan error
	serve   chan error // Serve's result
	cancel  context.CancelFunc
	trace   *syncBuffer
	logs    *syncBuffer
	nextID  int
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startPeer runs Serve over in-process pipes against agent.
func startPeer(t testing.TB, framing Framing, agent Agent, opts Options) *peer {
	t.Helper()
	cr, cw := io.Pipe() // client → server
	sr, sw := io.Pipe() // server → client
	ctx, cancel := context.WithCancel(context.Background())
	p := &peer{
		t: t, framing: framing, w: cw, cancel: cancel,
		msgs:    make(chan wireMsg, 4096),
		readErr: make(chan error, 1),
		serve:   make(chan error, 1),
		trace:   &syncBuffer{},
		logs:    &syncBuffer{},
	}
	if opts.Trace == nil {
		opts.Trace = p.trace
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(p.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	go func() {
		p.serve <- Serve(ctx, cr, sw, func(c Client) Agent {
			if a, ok := agent.(interface{ setClient(Client) }); ok {
				a.setClient(c)
			}
			return agent
		}, opts)
	}()
	go func() {
		fr := newFrameReader(sr, framing, 1<<30)
		for {
			frame, err := fr.next()
			if err != nil {
				p.readErr <- err
				close(p.msgs)
				return
			}
			var m wireMsg
			if err := json.Unmarshal(frame, &m); err != nil {
				p.readErr <- fmt.Errorf("server sent invalid JSON %q: %w", frame, err)
				close(p.msgs)
				return
			}
			m.raw = append([]byte(nil), frame...)
			p.msgs <- m
		}
	}()
	t.Cleanup(func() {
		cw.Close()
		cancel()
		select {
		case <-p.serve:
		case <-time.After(waitTimeout):
			t.Errorf("Serve did not return after the input closed")
		}
	})
	return p
}

// frame wraps body in the peer's framing.
func (p *peer) frame(body string) []byte {
	if p.framing == FramingHeader {
		return fmt.Appendf(nil, "Content-Length: %d\r\n\r\n%s", len(body), body)
	}
	return []byte(body + "\n")
}

func (p *peer) send(body string) {
	p.t.Helper()
	p.sendRaw(p.frame(body))
}

func (p *peer) sendRaw(b []byte) {
	p.t.Helper()
	if _, err := p.w.Write(b); err != nil {
		p.t.Fatalf("writing to server: %v", err)
	}
}

// next returns the next message from the server.
func (p *peer) next() wireMsg {
	p.t.Helper()
	select {
	case m, ok := <-p.msgs:
		if !ok {
			p.t.Fatalf("server output ended: %v", <-p.readErr)
		}
		if m.Error != nil && m.Error.Code == 0 {
			p.t.Fatalf("error with code 0 on the wire: %s", m.raw)
		}
		return m
	case <-time.After(waitTimeout):
		p.t.Fatalf("timed out waiting for a message from the server")
	}
	return wireMsg{}
}

// request sends a request with a fresh numeric id and returns that id.
func (p *peer) request(method string, params any) int {
	p.t.Helper()
	p.nextID++
	p.send(encodeRequest(p.nextID, method, params))
	return p.nextID
}

func encodeRequest(id any, method string, params any) string {
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func (p *peer) notify(method string, params any) {
	p.t.Helper()
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	p.send(string(b))
}

// response waits for the response to id, passing other messages to other
// (which may be nil to fail on them).
func (p *peer) response(id int, other func(wireMsg)) wireMsg {
	p.t.Helper()
	want := fmt.Sprint(id)
	for {
		m := p.next()
		if m.Method == "" && string(m.ID) == want {
			return m
		}
		if other == nil {
			p.t.Fatalf("unexpected message while waiting for response %d: %s", id, m.raw)
		}
		other(m)
	}
}

// call sends a request and waits for its response.
func (p *peer) call(method string, params any) wireMsg {
	p.t.Helper()
	return p.response(p.request(method, params), nil)
}

func (p *peer) initialize() {
	p.t.Helper()
	p.initializeWith(map[string]any{"protocolVersion": 1})
}

// optIn is the initialize params of a client that wants every extension.
var optIn = map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{
	"_meta": map[string]any{"coding-agent": map[string]any{"extensions": true}},
}}

func (p *peer) initializeWith(params any) {
	p.t.Helper()
	m := p.call("initialize", params)
	if m.Error != nil {
		p.t.Fatalf("initialize failed: %s", m.raw)
	}
}

// answer replies to a server→client request.
func (p *peer) answer(req wireMsg, result any) {
	p.t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	p.send(string(b))
}

// fakeAgent is an Agent whose behaviour tests set per method. Unset
// methods answer with small fixed values.
type fakeAgent struct {
	mu     sync.Mutex
	client Client
	events []string // notifications seen, in order

	initialize func(context.Context, *InitializeRequest) (*InitializeResponse, error)
	newSession func(context.Context, *NewSessionRequest) (*NewSessionResponse, error)
	prompt     func(context.Context, *PromptRequest) (*PromptResponse, error)
	toolsCall  func(context.Context, *ToolsCallRequest) (*ToolsCallResponse, error)
	toolsList  func(context.Context, *ToolsListRequest) (*ToolsListResponse, error)
	cancel     func(context.Context, *CancelNotification)
	didChange  func(context.Context, *DidChangeNotification)
}

func (a *fakeAgent) setClient(c Client) { a.client = c }

func (a *fakeAgent) record(ev string) {
	a.mu.Lock()
	a.events = append(a.events, ev)
	a.mu.Unlock()
}

func (a *fakeAgent) seen() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.events...)
}

func (a *fakeAgent) Authenticate(ctx context.Context, req *AuthenticateRequest) (*AuthenticateResponse, error) {
	return nil, InvalidParams("methodId", "unknown auth method "+req.MethodID)
}

func (a *fakeAgent) Logout(ctx context.Context, req *LogoutRequest) (*LogoutResponse, error) {
	return &LogoutResponse{}, nil
}

func (a *fakeAgent) Initialize(ctx context.Context, req *InitializeRequest) (*InitializeResponse, error) {
	if a.initialize != nil {
		return a.initialize(ctx, req)
	}
	return &InitializeResponse{ProtocolVersion: ProtocolVersion, AgentInfo: &Implementation{Name: "fake", Version: "0"}}, nil
}

func (a *fakeAgent) NewSession(ctx context.Context, req *NewSessionRequest) (*NewSessionResponse, error) {
	if a.newSession != nil {
		return a.newSession(ctx, req)
	}
	return &NewSessionResponse{SessionID: "s1"}, nil
}

func (a *fakeAgent) LoadSession(ctx context.Context, req *LoadSessionRequest) (*LoadSessionResponse, error) {
	if req.SessionID != "s1" {
		return nil, SessionNotFound(req.SessionID)
	}
	return &LoadSessionResponse{}, nil
}

func (a *fakeAgent) ResumeSession(ctx context.Context, req *ResumeSessionRequest) (*ResumeSessionResponse, error) {
	if req.SessionID != "s1" {
		return nil, SessionNotFound(req.SessionID)
	}
	return &ResumeSessionResponse{}, nil
}

func (a *fakeAgent) ListSessions(ctx context.Context, req *ListSessionsRequest) (*ListSessionsResponse, error) {
	return &ListSessionsResponse{}, nil
}

func (a *fakeAgent) CloseSession(ctx context.Context, req *CloseSessionRequest) (*CloseSessionResponse, error) {
	if req.SessionID != "s1" {
		return nil, SessionNotFound(req.SessionID)
	}
	return &CloseSessionResponse{}, nil
}

func (a *fakeAgent) SetSessionMode(ctx context.Context, req *SetSessionModeRequest) (*SetSessionModeResponse, error) {
	return &SetSessionModeResponse{}, nil
}

func (a *fakeAgent) SetSessionConfigOption(ctx context.Context, req *SetSessionConfigOptionRequest) (*SetSessionConfigOptionResponse, error) {
	return &SetSessionConfigOptionResponse{}, nil
}

func (a *fakeAgent) Prompt(ctx context.Context, req *PromptRequest) (*PromptResponse, error) {
	if a.prompt != nil {
		return a.prompt(ctx, req)
	}
	return nil, AuthRequired("no model configured: set --model or CODING_AGENT_MODEL", []string{"CODING_AGENT_MODEL", "ANTHROPIC_API_KEY"}, []string{"login"})
}

func (a *fakeAgent) Cancel(ctx context.Context, n *CancelNotification) {
	a.record("cancel " + n.SessionID)
	if a.cancel != nil {
		a.cancel(ctx, n)
	}
}

func (a *fakeAgent) ToolsList(ctx context.Context, req *ToolsListRequest) (*ToolsListResponse, error) {
	if a.toolsList != nil {
		return a.toolsList(ctx, req)
	}
	return &ToolsListResponse{Tools: []ToolInfo{{Name: "read", Title: "Read", Description: "Read a file", InputSchema: json.RawMessage(`{"type":"object"}`)}}}, nil
}

func (a *fakeAgent) ToolsCall(ctx context.Context, req *ToolsCallRequest) (*ToolsCallResponse, error) {
	if a.toolsCall != nil {
		return a.toolsCall(ctx, req)
	}
	return &ToolsCallResponse{Content: []ContentBlock{TextBlock("ok")}}, nil
}

func (a *fakeAgent) OutputsList(ctx context.Context, req *OutputsListRequest) (*OutputsListResponse, error) {
	return &OutputsListResponse{}, nil
}

func (a *fakeAgent) OutputsRemove(ctx context.Context, req *OutputsRemoveRequest) (*OutputsRemoveResponse, error) {
	return &OutputsRemoveResponse{}, nil
}

func (a *fakeAgent) DidOpen(ctx context.Context, n *DidOpenNotification) {
	a.record(fmt.Sprintf("open %s %d", n.URI, n.Version))
}

func (a *fakeAgent) DidChange(ctx context.Context, n *DidChangeNotification) {
	a.record(fmt.Sprintf("change %s %d", n.URI, n.Version))
	if a.didChange != nil {
		a.didChange(ctx, n)
	}
}

func (a *fakeAgent) DidSave(ctx context.Context, n *DidSaveNotification) {
	a.record("save " + n.URI)
}

func (a *fakeAgent) DidClose(ctx context.Context, n *DidCloseNotification) {
	a.record("close " + n.URI)
}

// bothFramings runs f once per explicit framing, with auto-detection.
func bothFramings(t *testing.T, f func(t *testing.T, framing Framing)) {
	for _, fr := range []Framing{FramingNDJSON, FramingHeader} {
		t.Run(fr.String(), func(t *testing.T) { f(t, fr) })
	}
}

func mustContain(t testing.TB, got, want string) {
	t.Helper()
	if !strings.Contains(got, want) {
		t.Fatalf("%q does not contain %q", got, want)
	}
}

var errBoom = errors.New("boom")
