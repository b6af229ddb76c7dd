package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/coding-agent/coding-agent/session/display"
	"github.com/coding-agent/coding-agent/tools"
)

// approver asks the session's host about one change or command. It
// implements tools.Approver for the session's tools.
type approver struct{ s *Session }

// Approve asks the host (Options.Approve) and returns nil only when it
// allowed the request; a request allowed always before is allowed without
// asking. Every other outcome is an error that says which: rejected,
// cancelled, timed out, the host's error, or no host to ask.
func (a *approver) Approve(ctx context.Context, req tools.ApprovalRequest) error {
	s := a.s
	// The opener that started the operation decides, else the session's
	// creator.
	ask := s.opts.Approve
	h, _ := ctx.Value(handleKey{}).(*handle)
	if h != nil && h.approve != nil {
		ask = h.approve
	}
	if ask == nil {
		return errors.New("not allowed: there is no client to ask for approval")
	}
	key := approvalKey(req)
	s.mu.Lock()
	always := s.allowed[key]
	s.mu.Unlock()
	if always {
		return nil
	}
	r := s.approvalRequest(req)
	if h != nil {
		// The opener has seen the call it is asked about.
		h.sink.flush(ctx)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, s.opts.ApprovalTimeout, errApprovalTimeout)
	defer cancel()
	d, err := ask(ctx, r)
	switch {
	case errors.Is(context.Cause(ctx), errApprovalTimeout):
		return fmt.Errorf("not allowed: the approval request timed out after %s without an answer", s.opts.ApprovalTimeout)
	case ctx.Err() != nil:
		return fmt.Errorf("not allowed: the approval request was cancelled: %w", context.Canceled)
	case err != nil:
		return fmt.Errorf("not allowed: %v", err)
	}
	switch d {
	case AllowOnce:
		return nil
	case AllowAlways:
		s.mu.Lock()
		if s.allowed == nil {
			s.allowed = map[string]bool{}
		}
		s.allowed[key] = true
		s.mu.Unlock()
		// It stays with the session when it is loaded again.
		s.journal.append(record{Type: recAllow, Allow: key})
		return nil
	}
	return errors.New("not allowed: the user rejected it")
}

var errApprovalTimeout = errors.New("approval timed out")

// approvalKey identifies what an "allow always" allows again: the same
// tool changing the same file, or the same command line escalated.
func approvalKey(req tools.ApprovalRequest) string {
	target := req.Command
	if req.Change != nil {
		target = req.Change.Path
	}
	return req.Kind + "\x00" + req.Tool + "\x00" + target
}

// approvalRequest is the SDK's form of a tool's approval request.
func (s *Session) approvalRequest(req tools.ApprovalRequest) *ApprovalRequest {
	r := &ApprovalRequest{
		SessionID:     s.id,
		CallID:        req.CallID,
		Tool:          req.Tool,
		Title:         req.Tool,
		Kind:          tools.KindOther,
		Request:       req.Kind,
		Diff:          req.Diff,
		Command:       req.Command,
		Justification: req.Justification,
		Reason:        req.Reason,
		Input:         req.Args,
		Server:        req.Server,
		MCPTool:       req.MCPTool,
	}
	if t, ok := s.lookupTool(req.Tool); ok {
		r.Title, r.Kind = display.Title(tools.CallTitle(t, string(req.Args))), t.Kind()
	}
	if c := req.Change; c != nil {
		r.Path = c.Path
		r.Change = &Diff{Path: c.Path, OldText: c.OldText, NewText: c.NewText}
	}
	return r
}
