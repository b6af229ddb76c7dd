package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/coding-agent/coding-agent/tools"
)

// Policy is what a bound tool needs from its session to decide whether a
// call may run.
type Policy struct {
	// Preset is the session's permission preset.
	Preset tools.Preset
	// Approver is asked about calls that need approval; nil means nobody
	// can be asked, and such calls are denied.
	Approver tools.Approver
}

// Bind returns the tool as a [tools.Tool] under policy, for a session's
// tool set beside the built-in tools. A call of a tool annotated
// readOnlyHint runs without asking; any other call runs under full-access
// and asks policy.Approver (a tools.RequestMCPTool request) under
// read-only and workspace-write.
func (t *Tool) Bind(policy Policy) tools.Tool { return &bound{t: t, policy: policy} }

type bound struct {
	t      *Tool
	policy Policy
}

var _ tools.Tool = (*bound)(nil)

// MCP returns the MCP tool a [tools.Tool] made by [Tool.Bind] wraps, nil
// for any other tool.
func MCP(t tools.Tool) *Tool {
	if b, ok := t.(*bound); ok {
		return b.t
	}
	return nil
}

func (b *bound) Name() string                               { return b.t.Name() }
func (b *bound) Title() string                              { return b.t.Title() }
func (b *bound) Description() string                        { return b.t.Description() }
func (b *bound) Schema() json.RawMessage                    { return b.t.Schema() }
func (b *bound) Kind() tools.Kind                           { return tools.Kind(b.t.Kind()) }
func (b *bound) NewTitler() tools.Titler                    { return tools.StaticTitle(b.t.Title()) }
func (b *bound) Validate(args json.RawMessage) (any, error) { return b.t.Validate(args) }

// needsApproval reports whether a call must be approved first.
func (b *bound) needsApproval() bool {
	return !b.t.ReadOnly() && b.policy.Preset != tools.FullAccess
}

func (b *bound) Execute(ctx context.Context, call tools.Call) (tools.Result, error) {
	in, ok := call.Input.(map[string]any)
	if !ok {
		v, err := b.t.Validate(call.Args)
		if err != nil {
			return tools.Result{}, err
		}
		in = v
	}
	if b.needsApproval() {
		if err := b.approve(ctx, call); err != nil {
			return tools.Result{}, err
		}
	}
	// Checked and allowed: the call is dispatched now.
	if call.Started != nil {
		call.Started()
	}
	var progress func(string)
	if call.Progress != nil {
		progress = func(s string) { call.Progress(tools.Progress{Tail: s}) }
	}
	res, err := b.t.Call(ctx, Call{ID: call.ID, Args: in, Progress: progress})
	if err != nil {
		return tools.Result{}, err
	}
	return toToolsResult(b.t, res), nil
}

func (b *bound) approve(ctx context.Context, call tools.Call) error {
	reason := fmt.Sprintf("MCP tool %s of server %s is not marked read-only; under %s its calls need approval", b.t.ToolName(), b.t.Server(), presetName(b.policy.Preset))
	if b.policy.Approver == nil {
		return &tools.PermissionError{Reason: "not allowed: " + reason + ", and there is no client to ask"}
	}
	err := b.policy.Approver.Approve(ctx, tools.ApprovalRequest{
		Kind:    tools.RequestMCPTool,
		Tool:    b.t.Name(),
		CallID:  call.ID,
		Args:    call.Args,
		Server:  b.t.Server(),
		MCPTool: b.t.ToolName(),
		Reason:  reason,
	})
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%v: %w", err, context.Canceled)
	}
	var pe *tools.PermissionError
	if errors.As(err, &pe) {
		return err
	}
	return &tools.PermissionError{Reason: err.Error()}
}

func presetName(p tools.Preset) string {
	if p == "" {
		return string(tools.ReadOnly)
	}
	return string(p)
}

// toToolsResult is the tools.Result of an MCP result: one text block with
// what the model is told, then the blocks a client shows besides the text
// (images, audio, resource links, binary resources). Details hold the
// server and tool, the structured content and the retained output.
func toToolsResult(t *Tool, r Result) tools.Result {
	out := tools.Result{IsError: r.IsError, Content: []tools.Content{{Type: "text", Text: r.Text}}}
	for _, c := range r.Content {
		switch {
		case c.Type == "text", c.Type == "resource" && c.Resource != nil && c.Resource.Text != nil:
			continue // in the text already
		}
		out.Content = append(out.Content, tools.Content{
			Type: c.Type, Data: c.Data, MimeType: c.MimeType, URI: c.URI, Name: c.Name,
			Title: c.Title, Description: c.Description, Size: c.Size, Resource: toolsResource(c.Resource),
		})
	}
	out.Details = map[string]any{"server": t.Server(), "tool": t.ToolName()}
	if r.Structured != nil {
		out.Details["structuredContent"] = r.Structured
	}
	if r.FullOutputPath != "" {
		out.Details["fullOutputPath"] = r.FullOutputPath
	}
	return out
}

func toolsResource(r *Resource) *tools.Resource {
	if r == nil {
		return nil
	}
	return &tools.Resource{URI: r.URI, MimeType: r.MimeType, Text: r.Text, Blob: r.Blob}
}
