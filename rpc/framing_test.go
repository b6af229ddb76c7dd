package rpc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// readAll returns every frame of input as a string, recoverable errors as
// "!<code>", and the terminating error.
func readAll(t testing.TB, input []byte, framing Framing, max int64) ([]string, error) {
	fr := newFrameReader(bytes.NewReader(input), framing, max)
	var out []string
	for i := 0; ; i++ {
		if i > len(input)+2 {
			t.Fatalf("no progress: %d results from %d bytes", i, len(input))
		}
		frame, err := fr.next()
		if err != nil {
			var fe *frameError
			if errors.As(err, &fe) {
				out = append(out, fmt.Sprintf("!%d", fe.Code))
				continue
			}
			return out, err
		}
		if int64(len(frame)) > max {
			t.Fatalf("frame of %d bytes exceeds max %d", len(frame), max)
		}
		out = append(out, string(frame))
	}
}

func TestFrameReader(t *testing.T) {
	for _, test := range []struct {
		name    string
		framing Framing
		input   string
		max     int64
		want    []string
		wantErr error
	}{
		{"ndjson", FramingNDJSON, "{\"a\":1}\n{\"b\":2}\n", 100, []string{`{"a":1}`, `{"b":2}`}, io.EOF},
		{"ndjson crlf and blanks", FramingNDJSON, "\n\r\n{\"a\":1}\r\n  \n", 100, []string{`{"a":1}`}, io.EOF},
		{"ndjson last line without newline", FramingNDJSON, "{\"a\":1}\n{\"b\":2}", 100, []string{`{"a":1}`, `{"b":2}`}, io.EOF},
		{"ndjson oversize then ok", FramingNDJSON, strings.Repeat("x", 50) + "\n{}\n", 10, []string{"!-32600", "{}"}, io.EOF},
		{"ndjson exactly max", FramingNDJSON, "0123456789\n", 10, []string{"0123456789"}, io.EOF},
		{"header", FramingHeader, "Content-Length: 7\r\n\r\n{\"a\":1}Content-Length: 2\r\n\r\n{}", 100, []string{`{"a":1}`, "{}"}, io.EOF},
		{"header lower case and extra fields", FramingHeader, "content-length:2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}", 100, []string{"{}"}, io.EOF},
		{"header bare newlines", FramingHeader, "Content-Length: 2\n\n{}\n", 100, []string{"{}"}, io.EOF},
		{"header stray newline between frames", FramingHeader, "Content-Length: 2\r\n\r\n{}\nContent-Length: 2\r\n\r\n[]", 100, []string{"{}", "[]"}, io.EOF},
		{"header oversize skipped", FramingHeader, "Content-Length: 20\r\n\r\n01234567890123456789Content-Length: 2\r\n\r\n{}", 10, []string{"!-32600", "{}"}, io.EOF},
		{"header missing length", FramingHeader, "X: y\r\n\r\nContent-Length: 2\r\n\r\n{}", 100, []string{"!-32700", "{}"}, io.EOF},
		{"header bad length", FramingHeader, "Content-Length: -5\r\n\r\nContent-Length: 2\r\n\r\n{}", 100, []string{"!-32700", "{}"}, io.EOF},
		{"header zero length", FramingHeader, "Content-Length: 0\r\n\r\nContent-Length: 2\r\n\r\n{}", 100, []string{"!-32700", "{}"}, io.EOF},
		{"header truncated body", FramingHeader, "Content-Length: 10\r\n\r\n{}", 100, nil, io.ErrUnexpectedEOF},
		{"header truncated header", FramingHeader, "Content-Length: 10\r\n", 100, nil, io.ErrUnexpectedEOF},
		{"header line too long", FramingHeader, "X: " + strings.Repeat("y", maxHeaderLine+10) + "\r\nContent-Length: 2\r\n\r\n{}Content-Length: 2\r\n\r\n[]", 100, []string{"!-32700", "[]"}, io.EOF},
		{"auto ndjson", FramingAuto, "  \n{\"a\":1}\n", 100, []string{`{"a":1}`}, io.EOF},
		{"auto header", FramingAuto, "\r\nContent-Length: 2\r\n\r\n{}", 100, []string{"{}"}, io.EOF},
		{"auto lower-case header", FramingAuto, "content-length: 2\r\n\r\n{}", 100, []string{"{}"}, io.EOF},
		{"auto garbage is ndjson", FramingAuto, "hello\n{}\n", 100, []string{"hello", "{}"}, io.EOF},
		{"auto empty", FramingAuto, " \n ", 100, nil, io.EOF},
	} {
		t.Run(test.name, func(t *testing.T) {
			got, err := readAll(t, []byte(test.input), test.framing, test.max)
			if !errors.Is(err, test.wantErr) {
				t.Fatalf("terminating error %v, want %v", err, test.wantErr)
			}
			if strings.Join(got, "|") != strings.Join(test.want, "|") {
				t.Fatalf("frames %q, want %q", got, test.want)
			}
		})
	}
}

// endless yields n bytes of 'a' without a newline, cheaply.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.n {
		p = p[:e.n]
	}
	for i := range p {
		p[i] = 'a'
	}
	e.n -= int64(len(p))
	return len(p), nil
}

// TestOversizeIsNotBuffered checks that skipping an oversized message costs
// memory bounded by the limit, not by the message.
func TestOversizeIsNotBuffered(t *testing.T) {
	const size = 64 << 20
	const max = 256 << 10
	for _, framing := range []Framing{FramingNDJSON, FramingHeader} {
		t.Run(framing.String(), func(t *testing.T) {
			var in io.Reader
			if framing == FramingHeader {
				in = io.MultiReader(strings.NewReader(fmt.Sprintf("Content-Length: %d\r\n\r\n", size)), &endless{n: size},
					strings.NewReader("Content-Length: 2\r\n\r\n{}"))
			} else {
				in = io.MultiReader(&endless{n: size}, strings.NewReader("\n{}\n"))
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			fr := newFrameReader(in, framing, max)
			_, err := fr.next()
			var fe *frameError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v, want an oversize error", err)
			}
			frame, err := fr.next()
			if err != nil || string(frame) != "{}" {
				t.Fatalf("after oversize: %q, %v", frame, err)
			}
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8*max {
				t.Fatalf("skipping a %d-byte message allocated %d bytes", size, alloc)
			}
		})
	}
}

// refNDJSON is the obvious model of the NDJSON reader: split on '\n'; a line
// longer than max (not counting '\n') is an oversize error; blank lines are
// skipped; a trailing '\r' is dropped.
func refNDJSON(input []byte, max int64) []string {
	var out []string
	lines := bytes.Split(input, []byte{'\n'})
	for _, line := range lines {
		switch {
		case int64(len(line)) > max:
			out = append(out, "!-32600")
		case isBlank(line):
		default:
			out = append(out, string(bytes.TrimSuffix(line, []byte{'\r'})))
		}
	}
	return out
}

func FuzzReadFrame(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}\n\n{}\r\n"), uint16(64))
	f.Add([]byte("Content-Length: 2\r\n\r\n{}Content-Length: 3\r\n\r\n[1]"), uint16(64))
	f.Add([]byte("content-length: 99999\r\n\r\nabc"), uint16(8))
	f.Add([]byte("Content-Length: 5\nX\n\nhello\n\n"), uint16(3))
	f.Add([]byte(strings.Repeat("z", 300)+"\n{}"), uint16(16))
	f.Fuzz(func(t *testing.T, data []byte, max16 uint16) {
		max := int64(max16%512) + 1
		// NDJSON must match the reference model exactly.
		got, err := readAll(t, data, FramingNDJSON, max)
		if !errors.Is(err, io.EOF) {
			t.Fatalf("ndjson ended with %v, want EOF", err)
		}
		if want := refNDJSON(data, max); strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("ndjson frames\n got %q\nwant %q", got, want)
		}
		// Header framing and detection: always terminate, never exceed max,
		// end with EOF or a truncation.
		for _, fr := range []Framing{FramingHeader, FramingAuto} {
			_, err := readAll(t, data, fr, max)
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("%v ended with %v", fr, err)
			}
		}
	})
}

// TestResponseKey pins responseKey to what the library writes: the id of a
// response, and nothing for calls, notifications and null ids.
func TestResponseKey(t *testing.T) {
	for _, tc := range []struct {
		msg  jsonrpc2.Message
		want string
	}{
		{jsonrpc2.NewResponse(jsonrpc2.NewNumberID(7), jsonrpc2.RawMessage(`{"a":1}`), nil), "n7"},
		{jsonrpc2.NewResponse(jsonrpc2.NewNumberID(-3), nil, nil), "n-3"},
		{jsonrpc2.NewResponse(jsonrpc2.NewStringID(`a"b\,c`), nil, &jsonrpc2.Error{Code: CodeInternal, Message: "x"}), `sa"b\,c`},
		{jsonrpc2.NewResponse(jsonrpc2.NewStringID("é"), jsonrpc2.RawMessage(`"result"`), nil), "sé"},
		{jsonrpc2.NewResponse(jsonrpc2.ID{}, nil, &jsonrpc2.Error{Code: CodeParseError, Message: "x"}), ""},
	} {
		body, err := jsonrpc2.EncodeMessage(tc.msg)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := responseKey(body); got != tc.want || ok != (tc.want != "") {
			t.Errorf("responseKey(%s) = %q, %v; want %q", body, got, ok, tc.want)
		}
	}
	call := jsonrpc2.NewCall(jsonrpc2.NewNumberID(1), "m", nil)
	note := jsonrpc2.NewNotification("m", nil)
	for _, m := range []jsonrpc2.Message{call, note} {
		body, _ := jsonrpc2.EncodeMessage(m)
		if got, ok := responseKey(body); ok {
			t.Errorf("responseKey(%s) = %q; want none", body, got)
		}
	}
}
