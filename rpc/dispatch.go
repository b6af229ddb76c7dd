package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// callFunc decodes params, checks them and calls the agent.
type callFunc func(ctx context.Context, a Agent, params json.RawMessage) (any, error)

// notifyFunc decodes params, checks them and calls the agent.
type notifyFunc func(ctx context.Context, a Agent, params json.RawMessage) error

// Method names of the client → agent direction.
const (
	MethodInitialize             = "initialize"
	MethodAuthenticate           = "authenticate"
	MethodLogout                 = "logout"
	MethodSessionNew             = "session/new"
	MethodSessionLoad            = "session/load"
	MethodSessionResume          = "session/resume"
	MethodSessionList            = "session/list"
	MethodSessionClose           = "session/close"
	MethodSessionSetMode         = "session/set_mode"
	MethodSessionSetConfigOption = "session/set_config_option"
	MethodSessionPrompt          = "session/prompt"
	MethodSessionCancel          = "session/cancel"
	MethodToolsList              = "_coding-agent/tools/list"
	MethodToolsCall              = "_coding-agent/tools/call"
	MethodOutputsList            = "_coding-agent/outputs/list"
	MethodOutputsRemove          = "_coding-agent/outputs/remove"
	MethodDidOpen                = "document/didOpen"
	MethodDidChange              = "document/didChange"
	MethodDidSave                = "document/didSave"
	MethodDidClose               = "document/didClose"
	methodCancelRequestACP       = "$/cancel_request"
	methodCancelRequestLSP       = "$/cancelRequest"
)

// Method names of the agent → client direction.
const (
	MethodSessionUpdate     = "session/update"
	MethodRequestPermission = "session/request_permission"
	MethodFilesChanged      = "_coding-agent/files_changed"
)

// newCallTable returns the request methods. Required lists the top-level
// params members that must be present and not null; it is checked before
// decoding so the error names the missing member.
func newCallTable() map[string]callFunc {
	return map[string]callFunc{
		MethodInitialize:             call([]string{"protocolVersion"}, Agent.Initialize),
		MethodAuthenticate:           call([]string{"methodId"}, Agent.Authenticate),
		MethodLogout:                 call(nil, Agent.Logout),
		MethodSessionNew:             call([]string{"cwd"}, Agent.NewSession),
		MethodSessionLoad:            call([]string{"sessionId", "cwd"}, Agent.LoadSession),
		MethodSessionResume:          call([]string{"sessionId", "cwd"}, Agent.ResumeSession),
		MethodSessionList:            call(nil, Agent.ListSessions),
		MethodSessionClose:           call([]string{"sessionId"}, Agent.CloseSession),
		MethodSessionSetMode:         call([]string{"sessionId", "modeId"}, Agent.SetSessionMode),
		MethodSessionSetConfigOption: call([]string{"sessionId", "configId", "value"}, Agent.SetSessionConfigOption),
		MethodSessionPrompt:          call([]string{"sessionId", "prompt"}, Agent.Prompt),
		MethodToolsList:              call(nil, Agent.ToolsList),
		MethodToolsCall:              call([]string{"name"}, Agent.ToolsCall),
		MethodOutputsList:            call(nil, Agent.OutputsList),
		MethodOutputsRemove:          call(nil, Agent.OutputsRemove),
	}
}

// newNotifyTable returns the notification methods.
func newNotifyTable() map[string]notifyFunc {
	return map[string]notifyFunc{
		MethodSessionCancel: notify([]string{"sessionId"}, Agent.Cancel),
		MethodDidOpen:       notify([]string{"sessionId", "uri", "version", "text"}, Agent.DidOpen),
		MethodDidChange:     notify([]string{"sessionId", "uri", "version", "contentChanges"}, Agent.DidChange),
		MethodDidSave:       notify([]string{"sessionId", "uri"}, Agent.DidSave),
		MethodDidClose:      notify([]string{"sessionId", "uri"}, Agent.DidClose),
	}
}

// checker is implemented by params types with rules beyond JSON types.
type checker interface {
	check() *Error
}

func call[Req, Resp any](required []string, fn func(Agent, context.Context, *Req) (*Resp, error)) callFunc {
	return func(ctx context.Context, a Agent, params json.RawMessage) (any, error) {
		req := new(Req)
		if err := decodeParams(params, required, req); err != nil {
			return nil, err
		}
		resp, err := fn(a, ctx, req)
		if err != nil {
			return nil, err
		}
		if resp == nil {
			return json.RawMessage(`{}`), nil
		}
		return resp, nil
	}
}

func notify[N any](required []string, fn func(Agent, context.Context, *N)) notifyFunc {
	return func(ctx context.Context, a Agent, params json.RawMessage) error {
		n := new(N)
		if err := decodeParams(params, required, n); err != nil {
			return err
		}
		fn(a, ctx, n)
		return nil
	}
}

// decodeParams decodes params into v. Every failure is a [CodeInvalidParams]
// error whose message names the member at fault.
func decodeParams(params json.RawMessage, required []string, v any) *Error {
	params = bytes.TrimSpace(params)
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage(`{}`)
	}
	if params[0] != '{' {
		return InvalidParams("params", "must be an object")
	}
	if len(required) > 0 {
		var members map[string]json.RawMessage
		if err := json.Unmarshal(params, &members); err != nil {
			return InvalidParams("params", err.Error())
		}
		for _, name := range required {
			if raw, ok := members[name]; !ok || string(bytes.TrimSpace(raw)) == "null" {
				return InvalidParams(name, "required")
			}
		}
	}
	if err := json.Unmarshal(params, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := te.Field
			if field == "" {
				field = "params"
			}
			return InvalidParams(field, fmt.Sprintf("expected %s, got %s", jsonKind(te.Type.Kind().String()), te.Value))
		}
		return InvalidParams("params", err.Error())
	}
	if c, ok := v.(checker); ok {
		if e := c.check(); e != nil {
			return e
		}
	}
	return nil
}

// jsonKind names a Go kind the way a JSON user thinks of it.
func jsonKind(k string) string {
	switch {
	case k == "string":
		return "a string"
	case k == "bool":
		return "a boolean"
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "uint"), strings.HasPrefix(k, "float"):
		return "a number"
	case k == "slice", k == "array":
		return "an array"
	case k == "struct", k == "map", k == "ptr":
		return "an object"
	}
	return k
}

func nonEmpty(field, v string) *Error {
	if v == "" {
		return InvalidParams(field, "must not be empty")
	}
	return nil
}

func absPath(field, v string) *Error {
	if v == "" {
		return InvalidParams(field, "must not be empty")
	}
	if !filepath.IsAbs(v) {
		return InvalidParams(field, fmt.Sprintf("must be an absolute path, got %q", v))
	}
	return nil
}

func checkDirs(dirs []string) *Error {
	for i, d := range dirs {
		if e := absPath(fmt.Sprintf("additionalDirectories[%d]", i), d); e != nil {
			return e
		}
	}
	return nil
}

func checkPreset(field, p string) *Error {
	switch p {
	case "", PresetReadOnly, PresetWorkspaceWrite, PresetFullAccess:
		return nil
	}
	return InvalidParams(field, fmt.Sprintf("unknown preset %q; valid presets: %s, %s, %s",
		p, PresetReadOnly, PresetWorkspaceWrite, PresetFullAccess))
}

func checkMeta(m *SessionMeta) *Error {
	o := m.Options()
	if o == nil {
		return nil
	}
	if e := checkPreset("_meta.coding-agent.preset", o.Preset); e != nil {
		return e
	}
	if o.ApprovalTimeoutSeconds != nil && !(*o.ApprovalTimeoutSeconds > 0) {
		return InvalidParams("_meta.coding-agent.approvalTimeoutSeconds", "must be a positive number")
	}
	return nil
}

func (r *InitializeRequest) check() *Error {
	if r.ProtocolVersion < 0 || r.ProtocolVersion > 65535 {
		return InvalidParams("protocolVersion", "must be between 0 and 65535")
	}
	return nil
}

func (r *NewSessionRequest) check() *Error {
	return checkSetup(r.Cwd, r.AdditionalDirectories, r.Meta)
}

func (r *LoadSessionRequest) check() *Error {
	if e := nonEmpty("sessionId", r.SessionID); e != nil {
		return e
	}
	return checkSetup(r.Cwd, r.AdditionalDirectories, r.Meta)
}

func (r *ResumeSessionRequest) check() *Error {
	if e := nonEmpty("sessionId", r.SessionID); e != nil {
		return e
	}
	return checkSetup(r.Cwd, r.AdditionalDirectories, r.Meta)
}

// checkSetup checks what session/new, load and resume share.
func checkSetup(cwd string, dirs []string, meta *SessionMeta) *Error {
	if e := absPath("cwd", cwd); e != nil {
		return e
	}
	if e := checkDirs(dirs); e != nil {
		return e
	}
	return checkMeta(meta)
}

func (r *CloseSessionRequest) check() *Error { return nonEmpty("sessionId", r.SessionID) }

func (r *SetSessionModeRequest) check() *Error {
	if e := nonEmpty("sessionId", r.SessionID); e != nil {
		return e
	}
	return nonEmpty("modeId", r.ModeID)
}

func (r *SetSessionConfigOptionRequest) check() *Error {
	if e := nonEmpty("sessionId", r.SessionID); e != nil {
		return e
	}
	return nonEmpty("configId", r.ConfigID)
}

func (r *PromptRequest) check() *Error {
	if e := nonEmpty("sessionId", r.SessionID); e != nil {
		return e
	}
	for i := range r.Prompt {
		if e := r.Prompt[i].check(fmt.Sprintf("prompt[%d]", i)); e != nil {
			return e
		}
	}
	return nil
}

func (r *ToolsCallRequest) check() *Error {
	if e := nonEmpty("name", r.Name); e != nil {
		return e
	}
	if r.SessionID == "" {
		if r.Cwd == "" {
			return InvalidParams("cwd", "required when sessionId is absent")
		}
	}
	if r.Cwd != "" {
		if e := absPath("cwd", r.Cwd); e != nil {
			return e
		}
	}
	if a := bytes.TrimSpace(r.Arguments); len(a) > 0 && a[0] != '{' && string(a) != "null" {
		return InvalidParams("arguments", "must be an object")
	}
	return checkPreset("preset", r.Preset)
}

func (r *OutputsRemoveRequest) check() *Error {
	if (r.Path == "") == !r.All {
		return InvalidParams("path", `give exactly one of "path" and "all": true`)
	}
	return nil
}

func (n *CancelNotification) check() *Error { return nonEmpty("sessionId", n.SessionID) }

func (n *DidOpenNotification) check() *Error {
	if e := nonEmpty("sessionId", n.SessionID); e != nil {
		return e
	}
	return nonEmpty("uri", n.URI)
}

func (n *DidChangeNotification) check() *Error {
	if e := nonEmpty("sessionId", n.SessionID); e != nil {
		return e
	}
	return nonEmpty("uri", n.URI)
}

func (n *DidSaveNotification) check() *Error {
	if e := nonEmpty("sessionId", n.SessionID); e != nil {
		return e
	}
	return nonEmpty("uri", n.URI)
}

func (n *DidCloseNotification) check() *Error {
	if e := nonEmpty("sessionId", n.SessionID); e != nil {
		return e
	}
	return nonEmpty("uri", n.URI)
}
