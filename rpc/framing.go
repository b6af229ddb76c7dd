package rpc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Framing selects how messages are delimited on the byte stream.
type Framing int

const (
	// FramingAuto detects the framing from the first non-whitespace byte of
	// input: '{' or '[' selects NDJSON, 'C' or 'c' selects Content-Length
	// headers, anything else NDJSON (so garbage is answered line by line).
	FramingAuto Framing = iota
	// FramingNDJSON is newline-delimited JSON, one message per line (ACP).
	FramingNDJSON
	// FramingHeader is LSP base-protocol framing: "Content-Length: N\r\n\r\n"
	// followed by N bytes (vscode-jsonrpc).
	FramingHeader
)

// String returns the flag spelling of f: "auto", "ndjson" or "header".
func (f Framing) String() string {
	switch f {
	case FramingAuto:
		return "auto"
	case FramingNDJSON:
		return "ndjson"
	case FramingHeader:
		return "header"
	}
	return fmt.Sprintf("Framing(%d)", int(f))
}

// ParseFraming parses the flag spelling of a [Framing].
func ParseFraming(s string) (Framing, error) {
	switch s {
	case "auto", "":
		return FramingAuto, nil
	case "ndjson":
		return FramingNDJSON, nil
	case "header":
		return FramingHeader, nil
	}
	return FramingAuto, fmt.Errorf("framing %q: want auto, ndjson or header", s)
}

// DefaultMaxMessageBytes is the default limit on one message (PROTOCOL.md §1).
const DefaultMaxMessageBytes = 64 << 20

const (
	// maxHeaderLine bounds one header line; real headers are a few dozen bytes.
	maxHeaderLine = 8 << 10
	// reuseLimit is the largest frame buffer kept between reads; larger
	// buffers are dropped so one huge message does not pin memory forever.
	reuseLimit = 1 << 20
)

// frameError is a recoverable framing problem: the offending bytes have been
// consumed and the reader is positioned at the next message, so the
// connection answers with Code and keeps going.
type frameError struct {
	Code    int64
	Message string
}

func (e *frameError) Error() string { return e.Message }

// frameReader splits a byte stream into message frames. It never buffers more
// than max bytes of one message: an oversized NDJSON line is discarded up to
// its newline, an oversized header frame is skipped by its Content-Length.
type frameReader struct {
	r       *bufio.Reader
	framing Framing // FramingAuto until the first byte is seen
	max     int64
	buf     []byte
}

func newFrameReader(r io.Reader, framing Framing, max int64) *frameReader {
	if max <= 0 {
		max = DefaultMaxMessageBytes
	}
	return &frameReader{r: bufio.NewReaderSize(r, 64<<10), framing: framing, max: max}
}

// next returns the next frame. The frame is valid until the following call.
// Errors are either a *frameError (recoverable) or the read error that ends
// the stream (io.EOF at a clean boundary, io.ErrUnexpectedEOF mid-frame).
func (fr *frameReader) next() ([]byte, error) {
	if fr.framing == FramingAuto {
		if err := fr.detect(); err != nil {
			return nil, err
		}
	}
	if fr.framing == FramingHeader {
		return fr.nextHeader()
	}
	return fr.nextLine()
}

// detect skips leading whitespace and picks the framing from the first byte.
func (fr *frameReader) detect() error {
	for {
		b, err := fr.r.ReadByte()
		if err != nil {
			return err
		}
		if isSpace(b) {
			continue
		}
		_ = fr.r.UnreadByte()
		if b == 'C' || b == 'c' {
			fr.framing = FramingHeader
		} else {
			fr.framing = FramingNDJSON
		}
		return nil
	}
}

// take returns a buffer of length n, reusing the previous one when small.
func (fr *frameReader) take(n int) []byte {
	if cap(fr.buf) >= n {
		return fr.buf[:n]
	}
	b := make([]byte, n)
	if n <= reuseLimit {
		fr.buf = b
	}
	return b
}

// nextLine reads one NDJSON frame. The size limit applies to the line without
// its '\n' (a trailing '\r' counts). Whitespace-only lines are skipped. A
// final line without '\n' at EOF is still a message.
func (fr *frameReader) nextLine() ([]byte, error) {
	for {
		line := fr.buf[:0]
		var size int64
		oversize := false
		for {
			chunk, err := fr.r.ReadSlice('\n')
			n := int64(len(chunk))
			if err == nil {
				n-- // the delimiter
			}
			size += n
			if !oversize && size > fr.max {
				oversize = true
				line = line[:0]
			}
			if !oversize {
				line = append(line, chunk[:n]...)
			}
			if err == nil {
				break
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			// A read error: deliver what we have, the error comes next call.
			if size == 0 {
				return nil, err
			}
			break
		}
		if cap(line) <= reuseLimit {
			fr.buf = line[:0]
		}
		if oversize {
			return nil, &frameError{Code: CodeInvalidRequest,
				Message: fmt.Sprintf("message of %d bytes exceeds the limit of %d bytes", size, fr.max)}
		}
		if isBlank(line) {
			continue
		}
		return bytes.TrimSuffix(line, []byte{'\r'}), nil
	}
}

// nextHeader reads one Content-Length frame. Unknown header fields are
// ignored, header names match case-insensitively, and blank lines before a
// header block are skipped (a stray newline after a body is common).
func (fr *frameReader) nextHeader() ([]byte, error) {
	length := int64(-1)
	bad := ""
	started := false
	for {
		line, tooLong, err := fr.readHeaderLine()
		if err != nil {
			if started && errors.Is(err, io.EOF) {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if tooLong {
			started = true
			bad = "header line too long"
			continue
		}
		if isBlank(line) {
			if !started {
				continue
			}
			break
		}
		started = true
		name, value, ok := bytes.Cut(line, []byte{':'})
		if !ok || !bytes.EqualFold(bytes.TrimSpace(name), []byte("Content-Length")) {
			continue
		}
		n, perr := strconv.ParseInt(string(bytes.TrimSpace(value)), 10, 64)
		if perr != nil || n < 0 {
			bad = fmt.Sprintf("invalid Content-Length %q", bytes.TrimSpace(value))
			continue
		}
		length = n
	}
	if bad == "" && length < 0 {
		bad = "missing Content-Length header"
	}
	if bad != "" {
		if length > 0 {
			// Skip the announced body so the next header block lines up.
			if err := fr.discard(length); err != nil {
				return nil, err
			}
		}
		return nil, &frameError{Code: CodeParseError, Message: "invalid message header: " + bad}
	}
	if length > fr.max {
		if err := fr.discard(length); err != nil {
			return nil, err
		}
		return nil, &frameError{Code: CodeInvalidRequest,
			Message: fmt.Sprintf("message of %d bytes exceeds the limit of %d bytes", length, fr.max)}
	}
	if length == 0 {
		return nil, &frameError{Code: CodeParseError, Message: "parse error: empty message body"}
	}
	body := fr.take(int(length))
	if _, err := io.ReadFull(fr.r, body); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return body, nil
}

// readHeaderLine reads one line without its terminator. A line longer than
// maxHeaderLine is consumed and reported with tooLong instead of buffered.
func (fr *frameReader) readHeaderLine() (line []byte, tooLong bool, err error) {
	var acc []byte
	for {
		chunk, err := fr.r.ReadSlice('\n')
		if !tooLong {
			acc = append(acc, chunk...)
			if len(acc) > maxHeaderLine {
				tooLong, acc = true, nil
			}
		}
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(acc) > 0 || tooLong {
			// A partial header line at EOF is a truncated frame.
			return nil, false, io.ErrUnexpectedEOF
		}
		return nil, false, err
	}
	acc = bytes.TrimSuffix(acc, []byte{'\n'})
	return bytes.TrimSuffix(acc, []byte{'\r'}), tooLong, nil
}

func (fr *frameReader) discard(n int64) error {
	if _, err := io.CopyN(io.Discard, fr.r, n); err != nil {
		if errors.Is(err, io.EOF) {
			return io.ErrUnexpectedEOF
		}
		return err
	}
	return nil
}

// appendFrame appends body framed for f to dst.
func appendFrame(dst []byte, f Framing, body []byte) []byte {
	if f == FramingHeader {
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, int64(len(body)), 10)
		dst = append(dst, "\r\n\r\n"...)
		return append(dst, body...)
	}
	dst = append(dst, body...)
	return append(dst, '\n')
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }

func isBlank(b []byte) bool {
	for _, c := range b {
		if !isSpace(c) {
			return false
		}
	}
	return true
}
