package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/coding-agent/coding-agent/editorsync"
	"github.com/coding-agent/coding-agent/rpc"
	"github.com/coding-agent/coding-agent/session/display"
	"github.com/coding-agent/coding-agent/tools"
)

// The ACP adapter's translations: SDK values to rpc's wire types and back.
// They are the only place where a session's events, prompts and approvals
// meet ACP; the journal stores events in their wire form, so that
// session/load replays exactly what a client saw.

// wireUpdate is the session/update of an event; nil for an event that ACP
// does not carry (Lagged).
func wireUpdate(ev Event) rpc.SessionUpdate {
	switch ev := ev.(type) {
	case *UserMessage:
		return &rpc.UserMessageChunk{Content: wireContent(ev.Content), MessageID: ev.MessageID}
	case *MessageChunk:
		return &rpc.AgentMessageChunk{Content: rpc.TextBlock(ev.Text), MessageID: ev.MessageID}
	case *ThoughtChunk:
		return &rpc.AgentThoughtChunk{Content: rpc.TextBlock(ev.Text), MessageID: ev.MessageID}
	case *ToolCallStarted:
		return &rpc.ToolCall{ToolCallID: ev.CallID, Title: ev.Title, Name: ev.Tool, Kind: string(ev.Kind), Status: rpc.ToolStatusPending, RawInput: ev.Input}
	case *ToolCallUpdated:
		u := &rpc.ToolCallUpdate{ToolCallID: ev.CallID, Title: ev.Title, Status: string(ev.Status), RawInput: ev.Input}
		if ev.Progress != nil {
			u.Content = []rpc.ToolCallContent{rpc.TextContent(ev.Progress.Tail)}
		}
		return u
	case *ToolCallFinished:
		u := &rpc.ToolCallUpdate{ToolCallID: ev.CallID, Status: string(ev.Status), Content: []rpc.ToolCallContent{}, RawInput: ev.Input, RawOutput: ev.Details}
		for _, t := range ev.Text {
			u.Content = append(u.Content, rpc.TextContent(t))
		}
		for _, c := range ev.Media {
			b := wireContent(c)
			u.Content = append(u.Content, rpc.ToolCallContent{Type: rpc.ToolContentContent, Content: &b})
		}
		for _, d := range ev.Diffs {
			u.Content = append(u.Content, rpc.DiffContent(d.Path, d.OldText, d.NewText))
		}
		if ev.Input != nil {
			// A call that ran (or was refused) lists its locations, none
			// or some; one that never ran has none to list.
			u.Locations = []rpc.ToolCallLocation{}
		}
		for _, l := range ev.Locations {
			u.Locations = append(u.Locations, rpc.ToolCallLocation{Path: l.Path, Line: l.Line})
		}
		return u
	case *Usage:
		u := &rpc.UsageUpdate{Used: ev.Used, Size: ev.Size}
		if ev.CostUSD != nil {
			u.Cost = &rpc.Cost{Amount: *ev.CostUSD, Currency: "USD"}
		}
		return u
	case *ModeChanged:
		return &rpc.CurrentModeUpdate{CurrentModeID: string(ev.Preset)}
	case *ConfigChanged:
		return &rpc.ConfigOptionUpdate{ConfigOptions: wireConfigOptions(ev.Options)}
	case *Compaction:
		// Shown as text, which every client renders: a marker in the
		// agent's messages, as claude-agent-acp does.
		var t string
		switch ev.Status {
		case CompactionInProgress:
			t = "Compacting the conversation…"
		case CompactionCompleted:
			t = fmt.Sprintf(" done (about %d → %d tokens).\n\n", ev.TokensBefore, ev.TokensAfter)
		default:
			t = " failed: " + ev.Error + "\n\n"
		}
		return &rpc.AgentMessageChunk{Content: rpc.TextBlock(t), MessageID: ev.ID}
	case *InfoChanged:
		u := &rpc.SessionInfoUpdate{}
		if ev.Title != "" {
			u.Title = &ev.Title
		}
		if ev.UpdatedAt != "" {
			u.UpdatedAt = &ev.UpdatedAt
		}
		return u
	}
	return nil
}

func wireConfigOptions(opts []ConfigOption) []rpc.SessionConfigOption {
	out := make([]rpc.SessionConfigOption, 0, len(opts))
	for _, o := range opts {
		w := rpc.SessionConfigOption{ID: o.ID, Name: o.Name, Category: o.Category, Type: rpc.ConfigTypeSelect, CurrentValue: o.CurrentValue,
			Options: make([]rpc.SessionConfigSelectOption, 0, len(o.Values))}
		for _, v := range o.Values {
			w.Options = append(w.Options, rpc.SessionConfigSelectOption{Value: v.Value, Name: v.Name, Description: v.Description})
		}
		out = append(out, w)
	}
	return out
}

// wireContent and sdkContent convert content blocks, losing nothing.
func wireContent(c Content) rpc.ContentBlock {
	b := rpc.ContentBlock{Type: c.Type, Text: c.Text, Data: c.Data, MimeType: c.MimeType, URI: c.URI, Name: c.Name,
		Title: c.Title, Description: c.Description, Size: c.Size, Annotations: c.Annotations, Meta: c.Meta}
	if r := c.Resource; r != nil {
		b.Resource = &rpc.EmbeddedResource{URI: r.URI, Text: r.Text, Blob: r.Blob, MimeType: r.MimeType}
	}
	return b
}

func sdkContent(b rpc.ContentBlock) Content {
	c := Content{Type: b.Type, Text: b.Text, Data: b.Data, MimeType: b.MimeType, URI: b.URI, Name: b.Name,
		Title: b.Title, Description: b.Description, Size: b.Size, Annotations: b.Annotations, Meta: b.Meta}
	if r := b.Resource; r != nil {
		c.Resource = &Resource{URI: r.URI, Text: r.Text, Blob: r.Blob, MimeType: r.MimeType}
	}
	return c
}

func sdkPrompt(blocks []rpc.ContentBlock) []Content {
	out := make([]Content, len(blocks))
	for i, b := range blocks {
		out[i] = sdkContent(b)
	}
	return out
}

// The permission options offered for every request (PROTOCOL.md §6).
var permissionOptions = []rpc.PermissionOption{
	{OptionID: rpc.PermissionAllowOnce, Name: "Allow once", Kind: rpc.PermissionAllowOnce},
	// Only this session, and exactly this file or this command line: it
	// never widens the preset.
	{OptionID: rpc.PermissionAllowAlways, Name: "Always allow in this session", Kind: rpc.PermissionAllowAlways},
	{OptionID: rpc.PermissionRejectOnce, Name: "Reject", Kind: rpc.PermissionRejectOnce},
}

// The options of a request to call an MCP tool (PROTOCOL.md §6): allow
// always allows this tool for the rest of the session.
var mcpPermissionOptions = []rpc.PermissionOption{
	{OptionID: rpc.PermissionAllowOnce, Name: "Allow once", Kind: rpc.PermissionAllowOnce},
	{OptionID: rpc.PermissionAllowAlways, Name: "Always allow this tool in this session", Kind: rpc.PermissionAllowAlways},
	{OptionID: rpc.PermissionRejectOnce, Name: "Reject", Kind: rpc.PermissionRejectOnce},
}

// approvalMeta is _meta["coding-agent"] of a permission request.
type approvalMeta struct {
	Justification string `json:"justification,omitempty"`
	Reason        string `json:"reason"`
	Request       string `json:"request"`
}

// wirePermission is the session/request_permission of an approval
// request: the call's title (one line), kind and arguments, the diff or the
// command, the policy's reason and the model's justification as plain
// text, control characters neutralized (package display).
func wirePermission(req *ApprovalRequest) *rpc.RequestPermissionRequest {
	var content []rpc.ToolCallContent
	if c := req.Change; c != nil {
		content = append(content, rpc.DiffContent(c.Path, c.OldText, c.NewText))
	}
	if req.Command != "" {
		content = append(content, rpc.TextContent("$ "+display.Text(req.Command)))
	}
	options := permissionOptions
	if req.Request == tools.RequestMCPTool {
		content = append(content, rpc.TextContent(display.Text(mcpPermission(mcpRequest{Server: req.Server, Tool: req.MCPTool, Args: req.Input}))))
		options = mcpPermissionOptions
	}
	// The policy's reason is always shown; the model's justification, when
	// it gave one, beside it and never instead of it.
	content = append(content, rpc.TextContent("Policy: "+display.Text(req.Reason)))
	if req.Justification != "" {
		content = append(content, rpc.TextContent("The model's reason: "+display.Text(req.Justification)))
	}
	meta, _ := json.Marshal(map[string]approvalMeta{"coding-agent": {
		Justification: req.Justification,
		Reason:        req.Reason,
		Request:       req.Request,
	}})
	return &rpc.RequestPermissionRequest{
		SessionID: req.SessionID,
		ToolCall: rpc.ToolCallUpdate{
			ToolCallID: req.CallID,
			Title:      display.Title(req.Title),
			Name:       req.Tool,
			Kind:       string(req.Kind),
			Status:     rpc.ToolStatusPending,
			Content:    content,
			RawInput:   rawJSON(req.Input),
			Meta:       meta,
		},
		Options: options,
	}
}

// acpApprover asks an ACP client with session/request_permission. An
// answer other than allow_once or reject_once is an error that says what
// the client did.
func acpApprover(ask func(context.Context, *rpc.RequestPermissionRequest) (*rpc.RequestPermissionResponse, error)) func(context.Context, *ApprovalRequest) (Decision, error) {
	return func(ctx context.Context, req *ApprovalRequest) (Decision, error) {
		resp, err := ask(ctx, wirePermission(req))
		if err != nil {
			if ctx.Err() != nil {
				return Reject, err
			}
			return Reject, fmt.Errorf("the client answered the approval request with an error: %v", err)
		}
		switch o := resp.Outcome; {
		case o.Outcome == rpc.OutcomeCancelled:
			return Reject, errors.New("the approval request was cancelled by the client")
		case o.Outcome != rpc.OutcomeSelected:
			return Reject, fmt.Errorf("the client answered with unknown outcome %q", o.Outcome)
		case o.OptionID == rpc.PermissionAllowOnce:
			return AllowOnce, nil
		case o.OptionID == rpc.PermissionAllowAlways:
			return AllowAlways, nil
		case o.OptionID == rpc.PermissionRejectOnce:
			return Reject, nil
		default:
			return Reject, fmt.Errorf("the client selected unknown option %q", o.OptionID)
		}
	}
}

// filesChanged converts a batch of changes to the wire notification.
func filesChanged(sessionID string, batch []editorsync.Change) *rpc.FilesChangedNotification {
	n := &rpc.FilesChangedNotification{SessionID: sessionID, Changes: make([]rpc.FileChange, 0, len(batch))}
	for _, c := range batch {
		fc := rpc.FileChange{Path: c.Path, URI: c.URI, Kind: string(c.Kind), Open: c.Open, SHA256: c.SHA256}
		if fc.URI == "" {
			fc.URI = editorsync.PathToURI(c.Path)
		}
		if c.Origin != nil {
			fc.Origin = &rpc.ChangeOrigin{ToolCallID: c.Origin.ToolCallID, Tool: c.Origin.Tool}
		}
		n.Changes = append(n.Changes, fc)
	}
	return n
}
