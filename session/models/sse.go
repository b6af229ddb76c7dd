package models

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// maxSSELine bounds one line of an event stream. Deltas are small, but a
// server that does not really stream may put a whole answer in one chunk.
const maxSSELine = 16 << 20

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	Name string // the "event:" field, "" when absent
	Data []byte // the "data:" lines joined by "\n"
}

// readError marks a failure to read the response body (a dropped
// connection, a stall): the transport failed, not the provider's protocol.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// sseReader parses the text/event-stream format (the WHATWG HTML "server-sent
// events" rules that both providers follow): lines end with LF or CRLF,
// "field: value" with one optional space after the colon, ":" starts a
// comment, a blank line dispatches the event, an event without data is not
// dispatched, and an unterminated event at end of stream is discarded.
type sseReader struct {
	r    *bufio.Reader
	line []byte
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 32<<10)}
}

// Next returns the next event, io.EOF at the end of the stream, or a
// *readError when the body could not be read.
func (s *sseReader) Next() (sseEvent, error) {
	var ev sseEvent
	var data bytes.Buffer
	hasData := false
	for {
		line, err := s.readLine()
		if err != nil {
			return sseEvent{}, err
		}
		if len(line) == 0 {
			if !hasData {
				ev = sseEvent{}
				continue
			}
			ev.Data = data.Bytes()
			return ev, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		switch string(field) {
		case "event":
			ev.Name = string(value)
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
		}
		// "id" and "retry" concern browser reconnection; a model stream is
		// never resumed, so they are ignored like unknown fields.
	}
}

// readLine returns the next line without its terminator. The returned slice
// is valid until the next call.
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		chunk, err := s.r.ReadSlice('\n')
		s.line = append(s.line, chunk...)
		if len(s.line) > maxSSELine {
			return nil, fmt.Errorf("event stream line longer than %d bytes", maxSSELine)
		}
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			// A final line without terminator cannot complete an event.
			return nil, io.EOF
		}
		return nil, &readError{err}
	}
	line := s.line[:len(s.line)-1]
	line = bytes.TrimSuffix(line, []byte("\r"))
	return line, nil
}
