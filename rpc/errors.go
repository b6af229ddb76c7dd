package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.lsp.dev/jsonrpc2"
)

// JSON-RPC and ACP error codes used on the wire (PROTOCOL.md §10).
const (
	CodeParseError       = -32700
	CodeInvalidRequest   = -32600
	CodeMethodNotFound   = -32601
	CodeInvalidParams    = -32602
	CodeInternal         = -32603
	CodeRequestCancelled = -32800
	CodeSessionNotFound  = -32002
	CodeAuthRequired     = -32000
	// CodeServerBusy answers a call beyond the connection's bound on calls
	// in flight (as codex's "Server overloaded; retry later").
	CodeServerBusy = -32001
)

// Error is a JSON-RPC error object. Agent methods return it to choose the code
// sent to the client; any other error is sent as [CodeInternal], and
// [context.Canceled] or [context.DeadlineExceeded] as [CodeRequestCancelled].
// Errors received from the client (for example as the answer to
// [Client.RequestPermission]) are also reported as *Error, with Data holding
// the raw JSON of the error's data member.
type Error struct {
	Code    int64
	Message string
	Data    any
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("%s (code %d)", e.Message, e.Code)
}

// InvalidParams returns a [CodeInvalidParams] error whose message names field.
func InvalidParams(field, msg string) *Error {
	return &Error{Code: CodeInvalidParams, Message: field + ": " + msg}
}

// SessionNotFound returns the ACP "resource not found" error for an unknown
// session, with data.sessionId set as the TypeScript SDK does.
func SessionNotFound(sessionID string) *Error {
	return &Error{
		Code:    CodeSessionNotFound,
		Message: fmt.Sprintf("session %q not found", sessionID),
		Data:    map[string]string{"sessionId": sessionID},
	}
}

// AuthRequired returns ACP's "authentication required" error ([CodeAuthRequired]):
// a prompt in a session without a configured model. variables lists the
// environment variables that would configure one, and methods the ids of the
// auth methods that would (PROTOCOL.md §11); clients show their login
// button on this code.
func AuthRequired(msg string, variables, methods []string) *Error {
	if variables == nil {
		variables = []string{}
	}
	if methods == nil {
		methods = []string{}
	}
	return &Error{Code: CodeAuthRequired, Message: msg, Data: map[string]any{"variables": variables, "authMethods": methods}}
}

// wireError maps any handler error onto the error object sent to the peer.
// It is the only place where errors become codes, and it never yields code 0:
// the JSON-RPC library would send a plain error with code 0, which clients
// cannot classify.
func wireError(err error) *jsonrpc2.Error {
	var e *Error
	switch {
	case errors.As(err, &e):
		code := e.Code
		if code == 0 || code < -1<<31 || code > 1<<31-1 {
			code = CodeInternal
		}
		we := &jsonrpc2.Error{Code: jsonrpc2.Code(code), Message: e.Message}
		if e.Data != nil {
			if raw, merr := marshal(e.Data); merr == nil {
				we.Data = raw
			}
		}
		return we
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &jsonrpc2.Error{Code: CodeRequestCancelled, Message: "request cancelled"}
	default:
		return &jsonrpc2.Error{Code: CodeInternal, Message: err.Error()}
	}
}

// fromWire converts an error received from the peer into an *Error, so that
// callers of [Client] never see the JSON-RPC library's types.
func fromWire(err error) error {
	var we *jsonrpc2.Error
	if !errors.As(err, &we) {
		return err
	}
	e := &Error{Code: int64(we.Code), Message: we.Message}
	if len(we.Data) > 0 {
		e.Data = json.RawMessage(append([]byte(nil), we.Data...))
	}
	return e
}
