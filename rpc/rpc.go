// Package rpc is the agent's JSON-RPC 2.0 / ACP v1 layer: framing (NDJSON or
// Content-Length headers, detected from the first byte), ids, error codes,
// cancellation and the ACP wire types. Call [Serve] with an [Agent]
// implementation; the agent talks back to the client through [Client].
//
// It is the only package that imports the JSON-RPC library
// (go.lsp.dev/jsonrpc2), so nothing else depends on its borrowing and
// pooling rules: handlers get their own contexts, never the library's.
package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// Agent is what the server dispatches to. It is implemented by package
// session.
//
// Calls run concurrently, each on its own goroutine with a context that ends
// when the client cancels the request ($/cancel_request or $/cancelRequest)
// or the connection ends. Notifications run one at a time in arrival order on
// the read loop (so document/didChange stays ordered) and must not block for
// long: no message is read while one runs. Requests other than initialize
// wait until initialize has succeeded.
type Agent interface {
	Initialize(ctx context.Context, req *InitializeRequest) (*InitializeResponse, error)
	// Authenticate handles authenticate; Logout handles logout.
	Authenticate(ctx context.Context, req *AuthenticateRequest) (*AuthenticateResponse, error)
	Logout(ctx context.Context, req *LogoutRequest) (*LogoutResponse, error)
	NewSession(ctx context.Context, req *NewSessionRequest) (*NewSessionResponse, error)
	LoadSession(ctx context.Context, req *LoadSessionRequest) (*LoadSessionResponse, error)
	ResumeSession(ctx context.Context, req *ResumeSessionRequest) (*ResumeSessionResponse, error)
	ListSessions(ctx context.Context, req *ListSessionsRequest) (*ListSessionsResponse, error)
	CloseSession(ctx context.Context, req *CloseSessionRequest) (*CloseSessionResponse, error)
	SetSessionMode(ctx context.Context, req *SetSessionModeRequest) (*SetSessionModeResponse, error)
	SetSessionConfigOption(ctx context.Context, req *SetSessionConfigOptionRequest) (*SetSessionConfigOptionResponse, error)
	Prompt(ctx context.Context, req *PromptRequest) (*PromptResponse, error)
	// Cancel handles the session/cancel notification.
	Cancel(ctx context.Context, n *CancelNotification)
	// ToolsList handles _coding-agent/tools/list.
	ToolsList(ctx context.Context, req *ToolsListRequest) (*ToolsListResponse, error)
	// ToolsCall handles _coding-agent/tools/call.
	ToolsCall(ctx context.Context, req *ToolsCallRequest) (*ToolsCallResponse, error)
	// OutputsList handles _coding-agent/outputs/list.
	OutputsList(ctx context.Context, req *OutputsListRequest) (*OutputsListResponse, error)
	// OutputsRemove handles _coding-agent/outputs/remove.
	OutputsRemove(ctx context.Context, req *OutputsRemoveRequest) (*OutputsRemoveResponse, error)
	// DidOpen, DidChange, DidSave and DidClose handle the document/*
	// notifications.
	DidOpen(ctx context.Context, n *DidOpenNotification)
	DidChange(ctx context.Context, n *DidChangeNotification)
	DidSave(ctx context.Context, n *DidSaveNotification)
	DidClose(ctx context.Context, n *DidCloseNotification)
}

// Client is the agent's handle on the connected client. Its methods are safe
// for concurrent use; each message is written whole, in call order per
// goroutine.
type Client interface {
	// SessionUpdate sends a session/update notification.
	SessionUpdate(ctx context.Context, n *SessionNotification) error
	// RequestPermission sends session/request_permission and waits for the
	// answer. When ctx ends first it tells the client with
	// $/cancel_request {requestId} and returns ctx.Err(). An error answer
	// from the client is returned as *Error; an answer that is not a valid
	// outcome (not "selected" with an optionId, nor "cancelled") is an error.
	RequestPermission(ctx context.Context, req *RequestPermissionRequest) (*RequestPermissionResponse, error)
	// FilesChanged sends a _coding-agent/files_changed notification.
	FilesChanged(ctx context.Context, n *FilesChangedNotification) error
}

// DefaultMaxCallsInFlight is the default of Options.MaxCallsInFlight.
const DefaultMaxCallsInFlight = 256

// Options configures [Serve]. The zero value is ready to use.
type Options struct {
	// Framing forces a framing; FramingAuto (the default) detects it.
	Framing Framing
	// MaxMessageBytes limits one incoming message; 0 means
	// DefaultMaxMessageBytes (64 MiB).
	MaxMessageBytes int64
	// Logger receives diagnostics; nil discards them. Nothing is ever
	// written to the protocol output except protocol messages.
	Logger *slog.Logger
	// Trace, if set, receives one line per message in and out:
	// "recv <json>" or "send <json>"; rejected input is noted as
	// "recv # <reason>".
	Trace io.Writer
	// MaxCallsInFlight bounds the calls received whose answers have not
	// been written yet; 0 means DefaultMaxCallsInFlight. A call beyond it
	// is answered at once with [CodeServerBusy] (PROTOCOL.md §1).
	MaxCallsInFlight int
	// MaxBytesInFlight bounds the params of those calls, in bytes; 0 means
	// MaxMessageBytes. A call alone is always accepted.
	MaxBytesInFlight int64
	// ShutdownTimeout bounds how long Serve waits, once the connection
	// ends, for running handlers to return after their contexts were
	// cancelled; 0 means 1.5 s.
	ShutdownTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxCallsInFlight <= 0 {
		o.MaxCallsInFlight = DefaultMaxCallsInFlight
	}
	if o.MaxBytesInFlight <= 0 {
		o.MaxBytesInFlight = o.MaxMessageBytes
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = 1500 * time.Millisecond
	}
	return o
}

// Serve runs one connection until in reaches EOF, ctx ends, or writing to out
// fails. newAgent is called once with the Client before the first message is
// read.
//
// When the connection ends, Serve cancels the contexts of all running
// handlers, waits for them up to Options.ShutdownTimeout, and closes in and
// out if they are io.Closers. It returns nil after EOF, ctx.Err() when ctx
// ended, and the I/O error otherwise.
func Serve(ctx context.Context, in io.Reader, out io.Writer, newAgent func(Client) Agent, opts Options) error {
	opts = opts.withDefaults()
	st := newStream(in, out, &opts)
	base, cancelBase := context.WithCancel(ctx)
	defer cancelBase()
	// The library's own context lives until the answers are out: when it
	// ends, replies are no longer written. Handlers get base, which ends
	// as soon as the connection does.
	connCtx, cancelConn := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelConn()

	s := &server{
		maxCalls: opts.MaxCallsInFlight,
		maxBytes: opts.MaxBytesInFlight,
		base:     base,
		logger:   opts.Logger,
		calls:    newCallTable(),
		notifies: newNotifyTable(),
		running:  make(map[string]*registration),
	}
	st.writing, st.answered = s.owed.pay, s.runAfter
	defer s.runAfter("") // what the connection ended without answering
	conn := jsonrpc2.NewConn(st, jsonrpc2.WithCodec(stdCodec{}))
	s.agent = newAgent(&client{conn: conn, logger: opts.Logger, optIns: &s.optIns})
	conn.Go(connCtx, s.handle)

	var err error
	select {
	case <-st.readDone:
		if !errors.Is(st.readErr, io.EOF) {
			err = fmt.Errorf("reading input: %w", st.readErr)
		}
	case <-st.writeDone:
		err = st.writeErr
	case <-ctx.Done():
		err = ctx.Err()
	case <-conn.Done():
		err = conn.Err()
	}

	// Cancel every handler first so the agent can stop its work (kill
	// process trees). Every call received then gets its answer (a result,
	// or -32800 once its handler saw the cancellation) before the library
	// learns that input ended, which would stop it from writing replies:
	// a client that closed our stdin may still be reading.
	cancelBase()
	deadline := time.NewTimer(opts.ShutdownTimeout)
	defer deadline.Stop()
	expired := false
	wait := func(ch <-chan struct{}) {
		if expired {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			expired = true
		}
	}
	if err == nil || !errors.Is(err, st.writeErr) {
		wait(s.owed.settled())
		if expired {
			opts.Logger.Warn("calls still unanswered after the shutdown timeout", "timeout", opts.ShutdownTimeout, "unanswered", s.owed.count())
		}
	}
	st.releaseRead()
	st.closeIn()
	wait(conn.Done())
	st.closeOut()
	return err
}

// server dispatches incoming messages to the agent.
type server struct {
	base     context.Context // cancelled when the connection ends
	logger   *slog.Logger
	agent    Agent
	calls    map[string]callFunc
	notifies map[string]notifyFunc
	init     initState
	owed     debts // calls received and not answered yet
	maxCalls int   // bounds of owed
	maxBytes int64
	optIns   optIns

	// mu guards running (the running calls by id key) and after (the
	// AfterAnswer functions by id key).
	mu      sync.Mutex
	running map[string]*registration
	after   map[string][]func()
}

// answerKey is the context key under which a call's handler context holds
// its id key, for [AfterAnswer].
type answerKey struct{}

// afterer is what [AfterAnswer] finds in a handler's context.
type afterer struct {
	s   *server
	key string
}

// AfterAnswer arranges for f to run once the answer to the call being
// handled with ctx has been written to the client (or the connection ended
// without writing it). It is the ordering hook for work that must follow an
// answer, such as starting something once initialize has been answered. f
// runs on the goroutine that wrote the answer and must not block. Outside a
// handler's context, f runs at once.
func AfterAnswer(ctx context.Context, f func()) {
	a, ok := ctx.Value(answerKey{}).(afterer)
	if !ok {
		f()
		return
	}
	a.s.mu.Lock()
	if a.s.after == nil {
		a.s.after = map[string][]func(){}
	}
	a.s.after[a.key] = append(a.s.after[a.key], f)
	a.s.mu.Unlock()
}

// runAfter runs the AfterAnswer functions of key, or of every call when key
// is "".
func (s *server) runAfter(key string) {
	s.mu.Lock()
	var fs []func()
	if key == "" {
		for _, l := range s.after {
			fs = append(fs, l...)
		}
		s.after = nil
	} else {
		fs = s.after[key]
		delete(s.after, key)
	}
	s.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// registration is a running call's entry in server.running.
type registration struct {
	cancel context.CancelFunc
}

// handle is the jsonrpc2.Handler. It runs on the library's read loop. The
// library's ctx is pooled with the request and must not be retained or
// derived from (go.lsp.dev/jsonrpc2 v1.0.1 crashes when a context derived
// from it outlives the handler), so handlers get contexts derived from
// s.base, and calls release the read loop with Async before running.
func (s *server) handle(ctx context.Context, req *jsonrpc2.Request) (any, error) {
	if !req.IsCall() {
		// Notifications run here, on the read loop, in wire order: a
		// cancellation is seen before anything that follows it.
		if !s.cancelNotification(req) {
			s.handleNotification(req)
		}
		return nil, nil
	}
	if !s.owed.owe(idKey(req.ID()), int64(len(req.Params())), s.maxCalls, s.maxBytes) {
		// Answered here, on the read loop: while the client does not read
		// that answer, nothing more is read either.
		return nil, &jsonrpc2.Error{Code: CodeServerBusy, Message: fmt.Sprintf(
			"server overloaded: %d calls (%d bytes of params) are waiting for their answers to be written or read; retry later",
			s.owed.count(), s.owed.size())}
	}
	method := req.Method()
	// Initialization order is decided here, on the read loop, so it follows
	// wire order even though calls then run concurrently.
	var (
		initWait <-chan struct{}
		finish   func(bool)
		ok       bool
	)
	if method != MethodInitialize {
		if initWait, ok = s.init.wait(); !ok {
			return nil, &jsonrpc2.Error{Code: CodeInvalidRequest, Message: "not initialized: send initialize first"}
		}
	}
	fn, ok := s.calls[method]
	if !ok {
		return nil, &jsonrpc2.Error{Code: CodeMethodNotFound, Message: fmt.Sprintf("method not found: %q", method)}
	}
	if method == MethodInitialize {
		finish = s.init.begin()
		s.optIns.parse(json.RawMessage(req.Params()))
	}
	method = strings.Clone(method)

	// Register for cancellation before Async hands the read loop over, so a
	// $/cancel_request that follows on the wire always finds the request.
	key := idKey(req.ID())
	hctx, cancel := context.WithCancel(context.WithValue(s.base, answerKey{}, afterer{s, key}))
	reg := &registration{cancel: cancel}
	s.mu.Lock()
	s.running[key] = reg
	s.mu.Unlock()
	jsonrpc2.Async(ctx)
	defer func() {
		s.mu.Lock()
		if s.running[key] == reg { // a reused id may have replaced us
			delete(s.running, key)
		}
		s.mu.Unlock()
		cancel()
	}()

	if initWait != nil {
		select {
		case <-initWait:
		case <-hctx.Done():
			return nil, wireError(hctx.Err())
		}
		if !s.init.ready() {
			return nil, &jsonrpc2.Error{Code: CodeInvalidRequest, Message: "not initialized: initialize failed"}
		}
	}
	raw, err := s.invoke(hctx, method, fn, json.RawMessage(req.Params()))
	switch {
	case finish != nil && err == nil:
		// Calls waiting for initialize are answered after it.
		AfterAnswer(hctx, func() { finish(true) })
	case finish != nil:
		finish(false)
	}
	if err != nil {
		return nil, wireError(err)
	}
	return raw, nil
}

// invoke calls fn and encodes its result. A panic, in the agent or in
// encoding, becomes an internal error, so one broken handler cannot take
// the process down.
func (s *server) invoke(ctx context.Context, method string, fn callFunc, params json.RawMessage) (raw json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.logger.Error("handler panic", "method", method, "panic", p, "stack", string(debug.Stack()))
			raw, err = nil, &Error{Code: CodeInternal, Message: fmt.Sprintf("internal error in %s: %v", method, p)}
		}
	}()
	result, err := fn(ctx, s.agent, params)
	if err != nil {
		return nil, err
	}
	if raw, err = encode(result); err != nil {
		s.logger.Error("encoding result", "method", method, "error", err)
		return nil, &Error{Code: CodeInternal, Message: "internal error: encoding result: " + err.Error()}
	}
	return raw, nil
}

// handleNotification runs a notification inline, in arrival order. Errors
// cannot be answered, so they are logged.
func (s *server) handleNotification(req *jsonrpc2.Request) {
	method := req.Method()
	fn, ok := s.notifies[method]
	if !ok {
		s.logger.Debug("ignoring unknown notification", "method", method)
		return
	}
	wait, ok := s.init.wait()
	if !ok {
		s.logger.Warn("ignoring notification before initialize", "method", method)
		return
	}
	select {
	case <-wait:
	case <-s.base.Done():
		return
	}
	if !s.init.ready() {
		s.logger.Warn("ignoring notification: initialize failed", "method", method)
		return
	}
	defer func() {
		if p := recover(); p != nil {
			s.logger.Error("notification handler panic", "method", method, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	if err := fn(s.base, s.agent, json.RawMessage(req.Params())); err != nil {
		s.logger.Warn("ignoring invalid notification", "method", method, "error", err)
	}
}

// cancelRequest cancels the running call with the given id key, if any.
func (s *server) cancelRequest(key string) {
	s.mu.Lock()
	reg := s.running[key]
	s.mu.Unlock()
	if reg != nil {
		reg.cancel()
	}
}

// cancelNotification handles $/cancel_request (or LSP's $/cancelRequest)
// and reports whether req was one.
func (s *server) cancelNotification(req *jsonrpc2.Request) bool {
	member := map[string]string{methodCancelRequestACP: "requestId", methodCancelRequestLSP: "id"}[req.Method()]
	if member == "" {
		return false
	}
	var params map[string]json.RawMessage
	if err := json.Unmarshal(req.Params(), &params); err != nil || params[member] == nil {
		s.logger.Warn("ignoring invalid cancellation", "method", req.Method(), "missing", member)
	} else if id := decodeID(params[member]); id.IsValid() {
		s.cancelRequest(idKey(id))
	}
	return true
}

// idKey is a map key for a request id that keeps numbers and strings apart
// and owns its bytes.
func idKey(id jsonrpc2.ID) string {
	if n, ok := id.Number(); ok {
		return "n" + strconv.FormatInt(n, 10)
	}
	if s, ok := id.StringValue(); ok {
		return "s" + strings.Clone(s)
	}
	return "null"
}

// initState tracks the initialize handshake in wire order.
type initState struct {
	mu    sync.Mutex
	state int // 0: not started, 1: in progress, 2: done
	done  chan struct{}
}

// begin records an initialize request. The returned finish reports its
// outcome; a failed initialize returns to the not-started state.
func (i *initState) begin() func(ok bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.state != 0 {
		return func(bool) {}
	}
	i.state = 1
	done := make(chan struct{})
	i.done = done
	return func(ok bool) {
		i.mu.Lock()
		if ok {
			i.state = 2
		} else {
			i.state = 0
		}
		i.mu.Unlock()
		close(done)
	}
}

// wait returns a channel closed once initialize has finished, and false if
// no initialize has been received.
func (i *initState) wait() (<-chan struct{}, bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.state == 0 {
		return nil, false
	}
	return i.done, true
}

func (i *initState) ready() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.state == 2
}

// debts tracks the calls received and not yet answered, by id, with the
// size of their params: a shutdown waits for their answers to be written,
// and they are the calls in flight that the connection bounds (a call stays
// in flight until its answer is written, so a client that does not read
// cannot make answers pile up).
type debts struct {
	mu      sync.Mutex
	m       map[string][]int64 // params sizes of the calls owed, by id key
	n       int                // calls owed
	bytes   int64              // their params, in bytes
	waiters []chan struct{}
}

// owe records a call whose params have size bytes, unless maxCalls calls
// are owed already or its params would take the total beyond maxBytes (a
// call alone is always accepted). It reports whether the call was recorded.
func (d *debts) owe(key string, size int64, maxCalls int, maxBytes int64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.n >= maxCalls || (d.n > 0 && d.bytes+size > maxBytes) {
		return false
	}
	if d.m == nil {
		d.m = map[string][]int64{}
	}
	d.m[key] = append(d.m[key], size)
	d.n++
	d.bytes += size
	return true
}

// pay records that the answer to the call key was written.
func (d *debts) pay(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	sizes := d.m[key]
	if len(sizes) == 0 {
		return // an answer to input that was never owed (rejected, or invalid)
	}
	d.n--
	d.bytes -= sizes[len(sizes)-1]
	if sizes = sizes[:len(sizes)-1]; len(sizes) == 0 {
		delete(d.m, key)
	} else {
		d.m[key] = sizes
	}
	if d.n == 0 {
		for _, w := range d.waiters {
			close(w)
		}
		d.waiters = nil
	}
}

func (d *debts) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n
}

func (d *debts) size() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.bytes
}

// settled returns a channel closed once every call has been answered.
func (d *debts) settled() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	ch := make(chan struct{})
	if d.n == 0 {
		close(ch)
	} else {
		d.waiters = append(d.waiters, ch)
	}
	return ch
}

// client implements [Client] over the connection.
type client struct {
	conn   jsonrpc2.Conn
	logger *slog.Logger
	optIns *optIns
}

// notify sends a notification. An extension the client did not ask for is
// not sent, and that is not an error.
func (c *client) notify(ctx context.Context, method string, v any) error {
	if !c.optIns.allows(method) {
		return nil
	}
	raw, err := encode(v)
	if err != nil {
		return fmt.Errorf("%s: encoding params: %w", method, err)
	}
	if err := c.conn.Notify(ctx, method, json.RawMessage(raw)); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// SessionUpdate implements [Client].
func (c *client) SessionUpdate(ctx context.Context, n *SessionNotification) error {
	return c.notify(ctx, MethodSessionUpdate, n)
}

// FilesChanged implements [Client].
func (c *client) FilesChanged(ctx context.Context, n *FilesChangedNotification) error {
	return c.notify(ctx, MethodFilesChanged, n)
}

// RequestPermission implements [Client].
func (c *client) RequestPermission(ctx context.Context, req *RequestPermissionRequest) (*RequestPermissionResponse, error) {
	raw, err := encode(req)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding params: %w", MethodRequestPermission, err)
	}
	var result json.RawMessage
	id, err := c.conn.Call(ctx, MethodRequestPermission, json.RawMessage(raw), &result)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			if id.IsValid() {
				c.cancelRemote(context.WithoutCancel(ctx), id)
			}
			return nil, ctxErr
		}
		return nil, fromWire(err)
	}
	var resp RequestPermissionResponse
	if err := json.Unmarshal(result, &resp); err != nil {
		return nil, fmt.Errorf("%s: decoding answer: %w", MethodRequestPermission, err)
	}
	switch o := resp.Outcome; {
	case o.Outcome == OutcomeCancelled:
	case o.Outcome == OutcomeSelected && o.OptionID != "":
	case o.Outcome == OutcomeSelected:
		return nil, fmt.Errorf("%s: answer outcome.optionId is missing", MethodRequestPermission)
	default:
		return nil, fmt.Errorf("%s: answer outcome.outcome %q is neither %q nor %q",
			MethodRequestPermission, o.Outcome, OutcomeSelected, OutcomeCancelled)
	}
	return &resp, nil
}

// cancelRemote tells the client we gave up on request id (ACP
// $/cancel_request). Failure is only logged: the connection may be gone.
func (c *client) cancelRemote(ctx context.Context, id jsonrpc2.ID) {
	var params struct {
		RequestID any `json:"requestId"`
	}
	if n, ok := id.Number(); ok {
		params.RequestID = n
	} else if s, ok := id.StringValue(); ok {
		params.RequestID = s
	}
	if err := c.notify(ctx, methodCancelRequestACP, params); err != nil {
		c.logger.Debug("sending cancellation", "error", err)
	}
}

// marshal encodes v as compact JSON without HTML escaping (diffs and
// commands are full of '<' and '&').
func marshal(v any) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok {
		return raw, nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}

// encode is marshal for what goes on the wire: it also undoes the HTML
// escaping of JSON that other encoders produced (a json.RawMessage made with
// json.Marshal), so '<', '>' and '&' always go out as themselves.
func encode(v any) ([]byte, error) {
	b, err := marshal(v)
	if err != nil {
		return nil, err
	}
	return unescapeHTML(b), nil
}

// unescapeHTML replaces the escapes \u003c, \u003e and \u0026 in valid JSON
// by the characters they stand for. In valid JSON a backslash always starts
// an escape, so escapes are read two bytes at a time from the first
// backslash on, and an escaped backslash followed by the text "u003c" is left
// as it is. b is not modified: a new slice is returned when b holds any
// \u00 escape.
func unescapeHTML(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u00`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		k := bytes.IndexByte(b[i:], '\\')
		if k < 0 {
			out = append(out, b[i:]...)
			break
		}
		out = append(out, b[i:i+k]...)
		i += k
		if i+6 <= len(b) && b[i+1] == 'u' && b[i+2] == '0' && b[i+3] == '0' {
			if c := htmlChar(b[i+4], b[i+5]); c != 0 {
				out = append(out, c)
				i += 6
				continue
			}
		}
		end := min(i+2, len(b))
		out = append(out, b[i:end]...)
		i = end
	}
	return out
}

// htmlChar returns the character of the escape \u00XY when it is one that
// encoding/json writes for HTML safety, else 0.
func htmlChar(x, y byte) byte {
	switch {
	case x == '3' && (y == 'c' || y == 'C'):
		return '<'
	case x == '3' && (y == 'e' || y == 'E'):
		return '>'
	case x == '2' && y == '6':
		return '&'
	}
	return 0
}

// stdCodec is the payload codec: encoding/json semantics (case-insensitive
// field matching, nil slices as null) instead of the library's json/v2
// default, matching the ACP types and TypeScript peers.
type stdCodec struct{}

func (stdCodec) Marshal(v any) ([]byte, error) {
	if v == nil {
		return []byte("null"), nil
	}
	return encode(v)
}

func (stdCodec) Unmarshal(data []byte, v any) error {
	if p, ok := v.(*json.RawMessage); ok {
		*p = append((*p)[:0], data...)
		return nil
	}
	return json.Unmarshal(data, v)
}
