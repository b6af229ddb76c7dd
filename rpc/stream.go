package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// stream is the jsonrpc2.Stream under every connection. It owns framing and
// input hardening, because the library ends the connection on any frame it
// cannot decode: here malformed JSON, batches, invalid requests and oversized
// messages are answered with an error and reading continues.
//
// Read runs on the library's single reader goroutine; Write is safe for
// concurrent use and emits each message with one Write call.
type stream struct {
	in     io.Reader
	out    io.Writer
	fr     *frameReader
	logger *slog.Logger

	// readDone is closed with readErr set when Read hits the end of input or
	// an unrecoverable read error.
	readDone chan struct{}
	readErr  error
	readOnce sync.Once

	// wmu serializes writes and guards the fields below.
	wmu       sync.Mutex
	framing   Framing // the write framing; follows the detected read framing
	wbuf      []byte
	writeErr  error
	writeDone chan struct{} // closed on the first write error

	trace *tracer
	// writing and answered, if set, are told the id of every response,
	// just before it is written (under the write lock) and once it has been.
	writing, answered func(idKey string)

	inOnce, outOnce sync.Once
	// release is closed by Serve when the library may learn that input
	// ended: go.lsp.dev/jsonrpc2 stops writing replies once its reader has
	// failed, so the end of input is held back until every call received
	// has been answered.
	release     chan struct{}
	releaseOnce sync.Once
}

func newStream(in io.Reader, out io.Writer, opts *Options) *stream {
	s := &stream{
		in:        in,
		out:       out,
		fr:        newFrameReader(in, opts.Framing, opts.MaxMessageBytes),
		logger:    opts.Logger,
		readDone:  make(chan struct{}),
		writeDone: make(chan struct{}),
		release:   make(chan struct{}),
		framing:   opts.Framing,
	}
	if opts.Trace != nil {
		s.trace = &tracer{w: opts.Trace}
	}
	return s
}

// Read implements jsonrpc2.Stream. It returns the next well-formed message;
// anything else is answered here and skipped.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		frame, err := s.fr.next()
		if err != nil {
			var fe *frameError
			if errors.As(err, &fe) {
				s.trace.note("recv", fe.Message)
				s.logger.Warn("rejected input", "error", fe.Message)
				if werr := s.replyError(jsonrpc2.ID{}, fe.Code, fe.Message); werr != nil {
					return nil, 0, s.endRead(werr)
				}
				continue
			}
			err = s.endRead(err)
			<-s.release
			return nil, 0, err
		}
		s.syncFraming()
		s.trace.message("recv", frame)
		msg, id, code, text := classify(frame)
		if code != 0 {
			s.logger.Warn("rejected message", "code", code, "error", text)
			if werr := s.replyError(id, code, text); werr != nil {
				return nil, 0, s.endRead(werr)
			}
			continue
		}
		return msg, int64(len(frame)), nil
	}
}

// syncFraming makes replies use the framing detected on input.
func (s *stream) syncFraming() {
	if s.framing != FramingAuto {
		return
	}
	s.wmu.Lock()
	s.framing = s.fr.framing
	s.wmu.Unlock()
}

func (s *stream) endRead(err error) error {
	s.readOnce.Do(func() {
		s.readErr = err
		close(s.readDone)
	})
	return err
}

// classify decodes one frame. A non-zero code means the frame is answered
// with that error (and id, when it could be recovered) instead of being
// dispatched.
func classify(frame []byte) (msg jsonrpc2.Message, id jsonrpc2.ID, code int64, text string) {
	body := bytes.TrimSpace(frame)
	if !json.Valid(body) {
		return nil, id, CodeParseError, "parse error: invalid JSON"
	}
	switch body[0] {
	case '[':
		return nil, id, CodeInvalidRequest, "invalid request: JSON-RPC batches are not supported"
	case '{':
	default:
		return nil, id, CodeInvalidRequest, "invalid request: a message must be a JSON object"
	}
	m, err := jsonrpc2.DecodeMessage(body)
	if err != nil {
		// Only on this slow path: find the id and explain what is wrong.
		var probe struct {
			JSONRPC *string         `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(body, &probe)
		id = decodeID(probe.ID)
		switch {
		case probe.JSONRPC == nil || *probe.JSONRPC != "2.0":
			text = `invalid request: "jsonrpc" must be "2.0"`
		case len(probe.ID) > 0 && !id.IsValid() && string(probe.ID) != "null":
			text = "invalid request: id must be a string or an integer"
		default:
			text = "invalid request: " + err.Error()
		}
		return nil, id, CodeInvalidRequest, text
	}
	if req, ok := m.(jsonrpc2.RequestMessage); ok && req.Method() == "" {
		if c, ok := m.(*jsonrpc2.Call); ok {
			id = c.ID()
		}
		return nil, id, CodeInvalidRequest, "invalid request: method must not be empty"
	}
	return m, id, 0, ""
}

// decodeID recovers a request id from raw JSON; anything that is not an
// integer or a string yields the null id.
func decodeID(raw json.RawMessage) jsonrpc2.ID {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return jsonrpc2.ID{}
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return jsonrpc2.NewStringID(s)
		}
		return jsonrpc2.ID{}
	}
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return jsonrpc2.NewNumberID(n)
	}
	return jsonrpc2.ID{}
}

func (s *stream) replyError(id jsonrpc2.ID, code int64, text string) error {
	_, err := s.Write(context.Background(), jsonrpc2.NewResponse(id, nil, &jsonrpc2.Error{Code: jsonrpc2.Code(code), Message: text}))
	return err
}

// Write implements jsonrpc2.Stream.
func (s *stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	body, err := jsonrpc2.EncodeMessage(msg)
	if err != nil {
		return 0, fmt.Errorf("encoding message: %w", err)
	}
	key, isAnswer := "", false
	if s.answered != nil {
		key, isAnswer = responseKey(body)
	}
	n, err := s.writeFrame(body, key)
	if err == nil && isAnswer {
		// Outside the write lock: what runs once an answer is written may
		// write messages itself.
		s.answered(key)
	}
	return n, err
}

// writeFrame writes one framed message. When it is the answer to the call
// key, the call stops counting as in flight once it holds the write lock,
// before the client can read the answer: at most this one answer is then
// held uncounted.
func (s *stream) writeFrame(body []byte, key string) (int64, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.writeErr != nil {
		return 0, s.writeErr
	}
	if key != "" && s.writing != nil {
		s.writing(key)
	}
	s.wbuf = appendFrame(s.wbuf[:0], s.framing, body)
	// Trace first: once the peer has the message, the trace has it too.
	s.trace.message("send", body)
	n, err := s.out.Write(s.wbuf)
	if cap(s.wbuf) > reuseLimit {
		s.wbuf = nil
	}
	if err != nil {
		s.writeErr = fmt.Errorf("writing message: %w", err)
		close(s.writeDone)
		return int64(n), s.writeErr
	}
	return int64(n), nil
}

// Close implements jsonrpc2.Stream. It closes both ends when they are
// closers, which unblocks a Read parked on the input.
func (s *stream) Close() error {
	return errors.Join(s.closeIn(), s.closeOut())
}

// responseKey returns the idKey of an encoded response. The library's
// response type is unexported, but it writes every envelope from the same
// head: {"jsonrpc":"2.0", then for a response "id" followed by "result" or
// "error" (a call has "method" after its id; a notification has no id). So
// only the head is read, however large the message. TestResponseKey pins
// this against the library's encoder.
func responseKey(body []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(body, []byte(`{"jsonrpc":"2.0","id":`))
	if !ok || len(rest) == 0 {
		return "", false
	}
	n := bytes.IndexByte(rest, ',')
	if rest[0] == '"' {
		for n = 1; n < len(rest) && rest[n] != '"'; n++ {
			if rest[n] == '\\' {
				n++
			}
		}
		n++
	}
	if n <= 0 || n > len(rest) {
		return "", false
	}
	if tail := rest[n:]; !bytes.HasPrefix(tail, []byte(`,"result":`)) && !bytes.HasPrefix(tail, []byte(`,"error":`)) {
		return "", false
	}
	id := decodeID(rest[:n])
	if !id.IsValid() {
		return "", false
	}
	return idKey(id), true
}

// releaseRead lets Read report the end of input to the library.
func (s *stream) releaseRead() { s.releaseOnce.Do(func() { close(s.release) }) }

func (s *stream) closeIn() error {
	var err error
	s.inOnce.Do(func() {
		if c, ok := s.in.(io.Closer); ok {
			err = c.Close()
		}
	})
	return err
}

func (s *stream) closeOut() error {
	var err error
	s.outOnce.Do(func() {
		if c, ok := s.out.(io.Closer); ok {
			err = c.Close()
		}
	})
	return err
}

// tracer writes one line per message to the trace writer, marked "recv" for
// input and "send" for output. A nil *tracer traces nothing.
type tracer struct {
	mu  sync.Mutex
	w   io.Writer
	buf bytes.Buffer
}

func (t *tracer) message(dir string, body []byte) {
	if t == nil {
		return
	}
	body = redactSecrets(body)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Reset()
	t.buf.WriteString(dir)
	t.buf.WriteByte(' ')
	if json.Compact(&t.buf, bytes.TrimSpace(body)) != nil {
		// Not JSON: quote it so the trace stays one line per message.
		t.buf.Truncate(len(dir) + 1)
		t.buf.WriteString(strconv.Quote(string(body)))
	}
	t.buf.WriteByte('\n')
	_, _ = t.w.Write(t.buf.Bytes())
}

func (t *tracer) note(dir, text string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	_, _ = fmt.Fprintf(t.w, "%s # %s\n", dir, text)
}

// redactSecrets returns body with the params of an authenticate request
// replaced by its methodId alone: an API key given with authenticate never
// reaches the trace.
func redactSecrets(body []byte) []byte {
	if !bytes.Contains(body, []byte(`"authenticate"`)) {
		return body
	}
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id,omitempty"`
		Method  string          `json:"method"`
		Params  struct {
			MethodID string `json:"methodId"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil || m.Method != MethodAuthenticate {
		return body
	}
	out, err := json.Marshal(map[string]any{"jsonrpc": m.JSONRPC, "id": m.ID, "method": m.Method,
		"params": map[string]string{"methodId": m.Params.MethodID, "_meta": "(redacted)"}})
	if err != nil {
		return []byte(`"authenticate (redacted)"`)
	}
	return out
}
