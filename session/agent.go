package session

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coding-agent/coding-agent/editorsync"
	"github.com/coding-agent/coding-agent/rpc"
	"github.com/coding-agent/coding-agent/session/display"
	"github.com/coding-agent/coding-agent/session/mcp"
	"github.com/coding-agent/coding-agent/tools"
)

// Agent serves one ACP connection: it implements rpc.Agent on top of
// sessions of an [Env]. Create it with [NewAgent].
type Agent struct {
	env    *Env
	client rpc.Client

	// mu guards the fields below.
	mu         sync.Mutex
	sessions   map[string]*agentSession
	clientAuth clientAuth
	// compactionUpdates says the client takes compaction_update
	// (clientCapabilities.session.compaction); others see a text marker.
	compactionUpdates bool
	// prompting counts the prompts of this connection running per session.
	prompting map[string]int
	// bg are the goroutines that send updates after an answer.
	bg sync.WaitGroup
}

// agentSession is a session of this connection.
type agentSession struct {
	*Session
	created time.Time
	// noticed is set once the MCP servers that did not start were told.
	noticed atomic.Bool
}

var _ rpc.Agent = (*Agent)(nil)

// NewAgent returns the agent of one connection to client.
func NewAgent(env *Env, client rpc.Client) *Agent {
	env.init()
	return &Agent{env: env, client: client, sessions: map[string]*agentSession{}, prompting: map[string]int{}}
}

// Close closes every session of the connection, cancelling their work.
func (a *Agent) Close() {
	a.mu.Lock()
	ss := a.sessions
	a.sessions = map[string]*agentSession{}
	a.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range ss {
		wg.Go(s.Close)
	}
	wg.Wait()
	a.bg.Wait()
}

// announceCommands sends the session's slash commands
// (available_commands_update) once the answer that names the session has
// been written: a client cannot place an update for a session it has not
// heard of yet. The sending goroutine belongs to the Agent; Close joins it.
func (a *Agent) announceCommands(ctx context.Context, s *Session) {
	u := &rpc.AvailableCommandsUpdate{AvailableCommands: []rpc.AvailableCommand{}}
	for _, c := range s.Commands() {
		ac := rpc.AvailableCommand{Name: c.Name, Description: c.Description}
		if c.Hint != "" {
			ac.Input = &rpc.AvailableCommandInput{Hint: c.Hint}
		}
		u.AvailableCommands = append(u.AvailableCommands, ac)
	}
	n := &rpc.SessionNotification{SessionID: s.ID(), Update: u}
	a.bg.Add(1)
	rpc.AfterAnswer(ctx, func() {
		go func() {
			defer a.bg.Done()
			if err := a.client.SessionUpdate(context.Background(), n); err != nil {
				a.env.Logger.Debug("available_commands_update not sent", "session", s.ID(), "err", err)
			}
		}()
	})
}

// Initialize answers initialize (PROTOCOL.md §2). Version negotiation: this
// agent speaks version 1 whatever the client asks for.
func (a *Agent) Initialize(ctx context.Context, req *rpc.InitializeRequest) (*rpc.InitializeResponse, error) {
	st := a.env.reportedSandbox(ctx)
	a.mu.Lock()
	a.clientAuth = parseClientAuth(req.ClientCapabilities)
	a.compactionUpdates = clientTakesCompaction(req.ClientCapabilities)
	methods := authMethods(a.clientAuth)
	a.mu.Unlock()
	// The probe starts once the answer has been written (see Env.Start).
	rpc.AfterAnswer(ctx, a.env.startProbe)
	return &rpc.InitializeResponse{
		ProtocolVersion: rpc.ProtocolVersion,
		AgentInfo:       &rpc.Implementation{Name: "coding-agent", Title: "coding-agent", Version: a.env.Version},
		AuthMethods:     authMethodsJSON(methods),
		AgentCapabilities: rpc.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: rpc.PromptCapabilities{Image: true, EmbeddedContext: true},
			MCPCapabilities:    rpc.MCPCapabilities{HTTP: true, SSE: true},
			SessionCapabilities: &rpc.SessionCapabilities{
				List: &rpc.Empty{}, Resume: &rpc.Empty{}, Close: &rpc.Empty{},
			},
			Auth: &rpc.AgentAuthCapabilities{Logout: &rpc.Empty{}},
			Meta: &rpc.AgentMeta{CodingAgent: &rpc.CodingAgentCapabilities{
				Tools:        tools.Builtins(),
				DocumentSync: &rpc.DocumentSync{Version: 1},
				DirectTools:  true,
				Outputs:      true,
				Sandbox:      &rpc.SandboxInfo{Available: st.Available, Kind: st.Kind, Reason: st.Reason},
			}},
		},
	}, nil
}

// NewSession answers session/new.
func (a *Agent) NewSession(ctx context.Context, req *rpc.NewSessionRequest) (*rpc.NewSessionResponse, error) {
	opts := Options{Cwd: req.Cwd, AdditionalDirectories: req.AdditionalDirectories}
	if o := req.Meta.Options(); o != nil {
		if o.Tools != nil {
			opts.Tools = *o.Tools
			if opts.Tools == nil {
				opts.Tools = []string{}
			}
		}
		opts.Preset = tools.Preset(o.Preset)
		if t := o.ApprovalTimeoutSeconds; t != nil {
			if *t <= 0 {
				return nil, rpc.InvalidParams("_meta.coding-agent.approvalTimeoutSeconds", "must be a positive number of seconds")
			}
			opts.ApprovalTimeout = time.Duration(*t * float64(time.Second))
		}
	}
	servers, err := mcpServers(req.MCPServers)
	if err != nil {
		return nil, err
	}
	opts.MCPServers = servers
	// The id is chosen here so that callbacks, which may run before
	// NewSession returns (the watcher starts inside it), already know it.
	opts.id = newID("sess")
	a.wire(&opts, opts.id)
	s, err := a.env.NewSession(opts)
	if err != nil {
		return nil, paramErr(err, "")
	}
	a.add(s)
	a.env.Logger.Info("session created", "session", s.ID(), "cwd", s.Cwd(), "preset", s.Preset(), "tools", s.Tools())
	a.announceCommands(ctx, s)
	return &rpc.NewSessionResponse{SessionID: s.ID(), Modes: modeState(s.Preset()), ConfigOptions: wireConfigOptions(s.ConfigOptions()), Meta: mcpMeta(s)}, nil
}

// wire connects a session's callbacks to this connection: updates become
// session/update notifications, approvals session/request_permission, and
// the model is the configured default.
func (a *Agent) wire(opts *Options, sid string) {
	opts.OnEvent = func(ev Event) {
		if _, ok := ev.(*UserMessage); ok && a.isPrompting(sid) {
			// The client shows the prompt it sent; echoing it would show
			// it twice. It is replayed by session/load.
			return
		}
		if l, ok := ev.(*Lagged); ok {
			// Only a connection attached to another's session has a
			// queue that can overflow; ACP has no way to say so.
			a.env.Logger.Warn("this connection fell behind the session; updates were dropped", "session", sid, "missed", l.Missed)
			return
		}
		u := wireUpdate(ev)
		if c, ok := ev.(*Compaction); ok {
			a.mu.Lock()
			native := a.compactionUpdates
			a.mu.Unlock()
			if native {
				u = compactionUpdate(c)
			}
		}
		if u == nil {
			return
		}
		// Notifications are written in order; a closed connection only
		// loses updates nobody can read any more.
		if err := a.client.SessionUpdate(context.Background(), &rpc.SessionNotification{SessionID: sid, Update: u}); err != nil {
			a.env.Logger.Debug("session/update not sent", "session", sid, "err", err)
		}
	}
	opts.Approve = acpApprover(a.client.RequestPermission)
	opts.OnFilesChanged = func(batch []editorsync.Change) {
		if err := a.client.FilesChanged(context.Background(), filesChanged(sid, batch)); err != nil {
			a.env.Logger.Debug("files_changed not sent", "session", sid, "err", err)
		}
	}
}

// markPrompting counts a prompt of this connection in the session sid
// until the returned function is called.
func (a *Agent) markPrompting(sid string) func() {
	a.mu.Lock()
	a.prompting[sid]++
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.prompting[sid]--; a.prompting[sid] <= 0 {
			delete(a.prompting, sid)
		}
	}
}

// isPrompting reports whether a prompt of this connection runs in the
// session sid.
func (a *Agent) isPrompting(sid string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.prompting[sid] > 0
}

func (a *Agent) add(s *Session) {
	a.mu.Lock()
	old, ok := a.sessions[s.ID()]
	a.sessions[s.ID()] = &agentSession{Session: s, created: time.Now()}
	a.mu.Unlock()
	if ok && old.Session != s {
		// Two loads of one id raced on this connection: the later one
		// attached to the session; the earlier opener ends here.
		old.Close()
	}
}

// mcpMeta is the _meta of a session/new, load or resume answer: the
// session's MCP servers, started or not (with the error), nil without any.
func mcpMeta(s *Session) json.RawMessage {
	st := s.MCPServers()
	if len(st) == 0 {
		return nil
	}
	for i := range st {
		st[i].Error = display.Text(st[i].Error)
	}
	b, _ := json.Marshal(map[string]map[string]any{"coding-agent": {"mcpServers": st}})
	return b
}

// mcpServers parses the mcpServers of a request: a bad entry is
// invalid params naming it.
func mcpServers(raw []json.RawMessage) ([]mcp.ServerConfig, error) {
	cs, err := mcp.ParseACP(raw)
	if err != nil {
		field, msg, _ := strings.Cut(err.Error(), ": ")
		return nil, rpc.InvalidParams(field, msg)
	}
	return cs, nil
}

// session returns the live session id or the ACP "not found" error.
func (a *Agent) session(id string) (*agentSession, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[id]
	if !ok {
		return nil, rpc.SessionNotFound(id)
	}
	return s, nil
}

// LoadSession answers session/load: it reopens a stored session (or takes
// the open one), replays its history as session/update notifications, then
// answers.
func (a *Agent) LoadSession(ctx context.Context, req *rpc.LoadSessionRequest) (*rpc.LoadSessionResponse, error) {
	s, updates, replayed, err := a.reopen(req.SessionID, req.Cwd, req.AdditionalDirectories, req.MCPServers)
	if err != nil {
		return nil, err
	}
	defer replayed()
	for _, raw := range updates {
		var n rpc.SessionNotification
		if err := json.Unmarshal(raw, &n); err != nil {
			a.env.Logger.Warn("skipping a stored update that cannot be replayed", "session", s.ID(), "err", err)
			continue
		}
		n.SessionID = s.ID()
		oneLineTitles(n.Update) // a journal written before titles were cleaned
		if err := a.client.SessionUpdate(ctx, &n); err != nil {
			return nil, err
		}
	}
	if u := s.replayUsage(ctx); u != nil {
		if err := a.client.SessionUpdate(ctx, &rpc.SessionNotification{SessionID: s.ID(), Update: wireUpdate(u)}); err != nil {
			return nil, err
		}
	}
	a.announceCommands(ctx, s)
	return &rpc.LoadSessionResponse{Modes: modeState(s.Preset()), ConfigOptions: wireConfigOptions(s.ConfigOptions()), Meta: mcpMeta(s)}, nil
}

// ResumeSession answers session/resume: like load, without the replay.
func (a *Agent) ResumeSession(ctx context.Context, req *rpc.ResumeSessionRequest) (*rpc.ResumeSessionResponse, error) {
	s, _, replayed, err := a.reopen(req.SessionID, req.Cwd, req.AdditionalDirectories, req.MCPServers)
	if err != nil {
		return nil, err
	}
	replayed()
	a.announceCommands(ctx, s)
	return &rpc.ResumeSessionResponse{Modes: modeState(s.Preset()), ConfigOptions: wireConfigOptions(s.ConfigOptions()), Meta: mcpMeta(s)}, nil
}

// reopen returns the session id: the open one of this connection, or the
// session opened through the environment (attached when another
// connection has it open, else reopened from the store). It also returns
// the stored updates for replay, and a function to call once they are
// sent: live updates wait for it, so that they follow the replay.
func (a *Agent) reopen(id, cwd string, dirs []string, mcpRaw []json.RawMessage) (*Session, []json.RawMessage, func(), error) {
	servers, err := mcpServers(mcpRaw)
	if err != nil {
		return nil, nil, nil, err
	}
	if s, err := a.session(id); err == nil {
		if len(servers) > 0 {
			a.env.Logger.Info("session already open: its MCP servers keep running; the request's list is not started", "session", id)
		}
		var updates []json.RawMessage
		if st := a.env.store(); st != nil {
			if stored, err := st.load(id); err == nil {
				updates = stored.updates
			}
		}
		return s.Session, updates, func() {}, nil
	}
	opts := Options{Cwd: cwd, AdditionalDirectories: dirs, MCPServers: servers}
	a.wire(&opts, id)
	ready := make(chan struct{})
	live := opts.OnEvent
	opts.OnEvent = func(ev Event) {
		<-ready
		live(ev)
	}
	replayed := sync.OnceFunc(func() { close(ready) })
	s, updates, err := a.env.OpenSession(id, opts)
	if errors.Is(err, ErrNotFound) {
		return nil, nil, nil, rpc.SessionNotFound(id)
	}
	if err != nil {
		return nil, nil, nil, paramErr(err, "")
	}
	a.add(s)
	a.env.Logger.Info("session reopened", "session", id, "cwd", s.Cwd(), "messages", len(s.History()))
	return s, updates, replayed, nil
}

// ListSessions answers session/list: the stored sessions (and this
// connection's sessions when nothing is stored), newest first, optionally
// only those in cwd.
func (a *Agent) ListSessions(ctx context.Context, req *rpc.ListSessionsRequest) (*rpc.ListSessionsResponse, error) {
	stored, err := a.env.StoredSessions()
	if err != nil {
		return nil, err
	}
	start := 0
	if req.Cursor != "" {
		n, err := parseCursor(req.Cursor)
		if err != nil {
			return nil, rpc.InvalidParams("cursor", err.Error())
		}
		start = n
	}
	resp := &rpc.ListSessionsResponse{}
	seen := map[string]bool{}
	for _, s := range stored {
		if req.Cwd != "" && s.Cwd != req.Cwd {
			continue
		}
		seen[s.ID] = true
		resp.Sessions = append(resp.Sessions, rpc.SessionInfo{SessionID: s.ID, Cwd: s.Cwd, Title: display.Title(s.Title), UpdatedAt: s.UpdatedAt, AdditionalDirectories: s.Roots})
	}
	a.mu.Lock()
	var live []*agentSession
	for _, s := range a.sessions {
		if !seen[s.ID()] && (req.Cwd == "" || s.Cwd() == req.Cwd) {
			live = append(live, s)
		}
	}
	a.mu.Unlock()
	sort.Slice(live, func(i, j int) bool { return live[i].created.After(live[j].created) })
	for _, s := range live {
		resp.Sessions = append(resp.Sessions, rpc.SessionInfo{
			SessionID:             s.ID(),
			Cwd:                   s.Cwd(),
			UpdatedAt:             s.created.UTC().Format(time.RFC3339),
			AdditionalDirectories: s.Roots()[1:],
		})
	}
	// Pages of listPage sessions; the cursor is opaque to the client.
	all := resp.Sessions
	resp.Sessions = all[min(start, len(all)):min(start+listPage, len(all))]
	if start+listPage < len(all) {
		resp.NextCursor = makeCursor(start + listPage)
	}
	return resp, nil
}

// listPage is how many sessions one session/list answer holds.
const listPage = 50

// makeCursor and parseCursor encode the position of the next page of
// session/list.
func makeCursor(n int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("sessions:" + strconv.Itoa(n)))
}

func parseCursor(c string) (int, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		if rest, ok := strings.CutPrefix(string(b), "sessions:"); ok {
			if n, err := strconv.Atoi(rest); err == nil && n >= 0 {
				return n, nil
			}
		}
	}
	return 0, fmt.Errorf("%q is not a cursor this agent gave (use nextCursor of an earlier answer)", c)
}

// CloseSession answers session/close: it cancels the session's work, waits
// for it to end and frees the session.
func (a *Agent) CloseSession(ctx context.Context, req *rpc.CloseSessionRequest) (*rpc.CloseSessionResponse, error) {
	a.mu.Lock()
	s, ok := a.sessions[req.SessionID]
	delete(a.sessions, req.SessionID)
	a.mu.Unlock()
	if !ok {
		return nil, rpc.SessionNotFound(req.SessionID)
	}
	s.Close()
	return &rpc.CloseSessionResponse{}, nil
}

// SetSessionMode answers session/set_mode: the mode is the preset.
func (a *Agent) SetSessionMode(ctx context.Context, req *rpc.SetSessionModeRequest) (*rpc.SetSessionModeResponse, error) {
	s, err := a.session(req.SessionID)
	if err != nil {
		return nil, err
	}
	if err := a.setPreset(s, req.ModeID, "modeId"); err != nil {
		return nil, err
	}
	return &rpc.SetSessionModeResponse{}, nil
}

// SetSessionConfigOption answers session/set_config_option.
func (a *Agent) SetSessionConfigOption(ctx context.Context, req *rpc.SetSessionConfigOptionRequest) (*rpc.SetSessionConfigOptionResponse, error) {
	s, err := a.session(req.SessionID)
	if err != nil {
		return nil, err
	}
	switch req.ConfigID {
	case "preset":
		if err := a.setPreset(s, req.Value, "value"); err != nil {
			return nil, err
		}
	case "model":
		m, err := a.env.selectModel(req.Value)
		if err != nil {
			return nil, rpc.InvalidParams("value", err.Error())
		}
		s.SetModel(m)
		s.emit(&ConfigChanged{Options: s.ConfigOptions()})
	case "thought_level":
		if _, err := s.SetThinking(req.Value); err != nil {
			return nil, rpc.InvalidParams("value", err.Error())
		}
		s.emit(&ConfigChanged{Options: s.ConfigOptions()})
	default:
		return nil, rpc.InvalidParams("configId", fmt.Sprintf("unknown config option %q (valid: preset, model, thought_level)", req.ConfigID))
	}
	return &rpc.SetSessionConfigOptionResponse{ConfigOptions: wireConfigOptions(s.ConfigOptions())}, nil
}

// setPreset changes the session's preset and confirms the change with
// current_mode_update and config_option_update.
func (a *Agent) setPreset(s *agentSession, value, field string) error {
	p, err := tools.ParsePreset(value)
	if err != nil || value == "" {
		return rpc.InvalidParams(field, fmt.Sprintf("unknown mode %q (valid: read-only, workspace-write, full-access)", value))
	}
	if err := s.ChangePreset(p); err != nil {
		return rpc.InvalidParams(field, err.Error())
	}
	return nil
}

// Prompt answers session/prompt: it runs the turn and answers with its
// stop reason (PROTOCOL.md §4).
func (a *Agent) Prompt(ctx context.Context, req *rpc.PromptRequest) (*rpc.PromptResponse, error) {
	s, err := a.session(req.SessionID)
	if err != nil {
		return nil, err
	}
	defer a.markPrompting(req.SessionID)()
	if s.Model() == nil {
		// Credentials may have arrived since the session started
		// (authenticate, or `coding-agent login` in a terminal).
		if m := a.env.defaultModel(); m != nil {
			s.SetModel(m)
		}
	}
	if !s.noticed.Swap(true) {
		// The MCP servers that did not start, once, where the user looks.
		if text := s.mcpNotice(); text != "" {
			if err := a.client.SessionUpdate(ctx, &rpc.SessionNotification{SessionID: s.ID(), Update: &rpc.AgentMessageChunk{Content: rpc.TextBlock(text), MessageID: newID("msg")}}); err != nil {
				a.env.Logger.Debug("session/update not sent", "session", s.ID(), "err", err)
			}
		}
	}
	stop, err := s.Prompt(ctx, sdkPrompt(req.Prompt))
	switch {
	case errors.Is(err, ErrNoModel):
		return nil, a.noModelError()
	case errors.Is(err, ErrBusy):
		return nil, &rpc.Error{Code: rpc.CodeInvalidRequest, Message: err.Error()}
	case err != nil:
		return nil, paramErr(err, "")
	}
	return &rpc.PromptResponse{StopReason: string(stop)}, nil
}

// Cancel handles session/cancel: it ends the session's work in flight;
// pending permission requests resolve as not allowed.
func (a *Agent) Cancel(ctx context.Context, n *rpc.CancelNotification) {
	s, err := a.session(n.SessionID)
	if err != nil {
		a.env.Logger.Warn("session/cancel for an unknown session", "session", n.SessionID)
		return
	}
	s.Cancel()
}

// ToolsList answers _coding-agent/tools/list.
func (a *Agent) ToolsList(ctx context.Context, req *rpc.ToolsListRequest) (*rpc.ToolsListResponse, error) {
	resp := &rpc.ToolsListResponse{}
	for _, t := range tools.Specs() {
		resp.Tools = append(resp.Tools, rpc.ToolInfo{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.Schema})
	}
	return resp, nil
}

// ToolsCall answers _coding-agent/tools/call: in a session when sessionId is
// given, else standalone in cwd.
func (a *Agent) ToolsCall(ctx context.Context, req *rpc.ToolsCallRequest) (*rpc.ToolsCallResponse, error) {
	var res tools.Result
	var err error
	if req.SessionID != "" {
		s, serr := a.session(req.SessionID)
		if serr != nil {
			return nil, serr
		}
		if req.Preset != "" {
			return nil, rpc.InvalidParams("preset", "not allowed with sessionId: the call runs under the session's preset")
		}
		res, err = s.CallTool(ctx, req.Name, req.Arguments)
	} else {
		res, err = a.env.RunTool(ctx, ToolRequest{Name: req.Name, Arguments: req.Arguments, Cwd: req.Cwd, Preset: req.Preset})
	}
	if err != nil {
		return nil, paramErr(err, "")
	}
	return toWire(res), nil
}

// toWire converts a tool result to the wire result.
func toWire(res tools.Result) *rpc.ToolsCallResponse {
	out := &rpc.ToolsCallResponse{IsError: res.IsError}
	for _, c := range res.Content {
		out.Content = append(out.Content, rpc.TextBlock(c.Text))
	}
	if raw, err := marshalNoEscape(res.Details); err == nil {
		out.Details = raw
	}
	return out
}

// OutputsList answers _coding-agent/outputs/list.
func (a *Agent) OutputsList(ctx context.Context, req *rpc.OutputsListRequest) (*rpc.OutputsListResponse, error) {
	resp := &rpc.OutputsListResponse{}
	if a.env.outputs == nil {
		return resp, nil
	}
	list, err := a.env.outputs.List()
	if err != nil {
		return nil, err
	}
	for _, o := range list {
		resp.Outputs = append(resp.Outputs, rpc.OutputInfo{Path: o.Path, Bytes: o.Bytes, ToolCallID: o.ToolCallID, CreatedAt: o.CreatedAt})
	}
	return resp, nil
}

// OutputsRemove answers _coding-agent/outputs/remove {path} or {all:true}.
func (a *Agent) OutputsRemove(ctx context.Context, req *rpc.OutputsRemoveRequest) (*rpc.OutputsRemoveResponse, error) {
	switch {
	case req.All && req.Path != "":
		return nil, rpc.InvalidParams("path", "give either path or all, not both")
	case !req.All && req.Path == "":
		return nil, rpc.InvalidParams("path", "required unless all is true")
	}
	resp := &rpc.OutputsRemoveResponse{}
	if a.env.outputs == nil {
		if req.All {
			return resp, nil
		}
		return nil, rpc.InvalidParams("path", "no retained outputs are kept (no data directory)")
	}
	if req.All {
		list, err := a.env.outputs.List()
		if err != nil {
			return nil, err
		}
		for _, o := range list {
			if err := a.env.outputs.Remove(o.Path); err == nil {
				resp.Removed = append(resp.Removed, o.Path)
			}
		}
		return resp, nil
	}
	if err := a.env.outputs.Remove(req.Path); err != nil {
		return nil, rpc.InvalidParams("path", err.Error())
	}
	resp.Removed = []string{req.Path}
	return resp, nil
}

// DidOpen handles document/didOpen.
func (a *Agent) DidOpen(ctx context.Context, n *rpc.DidOpenNotification) {
	a.document("didOpen", n.SessionID, n.URI, func(d *editorsync.Documents) error {
		return d.Open(n.URI, n.LanguageID, int(n.Version), n.Text)
	})
}

// DidChange handles document/didChange; changes apply in arrival order.
func (a *Agent) DidChange(ctx context.Context, n *rpc.DidChangeNotification) {
	a.document("didChange", n.SessionID, n.URI, func(d *editorsync.Documents) error {
		changes := make([]editorsync.TextChange, len(n.ContentChanges))
		for i, c := range n.ContentChanges {
			changes[i].Text = c.Text
			if r := c.Range; r != nil {
				changes[i].Range = &editorsync.Range{
					Start: editorsync.Position{Line: r.Start.Line, Character: r.Start.Character},
					End:   editorsync.Position{Line: r.End.Line, Character: r.End.Character},
				}
			}
		}
		return d.Change(n.URI, int(n.Version), changes)
	})
}

// DidSave handles document/didSave.
func (a *Agent) DidSave(ctx context.Context, n *rpc.DidSaveNotification) {
	a.document("didSave", n.SessionID, n.URI, func(d *editorsync.Documents) error { return d.Save(n.URI) })
}

// DidClose handles document/didClose.
func (a *Agent) DidClose(ctx context.Context, n *rpc.DidCloseNotification) {
	a.document("didClose", n.SessionID, n.URI, func(d *editorsync.Documents) error { return d.Close(n.URI) })
}

// document applies a document notification to its session's documents. A
// notification has no answer, so problems go to the log.
func (a *Agent) document(what, sessionID, uri string, apply func(*editorsync.Documents) error) {
	s, err := a.session(sessionID)
	if err != nil {
		a.env.Logger.Warn("document/"+what+" for an unknown session", "session", sessionID, "uri", uri)
		return
	}
	docs := s.Documents()
	if docs == nil {
		return
	}
	if err := apply(docs); err != nil {
		a.env.Logger.Warn("document/"+what+" not applied", "session", sessionID, "uri", uri, "err", err)
	}
}

// paramErr turns a *ParamError into -32602 naming its field (prefixed);
// other errors pass through.
func paramErr(err error, prefix string) error {
	var pe *ParamError
	if errors.As(err, &pe) {
		return rpc.InvalidParams(prefix+pe.Field, pe.Msg)
	}
	return err
}

// presetModes describes the presets as ACP modes.
var presetModes = func() []rpc.SessionMode {
	var modes []rpc.SessionMode
	for _, v := range presetValues {
		modes = append(modes, rpc.SessionMode{ID: v.Value, Name: v.Name, Description: v.Description})
	}
	return modes
}()

func modeState(p tools.Preset) *rpc.SessionModeState {
	return &rpc.SessionModeState{CurrentModeID: string(p), AvailableModes: slices.Clone(presetModes)}
}
