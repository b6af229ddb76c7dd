package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coding-agent/coding-agent/editorsync"
	"github.com/coding-agent/coding-agent/session/mcp"
	"github.com/coding-agent/coding-agent/session/models"
	"github.com/coding-agent/coding-agent/tools"
)

// DefaultApprovalTimeout is how long a permission request may wait for the
// client's answer unless the session says otherwise (PROTOCOL.md §3).
const DefaultApprovalTimeout = 600 * time.Second

// Options configure a new [Session].
type Options struct {
	// Cwd is the session's working directory: absolute and existing.
	Cwd string
	// AdditionalDirectories are further roots writable under
	// workspace-write. Each must be an absolute, existing directory.
	AdditionalDirectories []string
	// Tools are the built-in tools the session offers, with the rules of
	// [tools.Select]. Nil means all of them; an empty slice means none.
	Tools []string
	// Preset is the permission preset; empty means read-only.
	Preset tools.Preset
	// ApprovalTimeout bounds each permission request; 0 means
	// [DefaultApprovalTimeout].
	ApprovalTimeout time.Duration
	// Approve is the session's approval handler: it decides on one change
	// or command that the preset does not allow by itself, within
	// ApprovalTimeout. An error means not allowed, and its text tells the
	// model why. Nil means there is nobody to ask: such requests are
	// denied.
	Approve func(ctx context.Context, req *ApprovalRequest) (Decision, error)
	// OnEvent is the session's event handler: it receives every event of
	// the session in order, one call at a time, before the operation that
	// caused it goes on (the ACP adapter writes them to its client in
	// order with its answers). It must not block for long; observers that
	// may be slow use [Session.Subscribe] instead.
	OnEvent func(Event)
	// Buffers reports editor buffers with unsaved changes; nil if none.
	Buffers tools.Buffers
	// OnFilesChanged, if set, turns on editor buffer sync: the session
	// watches its roots and the directories of open documents and reports
	// each batch of changes on disk (from one goroutine, in order). Open
	// documents then guard edit/write against clobbering unsaved changes.
	OnFilesChanged func([]editorsync.Change)
	// Model answers prompts; nil means the environment's default model
	// (Env.Model, $CODING_AGENT_MODEL, or the one provider with
	// credentials), and prompts fail with ErrNoModel when there is none.
	Model models.Model
	// MaxTurnRequests bounds the model requests of one prompt; 0 means
	// DefaultMaxTurnRequests.
	MaxTurnRequests int
	// MCPServers are the session's MCP servers (ACP mcpServers), started
	// with those of config.json whose names they do not use. Their tools
	// join the built-in ones (see package mcp).
	MCPServers []mcp.ServerConfig
	// MCPStartTimeout bounds each MCP server's start; 0 means
	// config.json's mcpStartTimeoutSeconds, else mcp.DefaultStartTimeout.
	MCPStartTimeout time.Duration
	// id, when set, is the session's id (chosen by a host that must know
	// it before the first callback); reopen says the session is stored
	// already (see Env.OpenSession).
	id     string
	reopen bool
}

// Session is one coding-agent session, as one host opened it. Its methods
// are safe for concurrent use.
//
// A session is open once in an [Env]: a second [Env.OpenSession] of an
// open session attaches to it, and returns a Session of its own that
// shares everything with the first (history, tools, journal, the turn in
// flight) but its event and approval handlers and its Close.
type Session struct {
	*state
	h *handle
}

// handle is what belongs to one opener of a session.
type handle struct {
	sink    *sink // its event handler; nil if it has none
	approve func(context.Context, *ApprovalRequest) (Decision, error)
	// life ends with the opener's Close: it ends the operations the
	// opener started; ops counts them.
	life      context.Context
	closeLife context.CancelFunc
	ops       sync.WaitGroup
	closed    bool // guarded by state.mu
}

type handleKey struct{}

func newHandle(k *sink, approve func(context.Context, *ApprovalRequest) (Decision, error)) *handle {
	h := &handle{sink: k, approve: approve}
	h.life, h.closeLife = context.WithCancel(context.Background())
	return h
}

// state is a session's shared state.
type state struct {
	env   *Env
	id    string
	cwd   string
	roots []string // cwd first, then additional directories
	tools []string // the names of the built-in tools
	opts  Options

	created time.Time // the date in the system prompt, stable for the session
	journal *journal  // nil when sessions are not persisted
	// persistErr says why a session meant to be saved is not (a data
	// directory that cannot be written); nil otherwise.
	persistErr error
	mcp        *mcp.Set         // nil without MCP servers
	sync       *editorsync.Sync // nil without editor sync

	// mu guards the fields below.
	mu      sync.Mutex
	preset  tools.Preset
	toolset *tools.Set      // built for preset
	allowed map[string]bool // approvals given "allow always" (see approvalKey)
	model   models.Model
	history []models.Message
	// callIDs are the tool call ids used in this session (see callID).
	callIDs   map[string]bool
	usage     usageState
	thought   string // the reasoning effort: "" (the model's default), low, medium or high
	prompting bool
	closed    bool
	// warnedUnsaved says the client was told the session is not saved.
	warnedUnsaved bool
	// turn is cancelled by Cancel: it ends every operation in flight, and
	// a new one replaces it.
	turn       context.Context
	cancelTurn context.CancelFunc
	// life is cancelled by Close.
	life      context.Context
	closeLife context.CancelFunc
	ops       sync.WaitGroup
	refs      int // open handles
	// finishOnce runs finish.
	finishOnce sync.Once

	// pubMu orders publishing with attaching (see publish); it guards
	// sinks.
	pubMu sync.Mutex
	sinks []*sink
}

// NewSession creates a session. A bad option is a *ParamError naming it.
func (e *Env) NewSession(opts Options) (*Session, error) {
	e.init()
	e.openMu.Lock()
	defer e.openMu.Unlock()
	return e.newSession(opts)
}

// newSession creates a session and registers it as open; e.openMu is
// held.
func (e *Env) newSession(opts Options) (*Session, error) {
	e.mu.Lock()
	down := e.shutdown
	e.mu.Unlock()
	if down {
		return nil, errors.New("the environment is shut down")
	}
	if opts.id != "" && e.lookupOpen(opts.id) != nil {
		return nil, fmt.Errorf("session %s is open already", opts.id)
	}
	cwd, err := checkRoot("cwd", opts.Cwd)
	if err != nil {
		return nil, err
	}
	roots := []string{cwd}
	for i, d := range opts.AdditionalDirectories {
		d, err := checkRoot(fmt.Sprintf("additionalDirectories[%d]", i), d)
		if err != nil {
			return nil, err
		}
		roots = append(roots, d)
	}
	names := opts.Tools
	if names == nil {
		names = tools.Builtins()
	}
	names, err = tools.Select(names)
	if err != nil {
		return nil, &ParamError{Field: "tools", Msg: err.Error()}
	}
	if opts.Preset == "" {
		opts.Preset = e.defaultPreset()
	}
	preset, err := tools.ParsePreset(string(opts.Preset))
	if err != nil {
		return nil, &ParamError{Field: "preset", Msg: err.Error()}
	}
	if opts.ApprovalTimeout < 0 {
		return nil, &ParamError{Field: "approvalTimeoutSeconds", Msg: "must not be negative"}
	}
	if opts.ApprovalTimeout == 0 {
		opts.ApprovalTimeout = e.defaultApprovalTimeout()
	}
	if opts.MaxTurnRequests < 0 {
		return nil, &ParamError{Field: "maxTurnRequests", Msg: "must not be negative"}
	}
	if opts.MaxTurnRequests == 0 {
		opts.MaxTurnRequests = DefaultMaxTurnRequests
	}
	if opts.Model == nil {
		opts.Model = e.defaultModel()
	}
	s := &Session{state: &state{env: e, id: opts.id, cwd: cwd, roots: roots, tools: names, opts: opts, preset: preset, model: opts.Model, created: time.Now(), refs: 1}}
	var k *sink
	if opts.OnEvent != nil {
		k = directSink(opts.OnEvent)
		s.sinks = []*sink{k}
	}
	s.h = newHandle(k, opts.Approve)
	if err := s.startSync(); err != nil {
		return nil, err
	}
	if s.toolset, err = s.buildTools(preset); err != nil {
		s.closeSync()
		return nil, err
	}
	if s.id == "" {
		s.id = newID("sess")
	}
	if !opts.reopen {
		if st := e.store(); st != nil {
			j, err := st.create(s.meta())
			if err != nil {
				// The work matters more than its record: the session
				// runs unsaved, and says so (see PersistError).
				e.Logger.Warn("this session will not be saved", "session", s.id, "err", err)
				s.persistErr = err
			} else {
				j.history = s.History
				s.journal = j
			}
		}
	}
	s.life, s.closeLife = context.WithCancel(context.Background())
	s.turn, s.cancelTurn = context.WithCancel(s.life)
	s.startMCP()
	e.register(s.state)
	return s, nil
}

// PersistError says why the session is not being saved although the
// environment has a data directory (it could not be written); nil when it
// is saved, or when there is no data directory at all.
func (s *Session) PersistError() error { return s.persistErr }

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// Cwd returns the session's working directory.
func (s *Session) Cwd() string { return s.cwd }

// Roots returns the session roots: cwd, then the additional directories.
func (s *Session) Roots() []string { return slices.Clone(s.roots) }

// Tools returns the names of the session's tools.
func (s *Session) Tools() []string { return slices.Clone(s.tools) }

// Preset returns the current permission preset.
func (s *Session) Preset() tools.Preset {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.preset
}

// SetPreset changes the permission preset. Only the host may call it; the
// model never can. It returns whether the preset changed.
func (s *Session) SetPreset(p tools.Preset) (bool, error) {
	p, err := tools.ParsePreset(string(p))
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	changed := s.preset != p
	if changed {
		set, err := s.buildTools(p)
		if err != nil {
			s.mu.Unlock()
			return false, err
		}
		s.preset, s.toolset = p, set
	}
	s.mu.Unlock()
	if changed {
		// Outside s.mu: the journal may read the history (see
		// journal.ensureFileLocked).
		s.journal.append(record{Type: recPreset, Preset: string(p)})
	}
	return changed, nil
}

// buildTools builds the session's tool set for preset: the tools share the
// environment's mutation queue and output store and the session's roots,
// approver and editor buffers. Calls in flight keep the tools they
// started with.
func (s *Session) buildTools(preset tools.Preset) (*tools.Set, error) {
	opts := s.env.toolOptions(preset, s.roots[1:])
	opts.Approver = &approver{s: s}
	opts.Buffers = s.buffers()
	ts, err := tools.Build(s.tools, s.cwd, opts)
	if err != nil {
		return nil, err
	}
	return tools.NewSet(ts...)
}

// approverOf returns the session's approver: it asks the host
// (Options.Approve), remembering "allow always" answers.
func (s *Session) approverOf() tools.Approver { return &approver{s: s} }

// toolSet returns the current tool set: the built-in tools and the
// current tools of the MCP servers.
func (s *Session) toolSet() *tools.Set {
	s.mu.Lock()
	base, preset := s.toolset, s.preset
	s.mu.Unlock()
	return s.withMCP(base, preset)
}

// lookupTool returns the session's tool called name.
func (s *Session) lookupTool(name string) (tools.Tool, bool) { return s.toolSet().Lookup(name) }

// Model returns the session's model, nil if none.
func (s *Session) Model() models.Model {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model
}

// SetModel changes the model used by later prompts.
func (s *Session) SetModel(m models.Model) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.model = m
}

// History returns a copy of the conversation so far.
func (s *Session) History() []models.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.history)
}

func (s *Session) appendHistory(m models.Message) {
	if len(m.Parts) == 0 {
		return
	}
	s.mu.Lock()
	s.history = append(s.history, m)
	s.mu.Unlock()
	s.journal.append(record{Type: recMessage, Message: &m})
}

func (s *Session) maxTurnRequests() int { return s.opts.MaxTurnRequests }

// Cancel ends every operation in flight (tool calls, pending approvals);
// the session stays usable.
func (s *Session) Cancel() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancelTurn()
	if !s.closed {
		s.turn, s.cancelTurn = context.WithCancel(s.life)
	}
}

// Close ends this opener's use of the session: it cancels the operations
// it started and waits for them to end, and its handlers get no more
// events. When no other opener has the session attached, Close also
// cancels all its work, waits for it and frees the session. Later calls
// of this Session's methods fail.
func (s *Session) Close() {
	s.mu.Lock()
	if s.h.closed {
		s.mu.Unlock()
		return
	}
	s.h.closed = true
	s.refs--
	last := s.refs == 0
	if last {
		s.closed = true
	}
	s.mu.Unlock()
	s.h.closeLife()
	s.h.ops.Wait()
	s.removeSink(s.h.sink)
	if !last {
		return
	}
	s.finish()
}

// finish ends the session for every opener: it cancels all its work,
// waits for it, stops its subscribers' goroutines and its MCP servers, and
// frees it. It runs once, at the last Close or at Env.Shutdown.
func (st *state) finish() {
	st.finishOnce.Do(func() {
		st.mu.Lock()
		st.closed = true
		st.mu.Unlock()
		st.env.unregister(st)
		st.closeLife()
		st.ops.Wait()
		s := &Session{state: st}
		st.mcp.Close()
		s.closeSinks()
		st.journal.close()
		s.closeSync()
	})
}

func (s *Session) closeSync() {
	if s.sync != nil {
		if err := s.sync.Close(); err != nil {
			s.env.Logger.Debug("closing the file watcher", "err", err)
		}
	}
}

// begin starts an operation: its context ends with ctx, with Cancel and
// with Close. done must be called when the operation ends.
func (s *Session) begin(ctx context.Context) (context.Context, func(), error) {
	s.mu.Lock()
	if s.closed || s.h.closed {
		s.mu.Unlock()
		return nil, nil, fmt.Errorf("session %s is closed", s.id)
	}
	turn := s.turn
	s.ops.Add(1)
	s.h.ops.Add(1)
	s.mu.Unlock()
	caller := ctx
	ctx, cancel := context.WithCancel(context.WithValue(ctx, handleKey{}, s.h))
	stop := context.AfterFunc(turn, cancel)
	stopHandle := context.AfterFunc(s.h.life, cancel)
	ctx, untrack := s.env.track(ctx)
	return ctx, func() {
		// The opener's own handler has every event of the operation
		// before the operation returns.
		s.h.sink.flush(caller)
		untrack()
		stop()
		stopHandle()
		cancel()
		s.h.ops.Done()
		s.ops.Done()
	}, nil
}

// emit records an event for replay and publishes it.
func (s *Session) emit(ev Event) { s.publish(ev, true) }

// send publishes an event without recording it: live progress that a
// replay does not need.
func (s *Session) send(ev Event) { s.publish(ev, false) }

// CallTool runs one of the session's tools directly, as the model would:
// under the session's preset, approvals, serialization and buffers, with
// the same tool_call / tool_call_update updates. A tool that is not enabled
// is a *ParamError; a failed tool is a result with IsError.
func (s *Session) CallTool(ctx context.Context, name string, args json.RawMessage) (tools.Result, error) {
	t, ok := s.lookupTool(name)
	if !ok {
		if _, err := tools.Select([]string{name}); err != nil {
			return tools.Result{}, &ParamError{Field: "name", Msg: err.Error()}
		}
		return tools.Result{}, &ParamError{Field: "name", Msg: fmt.Sprintf("tool %q is not enabled in this session (enabled: %s)", name, strings.Join(s.toolSet().Names(), ", "))}
	}
	ctx, done, err := s.begin(ctx)
	if err != nil {
		return tools.Result{}, err
	}
	defer done()
	id := newID("call")
	s.emit(&ToolCallStarted{
		CallID: id,
		Tool:   name,
		Title:  tools.CallTitle(t, string(args)),
		Kind:   t.Kind(),
		Input:  rawJSON(args),
	})
	return s.dispatch(ctx, id, t, args), nil
}

// dispatch validates the arguments of a call that was announced with a
// tool_call update (pending), then runs it. An invalid call goes from
// pending to failed, with the error as its result; it never starts.
func (s *Session) dispatch(ctx context.Context, id string, t tools.Tool, args json.RawMessage) tools.Result {
	in, err := t.Validate(args)
	if err != nil {
		res := tools.ErrorResult(err)
		s.emit(finalUpdate(id, rawJSON(args), res, nil))
		return res
	}
	return s.runTool(ctx, id, t, args, in)
}

// runTool executes a validated tool call and reports its progress and
// outcome as tool_call_updates.
func (s *Session) runTool(ctx context.Context, id string, t tools.Tool, args json.RawMessage, in any) tools.Result {
	// The call is in progress once the tool says its work begins: after
	// any approval it asked for, so that a permission request is always
	// about a pending call. A tool that reports progress without saying so
	// has started too.
	var once sync.Once
	started := func() { once.Do(func() { s.emit(&ToolCallUpdated{CallID: id, Status: StatusInProgress}) }) }
	endCall := s.watchCall(ctx, id, t)
	res := tools.Run(ctx, t, tools.Call{ID: id, Args: args, Input: in, Started: started, Progress: func(p tools.Progress) {
		started()
		s.send(&ToolCallUpdated{CallID: id, Progress: &p})
	}})
	if s.sync != nil {
		// Our own writes stay attributed to this call even when the
		// watcher sees them after the call ended.
		for _, ch := range res.Changes {
			s.sync.RecordWrite(ch.Path, sha256Hex(ch.NewText), id, t.Name())
		}
	}
	diffs := endCall()
	s.emit(finalUpdate(id, args, res, diffs))
	return res
}

// finalUpdate is the completed or failed end of a call with a result: its
// text, a diff for every changed file, the locations, the final arguments
// and the tool's details.
func finalUpdate(id string, args json.RawMessage, res tools.Result, diffs []editorsync.FileDiff) *ToolCallFinished {
	u := &ToolCallFinished{
		CallID: id,
		Status: StatusCompleted,
		Input:  rawJSON(args),
	}
	if res.IsError {
		u.Status = StatusFailed
	}
	for _, c := range res.Content {
		if c.Type == "" || c.Type == ContentText {
			u.Text = append(u.Text, c.Text)
			continue
		}
		// An MCP tool's image, audio, resource link or resource.
		m := Content{Type: c.Type, Data: c.Data, MimeType: c.MimeType, URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description, Size: c.Size}
		if r := c.Resource; r != nil {
			m.Resource = &Resource{URI: r.URI, MimeType: r.MimeType, Text: r.Text, Blob: r.Blob}
		}
		u.Media = append(u.Media, m)
	}
	for _, ch := range res.Changes {
		u.Diffs = append(u.Diffs, Diff{Path: ch.Path, OldText: ch.OldText, NewText: ch.NewText})
		u.Locations = append(u.Locations, Location{Path: ch.Path, Line: max(ch.Line, 1)})
	}
	addDiffs(u, &res, diffs)
	if raw, err := marshalNoEscape(res.Details); err == nil {
		u.Details = raw
	}
	return u
}

// rawJSON returns args as JSON for rawInput, {} when empty or invalid.
func rawJSON(args json.RawMessage) json.RawMessage {
	if len(args) == 0 || !json.Valid(args) {
		return json.RawMessage(`{}`)
	}
	return args
}
