package models

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []sseEvent
	}{
		{"named", "event: ping\ndata: {}\n\n", []sseEvent{{"ping", []byte("{}")}}},
		{"crlf", "event: a\r\ndata: 1\r\n\r\n", []sseEvent{{"a", []byte("1")}}},
		{"no space after colon", "data:x\n\n", []sseEvent{{"", []byte("x")}}},
		{"only one space stripped", "data:  x\n\n", []sseEvent{{"", []byte(" x")}}},
		{"multi-line data", "data: a\ndata: b\n\n", []sseEvent{{"", []byte("a\nb")}}},
		{"comments and unknown fields", ": hi\nid: 3\nretry: 10\nfoo\ndata: x\n\n", []sseEvent{{"", []byte("x")}}},
		{"event without data is dropped", "event: a\n\ndata: b\n\n", []sseEvent{{"", []byte("b")}}},
		{"leading blank lines", "\n\n\ndata: x\n\n", []sseEvent{{"", []byte("x")}}},
		{"unterminated last event is discarded", "data: x\n\ndata: y\n", []sseEvent{{"", []byte("x")}}},
		{"utf-8", "data: ☃é\n\n", []sseEvent{{"", []byte("☃é")}}},
	}
	for _, tc := range tests {
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = strings.NewReader(tc.in)
			if oneByte {
				r = iotest.OneByteReader(r)
			}
			s := newSSEReader(r)
			var got []sseEvent
			for {
				ev, err := s.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				ev.Data = append([]byte(nil), ev.Data...)
				got = append(got, ev)
			}
			if len(got) != len(tc.want) {
				t.Errorf("%s (oneByte=%v): got %q, want %q", tc.name, oneByte, got, tc.want)
				continue
			}
			for i := range got {
				if got[i].Name != tc.want[i].Name || string(got[i].Data) != string(tc.want[i].Data) {
					t.Errorf("%s (oneByte=%v): event %d = %q, want %q", tc.name, oneByte, i, got[i], tc.want[i])
				}
			}
		}
	}
}

func TestSSEReaderReadError(t *testing.T) {
	s := newSSEReader(iotest.ErrReader(errors.New("connection reset")))
	_, err := s.Next()
	var re *readError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("err %v, want a readError", err)
	}
}

func TestSSEReaderLongLine(t *testing.T) {
	long := strings.Repeat("x", 100_000)
	s := newSSEReader(strings.NewReader("data: " + long + "\n\n"))
	ev, err := s.Next()
	if err != nil || string(ev.Data) != long {
		t.Errorf("err %v, len %d", err, len(ev.Data))
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		h    map[string]string
		want time.Duration
	}{
		{map[string]string{}, 0},
		{map[string]string{"Retry-After": "2"}, 2 * time.Second},
		{map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{map[string]string{"Retry-After": "-1"}, 0},
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{"Retry-After": now.Add(3 * time.Second).Format(http.TimeFormat)}, 3 * time.Second},
		{map[string]string{"Retry-After": now.Add(-3 * time.Second).Format(http.TimeFormat)}, 0},
		{map[string]string{"Retry-After-Ms": "150", "Retry-After": "9"}, 150 * time.Millisecond},
	}
	for _, tc := range tests {
		h := http.Header{}
		for k, v := range tc.h {
			h.Set(k, v)
		}
		if got := parseRetryAfter(h, now); got != tc.want {
			t.Errorf("%v: got %v, want %v", tc.h, got, tc.want)
		}
	}
}

func TestErrorBodyMessage(t *testing.T) {
	tests := []struct{ body, typ, msg string }{
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "overloaded_error", "Overloaded"},
		{`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`, "invalid_request_error", "Incorrect API key provided"},
		{`{"error":{"message":"quota","type":null,"code":"insufficient_quota"}}`, "insufficient_quota", "quota"},
		{`{"error":"model \"x\" not found"}`, "", `model "x" not found`},
		{`{"message":"bad gateway"}`, "", "bad gateway"},
		{"<html>502 Bad Gateway</html>\n", "", "<html>502 Bad Gateway</html>"},
		{strings.Repeat("é", 400), "", strings.Repeat("é", 250) + "…"},
	}
	for _, tc := range tests {
		typ, msg := errorBodyMessage([]byte(tc.body))
		if typ != tc.typ || msg != tc.msg {
			t.Errorf("%.40s: got (%q, %q), want (%q, %q)", tc.body, typ, msg, tc.typ, tc.msg)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{60 * time.Second: "60s", 200 * time.Millisecond: "200ms", 90 * time.Second: "90s", 1500 * time.Millisecond: "1.5s"} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

// trickleBody yields one piece per Read, each after a pause shorter than the
// stall timeout, so the whole stream outlasts the timeout.
type trickleBody struct {
	ctx    context.Context // the request's, as a real transport honours it
	events []string
	pause  time.Duration
}

func (b *trickleBody) Read(p []byte) (int, error) {
	if len(b.events) == 0 {
		return 0, io.EOF
	}
	select {
	case <-time.After(b.pause): // a slow network, not a wait for a condition
	case <-b.ctx.Done():
		return 0, b.ctx.Err()
	}
	n := copy(p, b.events[0])
	b.events[0] = b.events[0][n:]
	if b.events[0] == "" {
		b.events = b.events[1:]
	}
	return n, nil
}

func (b *trickleBody) Close() error { return nil }

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestStallTimerResetsOnEveryByte(t *testing.T) {
	// Keep-alive comments produce no events: only the bytes themselves
	// can keep the stall timer from firing.
	var events []string
	for range 8 {
		events = append(events, ": keep-alive\n\n")
	}
	events = append(events, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"xxxxxxxx\"}}]}\n\n", "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n", "data: [DONE]\n\n")
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{
			StatusCode: 200,
			Header:     http.Header{"Content-Type": {"text/event-stream"}},
			Body:       &trickleBody{ctx: r.Context(), events: events, pause: 25 * time.Millisecond},
			Request:    r,
		}, nil
	})}
	// 11 pauses of 25ms: 275ms in all, more than the 100ms stall timeout,
	// but never 100ms without a byte.
	m, err := NewOpenAI("m", "", "http://model.invalid/v1", Options{HTTPClient: hc, StallTimeout: 100 * time.Millisecond, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	var text string
	err = m.Stream(t.Context(), Request{Messages: userText("hi")}, func(e Event) { text += e.Text })
	if err != nil || text != "xxxxxxxx" {
		t.Errorf("err %v text %q", err, text)
	}
}
