package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/coding-agent/coding-agent/rpc"
	"github.com/coding-agent/coding-agent/session"
)

// hub lets several WebSocket connections (browser tabs) share the sessions
// of one [session.Agent]: the agent that serves editors, unchanged, whose
// rpc.Client is the hub. Each connection is its own rpc server (rpc.Serve
// over the WebSocket) whose rpc.Agent is a [conn] delegating to the shared
// agent; the hub sends each session's updates to every connection that
// created, loaded or resumed it, and asks every one of them for approvals
// (the first answer wins, the others are withdrawn with $/cancel_request).
//
// The session package has no registry of open sessions with several
// subscribers yet; when it does, the hub shrinks to one agent per
// connection on one Env.
type hub struct {
	agent  *session.Agent
	logger *slog.Logger
	echoes atomic.Int64 // ids of echoed prompts

	// mu guards the fields below.
	mu      sync.Mutex
	subs    map[string]map[*conn]struct{} // session id → watching connections
	pending map[string]map[*approval]struct{}
}

func newHub(env *session.Env, logger *slog.Logger) *hub {
	h := &hub{logger: logger, subs: map[string]map[*conn]struct{}{}, pending: map[string]map[*approval]struct{}{}}
	h.agent = session.NewAgent(env, h)
	return h
}

// close closes every session, cancelling its work.
func (h *hub) close() { h.agent.Close() }

// subscribe makes c receive the updates of session id, and asks it about
// the approvals that session is waiting for.
func (h *hub) subscribe(c *conn, id string) {
	h.mu.Lock()
	m := h.subs[id]
	if m == nil {
		m = map[*conn]struct{}{}
		h.subs[id] = m
	}
	_, had := m[c]
	m[c] = struct{}{}
	var waiting []*approval
	if !had {
		for a := range h.pending[id] {
			waiting = append(waiting, a)
		}
	}
	h.mu.Unlock()
	for _, a := range waiting {
		a.ask(c)
	}
}

// unsubscribe stops c's updates of session id and reports whether any
// connection still watches it.
func (h *hub) unsubscribe(c *conn, id string) (watched bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.subs[id]
	delete(m, c)
	if len(m) == 0 {
		delete(h.subs, id)
		return false
	}
	return true
}

// leave unsubscribes c from everything; the work of sessions nobody watches
// any more is cancelled, as an editor's disconnect cancels its turns.
func (h *hub) leave(c *conn) {
	h.mu.Lock()
	var ids []string
	for id, m := range h.subs {
		if _, ok := m[c]; ok {
			ids = append(ids, id)
		}
	}
	h.mu.Unlock()
	for _, id := range ids {
		if !h.unsubscribe(c, id) {
			h.agent.Cancel(context.Background(), &rpc.CancelNotification{SessionID: id})
		}
	}
}

func (h *hub) watchers(id string) []*conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*conn, 0, len(h.subs[id]))
	for c := range h.subs[id] {
		out = append(out, c)
	}
	return out
}

// echoPrompt shows a prompt that from sent to the session's other
// watchers, as the user_message_chunks the agent keeps for replay.
func (h *hub) echoPrompt(from *conn, req *rpc.PromptRequest) {
	id := fmt.Sprintf("msg_web_%d", h.echoes.Add(1))
	for _, c := range h.watchers(req.SessionID) {
		if c == from {
			continue
		}
		for _, b := range req.Prompt {
			n := &rpc.SessionNotification{SessionID: req.SessionID, Update: &rpc.UserMessageChunk{Content: b, MessageID: id}}
			c.out.push(outItem{update: n, size: size(n)})
		}
	}
}

// replayKey marks the context of a session/load: the updates the agent
// replays with it go to the loading connection only.
type replayKey struct{}

// SessionUpdate implements rpc.Client: a replay goes to the connection that
// loads, live updates to every watcher.
func (h *hub) SessionUpdate(ctx context.Context, n *rpc.SessionNotification) error {
	if c, ok := ctx.Value(replayKey{}).(*conn); ok {
		return c.client.SessionUpdate(ctx, n)
	}
	ws := h.watchers(n.SessionID)
	if len(ws) == 0 {
		return nil
	}
	it := outItem{update: n, size: size(n)}
	for _, c := range ws {
		if !c.out.push(it) {
			h.logger.Debug("session/update not sent to a tab", "session", n.SessionID)
		}
	}
	return nil
}

// FilesChanged implements rpc.Client: every watcher is told.
func (h *hub) FilesChanged(ctx context.Context, n *rpc.FilesChangedNotification) error {
	ws := h.watchers(n.SessionID)
	if len(ws) == 0 {
		return nil
	}
	it := outItem{files: n, size: size(n)}
	for _, c := range ws {
		c.out.push(it)
	}
	return nil
}

// RequestPermission implements rpc.Client: every watcher of the session is
// asked, and so is every tab that starts watching while the question is
// open; the first answer wins and the question is withdrawn from the
// others. It waits until then, or until ctx ends (the approval timeout,
// session/cancel).
func (h *hub) RequestPermission(ctx context.Context, req *rpc.RequestPermissionRequest) (*rpc.RequestPermissionResponse, error) {
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	a := &approval{ctx: actx, req: req, answered: make(chan struct{})}
	h.mu.Lock()
	m := h.pending[req.SessionID]
	if m == nil {
		m = map[*approval]struct{}{}
		h.pending[req.SessionID] = m
	}
	m[a] = struct{}{}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.pending[req.SessionID], a)
		if len(h.pending[req.SessionID]) == 0 {
			delete(h.pending, req.SessionID)
		}
		h.mu.Unlock()
		cancel() // withdraws the question from the tabs still showing it
		a.mu.Lock()
		a.closed = true
		a.mu.Unlock()
		a.wg.Wait()
	}()
	for _, c := range h.watchers(req.SessionID) {
		a.ask(c)
	}
	select {
	case <-a.answered:
		return a.resp, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// approval is one permission request that is open in some tabs.
type approval struct {
	ctx context.Context // ends when it is answered or given up
	req *rpc.RequestPermissionRequest

	mu     sync.Mutex // guards closed and wg.Go against wg.Wait
	closed bool
	wg     sync.WaitGroup

	once     sync.Once
	answered chan struct{}
	resp     *rpc.RequestPermissionResponse
	err      error
}

// ask puts the question to c. An answer — an outcome, or an error answer
// from the page — settles it; a connection that ends without answering
// does not.
func (a *approval) ask(c *conn) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	a.wg.Go(func() {
		resp, err := c.client.RequestPermission(a.ctx, a.req)
		var rerr *rpc.Error
		if err != nil && !errors.As(err, &rerr) {
			return
		}
		a.once.Do(func() {
			a.resp, a.err = resp, err
			close(a.answered)
		})
	})
}
