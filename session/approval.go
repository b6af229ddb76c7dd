package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/coding-agent/coding-agent/rpc"
	"github.com/coding-agent/coding-agent/tools"
)

// The permission options offered for every request (PROTOCOL.md §6).
var permissionOptions = []rpc.PermissionOption{
	{OptionID: rpc.PermissionAllowOnce, Name: "Allow once", Kind: rpc.PermissionAllowOnce},
	{OptionID: rpc.PermissionRejectOnce, Name: "Reject", Kind: rpc.PermissionRejectOnce},
}

// The options of a request to call an MCP tool (PROTOCOL.md §6): allow
// always means this tool, for the rest of this session.
var mcpPermissionOptions = []rpc.PermissionOption{
	{OptionID: rpc.PermissionAllowOnce, Name: "Allow once", Kind: rpc.PermissionAllowOnce},
	{OptionID: rpc.PermissionAllowAlways, Name: "Always allow this tool in this session", Kind: rpc.PermissionAllowAlways},
	{OptionID: rpc.PermissionRejectOnce, Name: "Reject", Kind: rpc.PermissionRejectOnce},
}

// approver asks the session's host about one change or command. It
// implements tools.Approver.
type approver struct{ s *Session }

// approvalMeta is _meta["coding-agent"] of a permission request.
type approvalMeta struct {
	Justification string `json:"justification,omitempty"`
	Reason        string `json:"reason"`
	Request       string `json:"request"`
}

// Approve sends session/request_permission and returns nil only when the
// client selected allow_once. Every other outcome is an error that says
// which: rejected, cancelled, timed out, an error answer, an unknown option,
// or no client to ask.
func (a *approver) Approve(ctx context.Context, req tools.ApprovalRequest) error {
	s := a.s
	mcpCall := req.Kind == tools.RequestMCPTool
	if mcpCall && s.alwaysAllowed(req.Tool) {
		return nil
	}
	if s.opts.RequestPermission == nil {
		return errors.New("not allowed: there is no client to ask for approval")
	}
	p := &rpc.RequestPermissionRequest{
		SessionID: s.id,
		ToolCall:  s.permissionToolCall(req),
		Options:   permissionOptions,
	}
	if mcpCall {
		p.Options = mcpPermissionOptions
	}
	ctx, cancel := context.WithTimeoutCause(ctx, s.opts.ApprovalTimeout, errApprovalTimeout)
	defer cancel()
	resp, err := s.opts.RequestPermission(ctx, p)
	switch {
	case errors.Is(context.Cause(ctx), errApprovalTimeout):
		return fmt.Errorf("not allowed: the approval request timed out after %s without an answer", s.opts.ApprovalTimeout)
	case ctx.Err() != nil:
		return fmt.Errorf("not allowed: the approval request was cancelled: %w", context.Canceled)
	case err != nil:
		return fmt.Errorf("not allowed: the client answered the approval request with an error: %v", err)
	}
	switch o := resp.Outcome; {
	case o.Outcome == rpc.OutcomeCancelled:
		return errors.New("not allowed: the approval request was cancelled by the client")
	case o.Outcome != rpc.OutcomeSelected:
		return fmt.Errorf("not allowed: the client answered with unknown outcome %q", o.Outcome)
	case o.OptionID == rpc.PermissionAllowOnce:
		return nil
	case o.OptionID == rpc.PermissionAllowAlways && mcpCall:
		s.allowAlways(req.Tool)
		return nil
	case o.OptionID == rpc.PermissionRejectOnce:
		return errors.New("not allowed: the user rejected it")
	default:
		return fmt.Errorf("not allowed: the client selected unknown option %q", o.OptionID)
	}
}

var errApprovalTimeout = errors.New("approval timed out")

// permissionToolCall is the toolCall of a permission request: the call's
// title, kind and arguments, the diff or the command, and the justification
// (or the policy's reason) as plain text.
func (s *Session) permissionToolCall(req tools.ApprovalRequest) rpc.ToolCallUpdate {
	var content []rpc.ToolCallContent
	if c := req.Change; c != nil {
		content = append(content, rpc.DiffContent(c.Path, c.OldText, c.NewText))
	}
	if req.Command != "" {
		content = append(content, rpc.TextContent("$ "+req.Command))
	}
	if req.Kind == tools.RequestMCPTool {
		content = append(content, rpc.TextContent(mcpPermission(mcpRequest{Server: req.Server, Tool: req.MCPTool, Args: req.Args})))
	}
	text := req.Reason
	if req.Justification != "" {
		text = req.Justification
	}
	content = append(content, rpc.TextContent(text))
	meta, _ := json.Marshal(map[string]approvalMeta{"coding-agent": {
		Justification: req.Justification,
		Reason:        req.Reason,
		Request:       req.Kind,
	}})
	title, kind := req.Tool, tools.KindOther
	if t, ok := s.lookupTool(req.Tool); ok {
		title, kind = tools.CallTitle(t, string(req.Args)), t.Kind()
	}
	return rpc.ToolCallUpdate{
		ToolCallID: req.CallID,
		Title:      title,
		Name:       req.Tool,
		Kind:       string(kind),
		Status:     rpc.ToolStatusPending,
		Content:    content,
		RawInput:   rawJSON(req.Args),
		Meta:       meta,
	}
}

// alwaysAllowed reports whether the user chose "always allow" for the MCP
// tool called name in this session.
func (s *Session) alwaysAllowed(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.allowed[name]
}

func (s *Session) allowAlways(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.allowed == nil {
		s.allowed = map[string]bool{}
	}
	s.allowed[name] = true
}
