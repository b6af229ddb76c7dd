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
	"slices"
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
// reopened), preset changes, the usage of each model request and
// compactions. A crash can leave a torn last line: loading skips it.
//
// One record is one whole message: streamed text chunks are coalesced
// into one update per message, and a large tool input is kept once (in the
// model's message, not again in the replayed update). Nothing is
// HTML-escaped, and lines of any size load.

// Record types.
const (
	recMeta    = "session"
	recUpdate  = "update"
	recMessage = "message"
	recPreset  = "preset"
	recUsage   = "usage"
	recCompact = "compaction"
	recAllow   = "allow"
	recThought = "thought"
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
	Compact *compactRecord  `json:"compaction,omitempty"`
	// Allow is what an "always allow" answer allowed for the rest of the
	// session (see approvalKey).
	Allow   string `json:"allow,omitempty"`
	Thought string `json:"thought,omitempty"`
}

// compactRecord says that the history was compacted: from here on, the
// conversation is Head followed by the latest Kept messages before this
// record. The messages before stay on disk, above it.
type compactRecord struct {
	ID           string           `json:"id"`
	Head         []models.Message `json:"head"`
	Kept         int              `json:"kept"`
	TokensBefore int64            `json:"tokensBefore,omitempty"`
	TokensAfter  int64            `json:"tokensAfter,omitempty"`
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
	j := &journal{f: f, log: st.log, st: st, meta: m}
	j.append(record{Type: recMeta, Meta: &m})
	return j, nil
}

// open reopens a stored session for appending.
func (st *store) open(m sessionMeta) (*journal, error) {
	f, err := os.OpenFile(st.path(m.ID), os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	j := &journal{f: f, log: st.log, st: st, meta: m}
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
	allowed  []string     // what "always allow" answers allowed
	thought  string
}

// errNotStored reports a session id with no file.
var errNotStored = errors.New("no such stored session")

// load reads a session file. A torn or unreadable line, or a record that
// could not be used (an unknown role), is skipped with a warning naming
// it; only a missing or empty file, or a bad first record, fails.
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
// user message (enough for a listing). Lines may be of any length.
func (st *store) read(r io.Reader, id string, full bool) (*stored, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var s *stored
	line := 0
	for {
		b, err := br.ReadBytes('\n')
		if len(b) == 0 && err != nil {
			if err != io.EOF {
				return s, err
			}
			break
		}
		line++
		var rec record
		if err := json.Unmarshal(b, &rec); err != nil {
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
			if rec.Message == nil {
				continue
			}
			if err := checkMessage(*rec.Message); err != nil {
				st.log.Warn("skipping a message record that cannot be sent to a model", "session", id, "line", line, "record", truncateRecord(b), "err", err)
				continue
			}
			s.messages = append(s.messages, *rec.Message)
			if s.title == "" && rec.Message.Role == models.RoleUser {
				s.title = titleOf(*rec.Message)
				if !full {
					return s, nil
				}
			}
		case recPreset:
			s.preset = rec.Preset
		case recAllow:
			if rec.Allow != "" {
				s.allowed = append(s.allowed, rec.Allow)
			}
		case recUsage:
			s.usage = rec.Usage
		case recThought:
			s.thought = rec.Thought
		case recCompact:
			c := rec.Compact
			if c == nil || c.Kept < 0 || c.Kept > len(s.messages) || len(c.Head) == 0 {
				st.log.Warn("skipping a compaction record that does not fit the history", "session", id, "line", line)
				continue
			}
			kept := s.messages[len(s.messages)-c.Kept:]
			s.messages = append(slices.Clone(c.Head), kept...)
			s.usage = nil // the counts were of the history before
		default:
			st.log.Warn("skipping a session record of unknown type", "session", id, "line", line, "type", rec.Type)
		}
	}
	if s == nil {
		return nil, errNotStored
	}
	s.messages = repairHistory(s.messages)
	return s, nil
}

// truncateRecord quotes the start of a record for a log line.
func truncateRecord(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// checkMessage rejects a message no provider could be sent: an unknown
// role or part kind.
func checkMessage(m models.Message) error {
	if m.Role != models.RoleUser && m.Role != models.RoleAssistant {
		return fmt.Errorf("role: unknown role %q", m.Role)
	}
	for i, p := range m.Parts {
		switch p.Kind {
		case models.PartText, models.PartThinking, models.PartImage, models.PartToolCall, models.PartToolResult:
		default:
			return fmt.Errorf("parts[%d].kind: unknown part kind %q", i, p.Kind)
		}
	}
	return nil
}

// repairHistory makes a history well-formed again after records were
// skipped: a tool result without its call in the message before is
// dropped, and a call without its result gets one saying it was lost, so
// that no provider refuses the conversation.
func repairHistory(msgs []models.Message) []models.Message {
	out := make([]models.Message, 0, len(msgs))
	for _, m := range msgs {
		var calls []string
		if len(out) > 0 && out[len(out)-1].Role == models.RoleAssistant {
			for _, p := range out[len(out)-1].Parts {
				if p.Kind == models.PartToolCall {
					calls = append(calls, p.ToolCallID)
				}
			}
		}
		if m.Role == models.RoleUser {
			answered := map[string]bool{}
			parts := m.Parts[:0:0]
			for _, p := range m.Parts {
				if p.Kind == models.PartToolResult {
					if !slices.Contains(calls, p.ToolCallID) || answered[p.ToolCallID] {
						continue
					}
					answered[p.ToolCallID] = true
				}
				parts = append(parts, p)
			}
			var missing []models.Part
			for _, id := range calls {
				if !answered[id] {
					missing = append(missing, toolResult(id, "The result of this tool call was lost.", true))
				}
			}
			m.Parts = append(missing, parts...)
			if len(m.Parts) == 0 {
				continue
			}
		} else if len(calls) > 0 {
			// An assistant message right after one with calls: answer them.
			lost := models.Message{Role: models.RoleUser}
			for _, id := range calls {
				lost.Parts = append(lost.Parts, toolResult(id, "The result of this tool call was lost.", true))
			}
			out = append(out, lost)
		}
		out = append(out, m)
	}
	if n := len(out); n > 0 && out[n-1].Role == models.RoleAssistant {
		var lost models.Message
		for _, p := range out[n-1].Parts {
			if p.Kind == models.PartToolCall {
				lost.Role = models.RoleUser
				lost.Parts = append(lost.Parts, toolResult(p.ToolCallID, "The result of this tool call was lost.", true))
			}
		}
		if len(lost.Parts) > 0 {
			out = append(out, lost)
		}
	}
	return out
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
	log  *slog.Logger
	st   *store
	meta sessionMeta
	// mu guards the fields below.
	mu sync.Mutex
	f  *os.File
	// chunk is the text message being streamed: its chunks become one
	// update record when the message ends (another update or record).
	chunk *pendingChunk
	// history returns the session's conversation, to write a session file
	// again when it was deleted under a running session; nil if unset.
	history func() []models.Message
}

// pendingChunk is a streamed text message not written yet.
type pendingChunk struct {
	sessionID string
	kind      string // the sessionUpdate discriminator
	messageID string
	text      strings.Builder
}

// largeInput is the size from which a tool call's rawInput is left out of
// its journaled updates: the model's message holds the arguments already.
const largeInput = 64 << 10

// append writes one record as one line, so that a crash tears at most the
// last line. Errors are logged: losing history must not fail the user's
// work.
func (j *journal) append(rec record) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return
	}
	rewrote := j.ensureFileLocked()
	j.flushChunkLocked()
	if rewrote && rec.Type == recMessage {
		return // the history written again holds this message already
	}
	j.writeLocked(rec)
}

// writeLocked encodes rec straight into the file, without HTML escaping.
func (j *journal) writeLocked(rec record) {
	if j.f == nil {
		return
	}
	if rec.Time.IsZero() {
		rec.Time = time.Now().UTC()
	}
	enc := json.NewEncoder(j.f)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil {
		j.log.Error("writing the session file", "file", j.f.Name(), "err", err)
	}
}

// appendUpdate records a session/update notification for replay. Text
// chunks of one message are gathered into one record.
func (j *journal) appendUpdate(sessionID string, u rpc.SessionUpdate) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if kind, id, text, ok := textChunk(u); ok {
		if c := j.chunk; c != nil && c.kind == kind && c.messageID == id && id != "" {
			c.text.WriteString(text)
			return
		}
		j.flushChunkLocked()
		if id != "" {
			c := &pendingChunk{sessionID: sessionID, kind: kind, messageID: id}
			c.text.WriteString(text)
			j.chunk = c
			return
		}
	} else {
		j.flushChunkLocked()
	}
	j.writeUpdateLocked(sessionID, journaled(u))
}

// flush writes the message being streamed, if any.
func (j *journal) flush() {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.flushChunkLocked()
}

func (j *journal) flushChunkLocked() {
	c := j.chunk
	if c == nil {
		return
	}
	j.chunk = nil
	block := rpc.TextBlock(c.text.String())
	var u rpc.SessionUpdate
	switch c.kind {
	case "agent_message_chunk":
		u = &rpc.AgentMessageChunk{Content: block, MessageID: c.messageID}
	case "agent_thought_chunk":
		u = &rpc.AgentThoughtChunk{Content: block, MessageID: c.messageID}
	default:
		u = &rpc.UserMessageChunk{Content: block, MessageID: c.messageID}
	}
	j.writeUpdateLocked(c.sessionID, u)
}

// textChunk recognizes a text chunk of a message.
func textChunk(u rpc.SessionUpdate) (kind, messageID, text string, ok bool) {
	switch u := u.(type) {
	case *rpc.AgentMessageChunk:
		if u.Content.Type == rpc.ContentText && u.Content.Meta == nil && u.Content.Annotations == nil {
			return u.SessionUpdateKind(), u.MessageID, u.Content.Text, true
		}
	case *rpc.AgentThoughtChunk:
		if u.Content.Type == rpc.ContentText && u.Content.Meta == nil && u.Content.Annotations == nil {
			return u.SessionUpdateKind(), u.MessageID, u.Content.Text, true
		}
	case *rpc.UserMessageChunk:
		if u.Content.Type == rpc.ContentText && u.Content.Meta == nil && u.Content.Annotations == nil {
			return u.SessionUpdateKind(), u.MessageID, u.Content.Text, true
		}
	}
	return "", "", "", false
}

// journaled is the form of u kept for replay: a large rawInput is left
// out (the model's message holds it, and the diff shows the change).
func journaled(u rpc.SessionUpdate) rpc.SessionUpdate {
	switch v := u.(type) {
	case *rpc.ToolCallUpdate:
		if len(v.RawInput) > largeInput || len(v.RawOutput) > largeInput {
			c := *v
			if len(v.RawInput) > largeInput {
				c.RawInput = omitted(len(v.RawInput))
			}
			if len(v.RawOutput) > largeInput {
				// The details of a large change repeat it (a unified
				// diff); the diff content shows it.
				c.RawOutput = omitted(len(v.RawOutput))
			}
			return &c
		}
	case *rpc.ToolCall:
		if len(v.RawInput) > largeInput {
			c := *v
			c.RawInput = omitted(len(v.RawInput))
			return &c
		}
	}
	return u
}

func omitted(n int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"_omitted":"%d bytes, not kept for replay"}`, n))
}

// marshalNoEscape encodes v as json.Marshal does, without HTML escaping.
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// writeLocked writes one update record: the notification's envelope
// around the update, encoded once, straight into the file.
func (j *journal) writeUpdateLocked(sessionID string, u rpc.SessionUpdate) {
	if j.f == nil {
		return
	}
	j.ensureFileLocked()
	sid, _ := json.Marshal(sessionID)
	kind, _ := json.Marshal(u.SessionUpdateKind())
	ts, _ := time.Now().UTC().MarshalJSON()
	w := &updateWriter{f: j.f, prefix: fmt.Sprintf(`{"type":"update","time":%s,"update":{"sessionId":%s,"update":{"sessionUpdate":%s`, ts, sid, kind)}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(u); err != nil {
		j.log.Error("writing the session file", "file", j.f.Name(), "err", err)
	}
}

// updateWriter receives an update's encoding (one Write of "{...}\n" from
// the encoder) and writes it into the file inside the record's envelope.
type updateWriter struct {
	f      *os.File
	prefix string
}

func (w *updateWriter) Write(b []byte) (int, error) {
	body := bytes.TrimSuffix(b, []byte("\n"))
	if len(body) < 2 || body[0] != '{' {
		return 0, fmt.Errorf("an update encoded as %.20q, not an object", body)
	}
	head := w.prefix
	if len(body) > 2 {
		head += ","
	}
	if _, err := w.f.Write([]byte(head)); err != nil {
		return 0, err
	}
	if _, err := w.f.Write(body[1 : len(body)-1]); err != nil {
		return 0, err
	}
	if _, err := w.f.Write([]byte("}}}\n")); err != nil {
		return 0, err
	}
	return len(b), nil
}

// ensureFileLocked recreates the session file when it (or the whole data
// directory) was deleted under the running session: the description and
// the conversation so far are written again, so that the session can
// still be resumed; the earlier updates (the replay) are lost. It says
// whether it wrote the file again.
func (j *journal) ensureFileLocked() bool {
	fi, err := j.f.Stat()
	if err != nil {
		return false
	}
	if on, err := os.Stat(j.f.Name()); err == nil && os.SameFile(fi, on) {
		return false
	}
	if err := os.MkdirAll(j.st.dir, 0o700); err != nil {
		j.log.Error("recreating the session store", "dir", j.st.dir, "err", err)
		return false
	}
	f, err := os.OpenFile(j.f.Name(), os.O_CREATE|os.O_TRUNC|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		j.log.Error("recreating the session file", "file", j.f.Name(), "err", err)
		return false
	}
	j.log.Warn("the session file was deleted; writing it again", "file", j.f.Name())
	_ = j.f.Close()
	j.f = f
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	now := time.Now().UTC()
	m := j.meta
	_ = enc.Encode(record{Type: recMeta, Time: now, Meta: &m})
	if j.history != nil {
		for _, msg := range j.history() {
			_ = enc.Encode(record{Type: recMessage, Time: now, Message: &msg})
		}
	}
	return true
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
	j.flushChunkLocked()
	if j.f != nil {
		_ = j.f.Sync()
		_ = j.f.Close()
		j.f = nil
	}
}
