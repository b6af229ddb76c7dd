package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coding-agent/coding-agent/tools"
)

// Tool is one tool of an MCP server, as the model sees it.
type Tool struct {
	srv      *server
	def      *sdk.Tool
	name     string
	schema   json.RawMessage
	resolved *jsonschema.Resolved // nil when the schema could not be resolved
}

func newTool(srv *server, def *sdk.Tool, name string) *Tool {
	t := &Tool{srv: srv, def: def, name: name}
	raw, err := json.Marshal(def.InputSchema)
	if err != nil || len(raw) == 0 || string(raw) == "null" {
		raw = []byte(`{"type":"object"}`)
	}
	t.schema = raw
	var sch jsonschema.Schema
	if err := json.Unmarshal(raw, &sch); err == nil {
		if r, err := sch.Resolve(nil); err == nil {
			t.resolved = r
		} else {
			srv.logger.Warn("MCP tool's input schema cannot be resolved; only checking that arguments are an object", "tool", def.Name, "err", err)
		}
	} else {
		srv.logger.Warn("MCP tool's input schema is not a JSON Schema; only checking that arguments are an object", "tool", def.Name, "err", err)
	}
	return t
}

// Name is the model-facing name, mcp__<server>__<tool> within the
// providers' rules.
func (t *Tool) Name() string { return t.name }

// Server is the server's configured name.
func (t *Tool) Server() string { return t.srv.cfg.Name }

// ToolName is the tool's name on its server.
func (t *Tool) ToolName() string { return t.def.Name }

// Title is the ACP tool call title: "<server> · <tool>".
func (t *Tool) Title() string { return t.srv.cfg.Name + " · " + t.def.Name }

// ReadOnly reports the tool's readOnlyHint annotation: such a tool runs
// without asking for approval.
func (t *Tool) ReadOnly() bool { return t.def.Annotations != nil && t.def.Annotations.ReadOnlyHint }

// Kind is the ACP tool kind: "read" for a read-only tool, else "other".
func (t *Tool) Kind() string {
	if t.ReadOnly() {
		return "read"
	}
	return "other"
}

// Description is what the model is told: the server's description.
func (t *Tool) Description() string {
	d := strings.TrimSpace(t.def.Description)
	if d == "" {
		d = strings.TrimSpace(t.def.Title)
	}
	if d == "" {
		d = fmt.Sprintf("The %s tool of the %s MCP server.", t.def.Name, t.srv.cfg.Name)
	}
	return d
}

// Schema is the JSON Schema of the arguments, as the server gave it.
func (t *Tool) Schema() json.RawMessage { return t.schema }

// Validate checks args against the tool's input schema and returns them
// decoded. An invalid call is a *tools.ValidationError and must not be
// dispatched.
func (t *Tool) Validate(args json.RawMessage) (map[string]any, error) {
	if len(strings.TrimSpace(string(args))) == 0 {
		args = json.RawMessage(`{}`)
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return nil, &tools.ValidationError{Tool: t.name, Rule: "the arguments are not valid JSON: " + err.Error()}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &tools.ValidationError{Tool: t.name, Rule: "the arguments must be a JSON object"}
	}
	if t.resolved != nil {
		if err := t.resolved.Validate(v); err != nil {
			return nil, &tools.ValidationError{Tool: t.name, Rule: "does not match the tool's input schema: " + err.Error()}
		}
	}
	return m, nil
}

// Call is one dispatch of a tool.
type Call struct {
	// ID is the ACP toolCallId; it names a retained full output.
	ID string
	// Args are the arguments Validate returned.
	Args map[string]any
	// Progress, if not nil, receives the server's progress notifications
	// as text ("3/5", with the server's message).
	Progress func(string)
}

// Call dispatches a validated call and converts the result. The returned
// error is a failure to get a result at all (the connection, or ctx
// cancelled: then MCP notifications/cancelled was sent); a result the
// server marked isError comes back as Result.IsError.
func (t *Tool) Call(ctx context.Context, c Call) (Result, error) {
	var progress func(*sdk.ProgressNotificationParams)
	if c.Progress != nil {
		progress = func(p *sdk.ProgressNotificationParams) { c.Progress(progressText(p)) }
	}
	res, err := t.srv.call(ctx, t.def.Name, c.Args, progress)
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, fmt.Errorf("cancelled: the MCP server was sent notifications/cancelled: %w", context.Cause(ctx))
		}
		var rpcErr interface{ Error() string }
		if errors.As(err, &rpcErr) {
			return Result{}, fmt.Errorf("MCP server %s: %v", t.srv.cfg.Name, err)
		}
		return Result{}, err
	}
	return convert(res, c.ID, t.srv.opts.Outputs, t.srv.logger), nil
}

func progressText(p *sdk.ProgressNotificationParams) string {
	var s string
	switch {
	case p.Total > 0:
		s = fmt.Sprintf("%g/%g", p.Progress, p.Total)
	default:
		s = fmt.Sprintf("%g", p.Progress)
	}
	if p.Message != "" {
		s += " " + p.Message
	}
	return s
}
