package models

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Defaults of [Options].
const (
	DefaultMaxRetries   = 3 // four attempts in all
	DefaultRetryBase    = 500 * time.Millisecond
	DefaultStallTimeout = 60 * time.Second
)

// maxRetryAfter is the longest server-requested wait (before scaling) this
// package sits through; a provider asking for more gets its error returned
// instead of a silent multi-minute hang.
const maxRetryAfter = 60 * time.Second

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// APIError is an error reported by a provider: an HTTP status other than 200,
// or an error event inside the stream (Status 0 then).
type APIError struct {
	Provider string
	Status   int    // HTTP status; 0 for an error event inside the stream
	Type     string // the provider's error type, e.g. "rate_limit_error"
	Message  string // the provider's message, or the start of the body

	retry      bool          // worth another attempt if nothing was delivered
	retryAfter time.Duration // server-requested wait, 0 if none
}

func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	b.WriteString(": ")
	if e.Status != 0 {
		fmt.Fprintf(&b, "HTTP %d %s", e.Status, http.StatusText(e.Status))
	} else {
		b.WriteString("stream error")
	}
	if e.Type != "" {
		b.WriteString(": ")
		b.WriteString(e.Type)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// errStalled is the cancellation cause set by the stall timer.
var errStalled = errors.New("stalled")

// client is the HTTP side shared by the providers: one POST of a JSON body
// answered by an event stream, with the retry and stall policies.
type client struct {
	provider   string
	http       *http.Client
	maxRetries int
	retryBase  time.Duration
	stall      time.Duration
	log        *slog.Logger
	// sleep waits between attempts; tests replace it to record the waits.
	sleep func(ctx context.Context, d time.Duration) error
}

func newClient(provider string, opts Options) *client {
	c := &client{
		provider:   provider,
		http:       opts.HTTPClient,
		maxRetries: opts.MaxRetries,
		retryBase:  opts.RetryBase,
		stall:      opts.StallTimeout,
		log:        opts.Logger,
		sleep:      sleepCtx,
	}
	if c.http == nil {
		c.http = http.DefaultClient
	}
	switch {
	case c.maxRetries == 0:
		c.maxRetries = DefaultMaxRetries
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.retryBase <= 0 {
		c.retryBase = DefaultRetryBase
	}
	if c.stall <= 0 {
		c.stall = DefaultStallTimeout
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// parseFunc reads one response's event stream and emits its events. It
// returns nil only after the response completed.
type parseFunc func(r io.Reader, emit func(Event)) error

// stream POSTs body to url and parses the answer with parse, retrying
// failures that happen before any event reached on.
func (c *client) stream(ctx context.Context, url string, header http.Header, body []byte, parse parseFunc, on func(Event)) error {
	for attempt := 1; ; attempt++ {
		delivered := false
		err := c.attempt(ctx, url, header, body, parse, func(e Event) {
			delivered = true
			on(e)
		})
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		wait, retry := c.retryDelay(err, attempt)
		if delivered || !retry {
			if attempt > 1 {
				return fmt.Errorf("%w (after %d attempts)", err, attempt)
			}
			return err
		}
		if attempt > c.maxRetries {
			if attempt == 1 {
				return err
			}
			return fmt.Errorf("%w (gave up after %d attempts)", err, attempt)
		}
		c.log.LogAttrs(ctx, slog.LevelWarn, "model request failed; retrying",
			slog.String("provider", c.provider),
			slog.Int("attempt", attempt),
			slog.Duration("wait", wait),
			slog.String("error", err.Error()))
		if err := c.sleep(ctx, wait); err != nil {
			return ctx.Err()
		}
	}
}

// retryDelay says whether err is worth another attempt and how long to wait
// first: the server's Retry-After when given (scaled by RetryBase relative to
// its default, so tests that shrink the base shrink it too), else exponential
// backoff with jitter.
func (c *client) retryDelay(err error, attempt int) (time.Duration, bool) {
	var apiErr *APIError
	var rerr *readError
	switch {
	case errors.As(err, &apiErr):
		if !apiErr.retry {
			return 0, false
		}
		if apiErr.retryAfter > 0 {
			if apiErr.retryAfter > maxRetryAfter {
				return 0, false
			}
			return time.Duration(float64(apiErr.retryAfter) * float64(c.retryBase) / float64(DefaultRetryBase)), true
		}
	case errors.As(err, &rerr):
	default:
		return 0, false
	}
	d := c.retryBase << min(attempt-1, 6)
	return d/2 + rand.N(d/2+1), true
}

// attempt makes one request. The stall timer runs from the start of the
// request until the end of the stream, reset whenever bytes arrive and
// paused while on runs, so a slow consumer is not mistaken for a stalled
// provider.
func (c *client) attempt(ctx context.Context, url string, header http.Header, body []byte, parse parseFunc, emit func(Event)) error {
	reqCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := time.AfterFunc(c.stall, func() { cancel(errStalled) })
	defer timer.Stop()
	// fail turns an error into the stall error when the stall timer caused it.
	fail := func(err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(context.Cause(reqCtx), errStalled) {
			return &readError{fmt.Errorf("%s: no data from the stream for %s", c.provider, formatDuration(c.stall))}
		}
		return err
	}

	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: %w", c.provider, err)
	}
	req.Header = header.Clone()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.http.Do(req)
	if err != nil {
		return fail(&readError{fmt.Errorf("%s: %w", c.provider, err)})
	}
	defer resp.Body.Close()
	r := &stallReader{r: resp.Body, timer: timer, d: c.stall}

	if resp.StatusCode != http.StatusOK {
		b, err := io.ReadAll(io.LimitReader(r, maxErrorBody))
		if err != nil && len(b) == 0 {
			return fail(&readError{fmt.Errorf("%s: HTTP %d, reading the error body: %w", c.provider, resp.StatusCode, err)})
		}
		return c.httpError(resp, b)
	}
	// A JSON body on 200 is a server that ignored "stream": true or reports
	// an error that way; any other type is read as a stream, since some
	// compatible servers label their streams loosely.
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
		b, _ := io.ReadAll(io.LimitReader(r, maxErrorBody))
		e := &APIError{Provider: c.provider, Status: resp.StatusCode}
		e.Type, e.Message = errorBodyMessage(b)
		return fmt.Errorf("%s: expected an event stream, got %s: %s", c.provider, mt, e.Message)
	}

	err = parse(r, func(e Event) {
		timer.Stop()
		emit(e)
		timer.Reset(c.stall)
	})
	if err != nil {
		return fail(err)
	}
	return nil
}

// httpError builds the error for a non-200 answer.
func (c *client) httpError(resp *http.Response, body []byte) *APIError {
	e := &APIError{Provider: c.provider, Status: resp.StatusCode}
	e.Type, e.Message = errorBodyMessage(body)
	if e.Message == "" {
		e.Message = "(empty body)"
	}
	s := resp.StatusCode
	e.retry = s == http.StatusRequestTimeout || s == http.StatusTooManyRequests || s >= 500
	switch resp.Header.Get("X-Should-Retry") {
	case "true":
		e.retry = true
	case "false":
		e.retry = false
	}
	e.retryAfter = parseRetryAfter(resp.Header, time.Now())
	return e
}

// errorBodyMessage extracts the error type and message from an error body in
// the shapes providers use: Anthropic {"type":"error","error":{"type","message"}},
// OpenAI {"error":{"message","type","code"}}, Ollama and others
// {"error":"message"}; anything else is quoted (trimmed) as it came.
func errorBodyMessage(body []byte) (typ, msg string) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &v) == nil {
		var obj struct {
			Type    string          `json:"type"`
			Message string          `json:"message"`
			Code    json.RawMessage `json:"code"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &obj) == nil && obj.Message != "":
			typ = obj.Type
			if typ == "" && len(obj.Code) > 0 && string(obj.Code) != "null" {
				typ = strings.Trim(string(obj.Code), `"`)
			}
			return typ, obj.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return "", s
		case v.Message != "":
			return "", v.Message
		}
	}
	return "", truncate(strings.TrimSpace(string(body)), 500)
}

// parseRetryAfter reads retry-after-ms (sent by Anthropic and OpenAI) or
// Retry-After in seconds or as an HTTP date.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// stallReader resets the stall timer whenever bytes arrive.
type stallReader struct {
	r     io.Reader
	timer *time.Timer
	d     time.Duration
}

func (s *stallReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if n > 0 {
		s.timer.Reset(s.d)
	}
	return n, err
}

// formatDuration prints whole seconds as "60s" rather than Go's "1m0s".
func formatDuration(d time.Duration) string {
	if d >= time.Second && d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return d.String()
}

// truncate shortens s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// malformed reports an event the parser could not understand.
func malformed(provider, event string, data []byte, err error) error {
	return fmt.Errorf("%s: malformed %q event: %v; data: %s", provider, event, err, truncate(string(data), 200))
}
