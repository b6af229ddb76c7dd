package web

import (
	"context"

	"github.com/coding-agent/coding-agent/rpc"
)

// conn is the rpc.Agent of one WebSocket connection: every method is the
// shared [session.Agent]'s, plus the bookkeeping of which sessions this tab
// watches.
type conn struct {
	h      *hub
	client rpc.Client
	out    *outbox // live updates, in order
}

var _ rpc.Agent = (*conn)(nil)

func (c *conn) Initialize(ctx context.Context, req *rpc.InitializeRequest) (*rpc.InitializeResponse, error) {
	return c.h.agent.Initialize(ctx, req)
}

// Authenticate and Logout act on the data directory's stored
// credentials, shared by every tab.
func (c *conn) Authenticate(ctx context.Context, req *rpc.AuthenticateRequest) (*rpc.AuthenticateResponse, error) {
	return c.h.agent.Authenticate(ctx, req)
}

func (c *conn) Logout(ctx context.Context, req *rpc.LogoutRequest) (*rpc.LogoutResponse, error) {
	return c.h.agent.Logout(ctx, req)
}

func (c *conn) NewSession(ctx context.Context, req *rpc.NewSessionRequest) (*rpc.NewSessionResponse, error) {
	resp, err := c.h.agent.NewSession(ctx, req)
	if err == nil {
		c.h.subscribe(c, resp.SessionID)
	}
	return resp, err
}

// LoadSession replays the history to this tab alone, then makes it a
// watcher of the session's live updates.
func (c *conn) LoadSession(ctx context.Context, req *rpc.LoadSessionRequest) (*rpc.LoadSessionResponse, error) {
	resp, err := c.h.agent.LoadSession(context.WithValue(ctx, replayKey{}, c), req)
	if err == nil {
		c.h.subscribe(c, req.SessionID)
	}
	return resp, err
}

func (c *conn) ResumeSession(ctx context.Context, req *rpc.ResumeSessionRequest) (*rpc.ResumeSessionResponse, error) {
	resp, err := c.h.agent.ResumeSession(ctx, req)
	if err == nil {
		c.h.subscribe(c, req.SessionID)
	}
	return resp, err
}

func (c *conn) ListSessions(ctx context.Context, req *rpc.ListSessionsRequest) (*rpc.ListSessionsResponse, error) {
	return c.h.agent.ListSessions(ctx, req)
}

// CloseSession stops this tab watching; the session itself closes when no
// other tab watches it.
func (c *conn) CloseSession(ctx context.Context, req *rpc.CloseSessionRequest) (*rpc.CloseSessionResponse, error) {
	if c.h.unsubscribe(c, req.SessionID) {
		return &rpc.CloseSessionResponse{}, nil
	}
	return c.h.agent.CloseSession(ctx, req)
}

func (c *conn) SetSessionMode(ctx context.Context, req *rpc.SetSessionModeRequest) (*rpc.SetSessionModeResponse, error) {
	return c.h.agent.SetSessionMode(ctx, req)
}

func (c *conn) SetSessionConfigOption(ctx context.Context, req *rpc.SetSessionConfigOptionRequest) (*rpc.SetSessionConfigOptionResponse, error) {
	return c.h.agent.SetSessionConfigOption(ctx, req)
}

// Prompt runs the turn for the session, not for this tab: a reload or a
// second tab keeps watching it. It ends with session/cancel, or when the
// last tab watching the session goes away.
//
// The turn's updates reach this tab before its answer, as they would on
// stdio: the answer waits for the tab's outbox.
func (c *conn) Prompt(ctx context.Context, req *rpc.PromptRequest) (*rpc.PromptResponse, error) {
	// The agent does not echo a prompt to the client that sent it (that
	// client shows it itself); the other tabs watching are shown it here.
	c.h.echoPrompt(c, req)
	resp, err := c.h.agent.Prompt(context.WithoutCancel(ctx), req)
	c.out.flush(ctx)
	return resp, err
}

func (c *conn) Cancel(ctx context.Context, n *rpc.CancelNotification) { c.h.agent.Cancel(ctx, n) }

func (c *conn) ToolsList(ctx context.Context, req *rpc.ToolsListRequest) (*rpc.ToolsListResponse, error) {
	return c.h.agent.ToolsList(ctx, req)
}

func (c *conn) ToolsCall(ctx context.Context, req *rpc.ToolsCallRequest) (*rpc.ToolsCallResponse, error) {
	return c.h.agent.ToolsCall(ctx, req)
}

func (c *conn) OutputsList(ctx context.Context, req *rpc.OutputsListRequest) (*rpc.OutputsListResponse, error) {
	return c.h.agent.OutputsList(ctx, req)
}

func (c *conn) OutputsRemove(ctx context.Context, req *rpc.OutputsRemoveRequest) (*rpc.OutputsRemoveResponse, error) {
	return c.h.agent.OutputsRemove(ctx, req)
}

func (c *conn) DidOpen(ctx context.Context, n *rpc.DidOpenNotification) { c.h.agent.DidOpen(ctx, n) }
func (c *conn) DidChange(ctx context.Context, n *rpc.DidChangeNotification) {
	c.h.agent.DidChange(ctx, n)
}
func (c *conn) DidSave(ctx context.Context, n *rpc.DidSaveNotification)   { c.h.agent.DidSave(ctx, n) }
func (c *conn) DidClose(ctx context.Context, n *rpc.DidCloseNotification) { c.h.agent.DidClose(ctx, n) }
