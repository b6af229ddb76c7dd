package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/coding-agent/coding-agent/rpc"
	"github.com/coding-agent/coding-agent/session/models"
	"github.com/coding-agent/coding-agent/tools"
)

// Sessions persist as append-only JSONL files, one per session, in
// DataDir/sessions/<id>.jsonl. The first record describes the session;
// then come the updates sent to the client (replayed by session/load), the
// messages of the conversation (the model's context when a session is
// reopened) and preset changes. A crash can leave a torn last line: loading
// skips it.

// Record types.
const (
	recMeta    = "session"
	recUpdate  = "update"
	recMessage = "message"
	recPreset  = "preset"
	recUsage   = "usage"
)

// record is one line of a session file.
type record struct {
	Type    string          `json:"type"`
	Time    time.Time       `json:"time"`
	Meta    *sessionMeta    `json:"session,omitempty"`
	Update  json.RawMessage `json:"update,omitempty"` // a session/update notification
	Message *models.Message `json:"message,omitempty"`
	Preset  string          `json:"preset,omitempty"`
	Usage   *usageRecord    `json:"usage,omitempty"`
}

// sessionMeta is what the first record says about a session.
type sessionMeta struct {
	ID        string    `json:"id"`
	Cwd       string    `json:"cwd"`
	Roots     []string  `json:"roots,omitempty"`
	Tools     []string  `json:"tools"`
	Preset    string    `json:"preset"`
	CreatedAt time.Time `json:"createdAt"`
}

func (s *Session) meta() sessionMeta {
	return sessionMeta{ID: s.id, Cwd: s.cwd, Roots: s.roots[1:], Tools: s.tools, Preset: string(s.preset), CreatedAt: s.created.UTC()}
}

// validID matches the ids this package makes; anything else cannot name a
// session file (no path tricks through a session id).
var validID = regexp.MustCompile(`^sess_[0-9a-f]{24}$`)

// store is the directory of session files.
type store struct {
	dir string
	log *slog.Logger
}

// store returns the session store, nil when there is no data directory.
func (e *Env) store() *store {
	if e.DataDir == "" {
		return nil
	}
	return &store{dir: filepath.Join(e.DataDir, "sessions"), log: e.Logger}
}

func (st *store) path(id string) string { return filepath.Join(st.dir, id+".jsonl") }

// create starts the file of a new session.
func (st *store) create(m sessionMeta) (*journal, error) {
	if err := os.MkdirAll(st.dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the session store: %w", err)
	}
	f, err := os.OpenFile(st.path(m.ID), os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating the session file: %w", err)
	}
	j := &journal{f: f, log: st.log}
	j.append(record{Type: recMeta, Meta: &m})
	return j, nil
}

// open reopens a stored session for appending.
func (st *store) open(id string) (*journal, error) {
	f, err := os.OpenFile(st.path(id), os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	j := &journal{f: f, log: st.log}
	j.repairTail()
	return j, nil
}

// stored is a session read back from its file.
type stored struct {
	meta     sessionMeta
	updates  []json.RawMessage
	messages []models.Message
	preset   string
	updated  time.Time
	title    string
	usage    *usageRecord // the latest
}

// errNotStored reports a session id with no file.
var errNotStored = errors.New("no such stored session")

// load reads a session file. A torn or unreadable line is skipped (and
// logged); only a missing or empty file, or a bad first record, fails.
func (st *store) load(id string) (*stored, error) {
	if !validID.MatchString(id) {
		return nil, errNotStored
	}
	f, err := os.Open(st.path(id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, errNotStored
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return st.read(f, id, true)
}

// read parses a session file; with full false it stops after the first
// user message (enough for a listing).
func (st *store) read(r io.Reader, id string, full bool) (*stored, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 256<<20)
	var s *stored
	line := 0
	for sc.Scan() {
		line++
		var rec record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			st.log.Warn("skipping an unreadable line of a session file", "session", id, "line", line, "err", err)
			continue
		}
		if s == nil {
			if rec.Type != recMeta || rec.Meta == nil || rec.Meta.ID != id {
				return nil, fmt.Errorf("session file %s does not start with its description", st.path(id))
			}
			s = &stored{meta: *rec.Meta, preset: rec.Meta.Preset, updated: rec.Time}
			continue
		}
		if rec.Time.After(s.updated) {
			s.updated = rec.Time
		}
		switch rec.Type {
		case recUpdate:
			s.updates = append(s.updates, rec.Update)
		case recMessage:
			if rec.Message != nil {
				s.messages = append(s.messages, *rec.Message)
				if s.title == "" && rec.Message.Role == models.RoleUser {
					s.title = titleOf(*rec.Message)
					if !full {
						return s, nil
					}
				}
			}
		case recPreset:
			s.preset = rec.Preset
		case recUsage:
			s.usage = rec.Usage
		}
	}
	if s == nil {
		return nil, errNotStored
	}
	return s, sc.Err()
}

// titleOf is a session title from its first user message.
func titleOf(m models.Message) string {
	for _, p := range m.Parts {
		if p.Kind == models.PartText {
			t, _, _ := strings.Cut(strings.TrimSpace(p.Text), "\n")
			return tools.Shorten(t, 80)
		}
	}
	return ""
}

// list returns the stored sessions, newest first.
func (st *store) list() ([]*stored, error) {
	ents, err := os.ReadDir(st.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*stored
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !validID.MatchString(id) {
			continue
		}
		f, err := os.Open(filepath.Join(st.dir, e.Name()))
		if err != nil {
			continue
		}
		s, err := st.read(f, id, false)
		f.Close()
		if err != nil {
			continue
		}
		if info, err := e.Info(); err == nil && info.ModTime().After(s.updated) {
			s.updated = info.ModTime()
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].updated.After(out[j].updated) })
	return out, nil
}

// journal appends records to one session file. A nil journal does
// nothing, so sessions without a data directory need no special cases.
type journal struct {
	log *slog.Logger
	// mu guards f.
	mu sync.Mutex
	f  *os.File
}

// append writes one record as one line with one write, so that a crash
// tears at most the last line. Errors are logged: losing history must not
// fail the user's work.
func (j *journal) append(rec record) {
	if j == nil {
		return
	}
	if rec.Time.IsZero() {
		rec.Time = time.Now().UTC()
	}
	b, err := json.Marshal(rec)
	if err != nil {
		j.log.Error("encoding a session record", "err", err)
		return
	}
	b = append(b, '\n')
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return
	}
	if _, err := j.f.Write(b); err != nil {
		j.log.Error("writing the session file", "file", j.f.Name(), "err", err)
	}
}

// appendUpdate records a session/update notification for replay.
func (j *journal) appendUpdate(sessionID string, u rpc.SessionUpdate) {
	if j == nil {
		return
	}
	raw, err := json.Marshal(rpc.SessionNotification{SessionID: sessionID, Update: u})
	if err != nil {
		j.log.Error("encoding a session update", "err", err)
		return
	}
	j.append(record{Type: recUpdate, Update: raw})
}

// repairTail ends a torn last line with a newline, so that the next record
// starts on a line of its own.
func (j *journal) repairTail() {
	fi, err := j.f.Stat()
	if err != nil || fi.Size() == 0 {
		return
	}
	r, err := os.Open(j.f.Name())
	if err != nil {
		return
	}
	defer r.Close()
	last := make([]byte, 1)
	if _, err := r.ReadAt(last, fi.Size()-1); err == nil && !bytes.Equal(last, []byte{'\n'}) {
		_, _ = j.f.Write([]byte{'\n'})
	}
}

// close flushes the file to disk and closes it.
func (j *journal) close() {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f != nil {
		_ = j.f.Sync()
		_ = j.f.Close()
		j.f = nil
	}
}
