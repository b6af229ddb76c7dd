package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/coding-agent/coding-agent/rpc"
	"github.com/coding-agent/coding-agent/tools"
)

// Agent serves one ACP connection: it implements rpc.Agent on top of
// sessions of an [Env]. Create it with [NewAgent].
type Agent struct {
	env    *Env
	client rpc.Client

	// mu guards the fields below.
	mu       sync.Mutex
	sessions map[string]*agentSession
}

// agentSession is a session of this connection.
type agentSession struct {
	*Session
	created time.Time
}

var _ rpc.Agent = (*Agent)(nil)

// NewAgent returns the agent of one connection to client.
func NewAgent(env *Env, client rpc.Client) *Agent {
	env.init()
	return &Agent{env: env, client: client, sessions: map[string]*agentSession{}}
}

// Close closes every session of the connection, cancelling their work.
func (a *Agent) Close() {
	a.mu.Lock()
	ss := a.sessions
	a.sessions = map[string]*agentSession{}
	a.mu.Unlock()
	for _, s := range ss {
		s.Close()
	}
}

// Initialize answers initialize (PROTOCOL.md §2). Version negotiation: this
// agent speaks version 1 whatever the client asks for.
func (a *Agent) Initialize(ctx context.Context, req *rpc.InitializeRequest) (*rpc.InitializeResponse, error) {
	st := a.env.sandboxStatus(ctx)
	return &rpc.InitializeResponse{
		ProtocolVersion: rpc.ProtocolVersion,
		AgentInfo:       &rpc.Implementation{Name: "coding-agent", Title: "coding-agent", Version: a.env.Version},
		AgentCapabilities: rpc.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: rpc.PromptCapabilities{Image: true, EmbeddedContext: true},
			SessionCapabilities: &rpc.SessionCapabilities{
				List: &rpc.Empty{}, Resume: &rpc.Empty{}, Close: &rpc.Empty{},
			},
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
	if len(req.MCPServers) > 0 {
		a.env.Logger.Warn("MCP servers are not supported yet; not starting them", "servers", mcpNames(req.MCPServers))
	}
	var sid string
	opts.OnUpdate = func(u rpc.SessionUpdate) {
		// Notifications are written in order; a closed connection only
		// loses updates nobody can read any more.
		if err := a.client.SessionUpdate(context.Background(), &rpc.SessionNotification{SessionID: sid, Update: u}); err != nil {
			a.env.Logger.Debug("session/update not sent", "session", sid, "err", err)
		}
	}
	opts.RequestPermission = a.client.RequestPermission
	s, err := a.env.NewSession(opts)
	if err != nil {
		return nil, paramErr(err, "")
	}
	sid = s.ID()
	a.mu.Lock()
	a.sessions[sid] = &agentSession{Session: s, created: time.Now()}
	a.mu.Unlock()
	a.env.Logger.Info("session created", "session", sid, "cwd", s.Cwd(), "preset", s.Preset(), "tools", s.Tools())
	return &rpc.NewSessionResponse{SessionID: sid, Modes: modeState(s.Preset()), ConfigOptions: configOptions(s.Preset())}, nil
}

// mcpNames lists the names of MCP server configurations for the log.
func mcpNames(servers []json.RawMessage) []string {
	var names []string
	for _, raw := range servers {
		var s struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(raw, &s)
		names = append(names, s.Name)
	}
	return names
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

// LoadSession answers session/load for a session of this process. Stored
// sessions and history replay come with persistence (the agent-loop work);
// until then an unknown id is "not found".
func (a *Agent) LoadSession(ctx context.Context, req *rpc.LoadSessionRequest) (*rpc.LoadSessionResponse, error) {
	s, err := a.session(req.SessionID)
	if err != nil {
		return nil, err
	}
	return &rpc.LoadSessionResponse{Modes: modeState(s.Preset()), ConfigOptions: configOptions(s.Preset())}, nil
}

// ResumeSession answers session/resume for a session of this process.
func (a *Agent) ResumeSession(ctx context.Context, req *rpc.ResumeSessionRequest) (*rpc.ResumeSessionResponse, error) {
	s, err := a.session(req.SessionID)
	if err != nil {
		return nil, err
	}
	return &rpc.ResumeSessionResponse{Modes: modeState(s.Preset()), ConfigOptions: configOptions(s.Preset())}, nil
}

// ListSessions answers session/list with the sessions of this connection,
// newest first, optionally only those in cwd.
func (a *Agent) ListSessions(ctx context.Context, req *rpc.ListSessionsRequest) (*rpc.ListSessionsResponse, error) {
	a.mu.Lock()
	ss := make([]*agentSession, 0, len(a.sessions))
	for _, s := range a.sessions {
		if req.Cwd == "" || s.Cwd() == req.Cwd {
			ss = append(ss, s)
		}
	}
	a.mu.Unlock()
	sort.Slice(ss, func(i, j int) bool { return ss[i].created.After(ss[j].created) })
	resp := &rpc.ListSessionsResponse{}
	for _, s := range ss {
		resp.Sessions = append(resp.Sessions, rpc.SessionInfo{
			SessionID:             s.ID(),
			Cwd:                   s.Cwd(),
			UpdatedAt:             s.created.UTC().Format(time.RFC3339),
			AdditionalDirectories: s.Roots()[1:],
		})
	}
	return resp, nil
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
		return nil, rpc.InvalidParams("value", fmt.Sprintf("model %q is not configured (no models are configured)", req.Value))
	default:
		return nil, rpc.InvalidParams("configId", fmt.Sprintf("unknown config option %q (valid: preset, model)", req.ConfigID))
	}
	return &rpc.SetSessionConfigOptionResponse{ConfigOptions: configOptions(s.Preset())}, nil
}

// setPreset changes the session's preset and confirms the change with
// current_mode_update and config_option_update.
func (a *Agent) setPreset(s *agentSession, value, field string) error {
	p, err := tools.ParsePreset(value)
	if err != nil || value == "" {
		return rpc.InvalidParams(field, fmt.Sprintf("unknown mode %q (valid: read-only, workspace-write, full-access)", value))
	}
	if _, err := s.SetPreset(p); err != nil {
		return rpc.InvalidParams(field, err.Error())
	}
	a.env.Logger.Info("session preset changed", "session", s.ID(), "preset", p)
	s.emit(&rpc.CurrentModeUpdate{CurrentModeID: string(p)})
	s.emit(&rpc.ConfigOptionUpdate{ConfigOptions: configOptions(p)})
	return nil
}

// Prompt answers session/prompt. No model provider is configured in this
// build of the session layer, so every prompt gets -32010 (PROTOCOL.md §11).
func (a *Agent) Prompt(ctx context.Context, req *rpc.PromptRequest) (*rpc.PromptResponse, error) {
	if _, err := a.session(req.SessionID); err != nil {
		return nil, err
	}
	return nil, rpc.NoModel("no model configured: set --model PROVIDER/MODEL or CODING_AGENT_MODEL, with ANTHROPIC_API_KEY or OPENAI_API_KEY (and OPENAI_BASE_URL for a local server)",
		[]string{"CODING_AGENT_MODEL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"})
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
	dir, err := os.Getwd()
	if err != nil {
		dir = "/"
	}
	resp := &rpc.ToolsListResponse{}
	for _, name := range tools.Builtins() {
		t, err := tools.New(name, dir, tools.Options{})
		if err != nil {
			return nil, err
		}
		resp.Tools = append(resp.Tools, rpc.ToolInfo{Name: t.Name(), Title: t.Title(), Description: t.Description(), InputSchema: t.Schema()})
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
	if raw, err := json.Marshal(res.Details); err == nil {
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
func (a *Agent) DidOpen(ctx context.Context, n *rpc.DidOpenNotification) {}

// DidChange handles document/didChange.
func (a *Agent) DidChange(ctx context.Context, n *rpc.DidChangeNotification) {}

// DidSave handles document/didSave.
func (a *Agent) DidSave(ctx context.Context, n *rpc.DidSaveNotification) {}

// DidClose handles document/didClose.
func (a *Agent) DidClose(ctx context.Context, n *rpc.DidCloseNotification) {}

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
var presetModes = []rpc.SessionMode{
	{ID: string(tools.ReadOnly), Name: "Read only", Description: "Tools may read anywhere; edits, writes and commands that write outside a private temp directory need approval."},
	{ID: string(tools.WorkspaceWrite), Name: "Workspace write", Description: "Edits and sandboxed commands may write inside the workspace; anything else needs approval."},
	{ID: string(tools.FullAccess), Name: "Full access", Description: "No sandbox: commands and edits run with your permissions. Protected storage (.git, the agent's data) stays protected."},
}

func modeState(p tools.Preset) *rpc.SessionModeState {
	return &rpc.SessionModeState{CurrentModeID: string(p), AvailableModes: slices.Clone(presetModes)}
}

// configOptions is the full list of the session's config options: the
// preset (category mode) and the model (category model).
func configOptions(p tools.Preset) []rpc.SessionConfigOption {
	preset := rpc.SessionConfigOption{
		ID: "preset", Name: "Permissions", Category: rpc.ConfigCategoryMode, Type: rpc.ConfigTypeSelect,
		CurrentValue: string(p),
	}
	for _, m := range presetModes {
		preset.Options = append(preset.Options, rpc.SessionConfigSelectOption{Value: m.ID, Name: m.Name, Description: m.Description})
	}
	model := rpc.SessionConfigOption{
		ID: "model", Name: "Model", Category: rpc.ConfigCategoryModel, Type: rpc.ConfigTypeSelect,
		Options: []rpc.SessionConfigSelectOption{},
	}
	return []rpc.SessionConfigOption{preset, model}
}
