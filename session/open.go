package session

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/coding-agent/coding-agent/session/models"
	"github.com/coding-agent/coding-agent/tools"
)

// ErrNotFound reports a session id that is neither open nor stored.
var ErrNotFound = errors.New("session not found")

// OpenSession opens a session by id. It also returns the stored updates
// (session/update notifications as JSON) for a host that replays the
// history.
//
// A session that is open in this Env already is not opened again (one
// session, one writer of its journal): the new opener attaches to it. It
// gets a Session of its own whose Options.OnEvent receives the events from
// the end of the returned updates on, through a bounded queue (see
// [Session.Subscribe]), and whose Options.Approve decides on the
// operations it starts; the other options are the open session's. Its
// Close detaches it; the session ends with the last Close.
//
// Otherwise the stored session is reopened: its tools, preset and
// conversation come from its file; opts give the rest (cwd, callbacks,
// model).
func (e *Env) OpenSession(id string, opts Options) (*Session, []json.RawMessage, error) {
	e.init()
	e.openMu.Lock()
	defer e.openMu.Unlock()
	if open := e.lookupOpen(id); open != nil {
		return e.attach(open, opts)
	}
	st := e.store()
	if st == nil {
		return nil, nil, ErrNotFound
	}
	s, err := st.load(id)
	if errors.Is(err, errNotStored) {
		return nil, nil, ErrNotFound
	}
	if err != nil {
		return nil, nil, err
	}
	if opts.Cwd == "" {
		opts.Cwd = s.meta.Cwd
	}
	if opts.AdditionalDirectories == nil {
		opts.AdditionalDirectories = s.meta.Roots
	}
	opts.Tools = s.meta.Tools
	if opts.Tools == nil {
		opts.Tools = []string{}
	}
	opts.Preset = tools.Preset(s.preset)
	if opts.Preset == "" {
		// Never the server's default: a stored session keeps what it had.
		opts.Preset = tools.ReadOnly
	}
	opts.id, opts.reopen = id, true
	sess, err := e.newSession(opts)
	if err != nil {
		return nil, nil, err
	}
	sess.history = s.messages
	for _, key := range s.allowed {
		if sess.allowed == nil {
			sess.allowed = map[string]bool{}
		}
		sess.allowed[key] = true
	}
	sess.thought = s.thought
	if !s.meta.CreatedAt.IsZero() {
		sess.created = s.meta.CreatedAt
	}
	if u := s.usage; u != nil && u.Messages <= len(s.messages) {
		sess.usage = usageState{
			last:  models.Usage{InputTokens: u.Input, CacheReadTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite, OutputTokens: u.Output},
			known: true, sent: u.Messages, cost: u.CostUSD, priced: u.CostUSD > 0,
		}
	}
	j, err := st.open(s.meta)
	if err != nil {
		sess.Close()
		return nil, nil, err
	}
	j.history = sess.History
	sess.journal = j
	return sess, s.updates, nil
}

// attach gives a new opener a Session of its own on the open session st.
// The journal is read and the opener's queue added under the publishing
// lock: every event is either in the updates returned or delivered to the
// opener, never both, never neither.
func (e *Env) attach(st *state, opts Options) (*Session, []json.RawMessage, error) {
	st.mu.Lock()
	if st.closed {
		st.mu.Unlock()
		return nil, nil, fmt.Errorf("session %s is closing", st.id)
	}
	st.refs++
	st.mu.Unlock()
	var k *sink
	if opts.OnEvent != nil {
		k = queuedSink(opts.OnEvent)
	}
	s := &Session{state: st, h: newHandle(k, opts.Approve)}
	var updates []json.RawMessage
	st.pubMu.Lock()
	if store := e.store(); store != nil && st.journal != nil {
		if stored, err := store.load(st.id); err == nil {
			updates = stored.updates
		}
	}
	if k != nil {
		st.sinks = append(st.sinks[:len(st.sinks):len(st.sinks)], k)
	}
	st.pubMu.Unlock()
	e.Logger.Info("attached to an open session", "session", st.id)
	return s, updates, nil
}

// register and unregister keep the registry of open sessions.
func (e *Env) register(st *state) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.open == nil {
		e.open = map[string]*state{}
	}
	e.open[st.id] = st
}

func (e *Env) unregister(st *state) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.open[st.id] == st {
		delete(e.open, st.id)
	}
}

func (e *Env) lookupOpen(id string) *state {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.open[id]
}

// StoredSession describes a session in the store.
type StoredSession struct {
	ID        string
	Cwd       string
	Roots     []string
	Title     string
	UpdatedAt string // RFC 3339
}

// StoredSessions lists the stored sessions, newest first.
func (e *Env) StoredSessions() ([]StoredSession, error) {
	st := e.store()
	if st == nil {
		return nil, nil
	}
	list, err := st.list()
	if err != nil {
		return nil, err
	}
	out := make([]StoredSession, 0, len(list))
	for _, s := range list {
		out = append(out, StoredSession{ID: s.meta.ID, Cwd: s.meta.Cwd, Roots: s.meta.Roots, Title: s.title, UpdatedAt: s.updated.UTC().Format("2006-01-02T15:04:05Z")})
	}
	return out, nil
}
