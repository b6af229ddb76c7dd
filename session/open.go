package session

import (
	"encoding/json"
	"errors"

	"github.com/coding-agent/coding-agent/session/models"
	"github.com/coding-agent/coding-agent/tools"
)

// ErrNotFound reports a session id that is neither open nor stored.
var ErrNotFound = errors.New("session not found")

// OpenSession reopens a stored session by id: its tools, preset and
// conversation come from its file; opts give the rest (cwd, callbacks,
// model). It also returns the stored updates (session/update notifications
// as JSON) for a host that replays the history.
func (e *Env) OpenSession(id string, opts Options) (*Session, []json.RawMessage, error) {
	e.init()
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
	opts.id, opts.reopen = id, true
	sess, err := e.NewSession(opts)
	if err != nil {
		return nil, nil, err
	}
	sess.history = s.messages
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
		return nil, nil, err
	}
	j.history = sess.History
	sess.journal = j
	return sess, s.updates, nil
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
