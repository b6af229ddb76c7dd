package rpc

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// This file holds the ACP v1 wire types the agent speaks (PROTOCOL.md §2–4,
// §6; field names follow the ACP v1 schema exactly). Optional fields are
// omitted when empty, except where null or an empty array is meaningful;
// those cases are called out on the field.

// ProtocolVersion is the only ACP protocol version this agent speaks.
const ProtocolVersion = 1

// Empty is an object with no fields, used for capability markers ({}) and
// empty results.
type Empty struct{}

// Implementation names a client or an agent (clientInfo, agentInfo).
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// InitializeRequest is the params of "initialize".
type InitializeRequest struct {
	ProtocolVersion    int                 `json:"protocolVersion"`
	ClientCapabilities *ClientCapabilities `json:"clientCapabilities,omitempty"`
	ClientInfo         *Implementation     `json:"clientInfo,omitempty"`
	Meta               json.RawMessage     `json:"_meta,omitempty"`
}

// ClientCapabilities is what the client supports. Omitted means unsupported.
type ClientCapabilities struct {
	FS          *FileSystemCapability `json:"fs,omitempty"`
	Terminal    bool                  `json:"terminal,omitempty"`
	Auth        json.RawMessage       `json:"auth,omitempty"`
	Session     json.RawMessage       `json:"session,omitempty"`
	Elicitation json.RawMessage       `json:"elicitation,omitempty"`
	Meta        json.RawMessage       `json:"_meta,omitempty"`
}

// FileSystemCapability says which fs/* methods the client serves.
type FileSystemCapability struct {
	ReadTextFile  bool `json:"readTextFile,omitempty"`
	WriteTextFile bool `json:"writeTextFile,omitempty"`
}

// InitializeResponse is the result of "initialize".
type InitializeResponse struct {
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentInfo         *Implementation   `json:"agentInfo,omitempty"`
	AuthMethods       []json.RawMessage `json:"authMethods"` // always an array; nil is sent as []
	AgentCapabilities AgentCapabilities `json:"agentCapabilities"`
}

// MarshalJSON sends a nil AuthMethods as [] (ACP requires the array).
func (r InitializeResponse) MarshalJSON() ([]byte, error) {
	type plain InitializeResponse
	if r.AuthMethods == nil {
		r.AuthMethods = []json.RawMessage{}
	}
	return marshal(plain(r))
}

// AgentCapabilities is what the agent supports (PROTOCOL.md §2).
type AgentCapabilities struct {
	LoadSession         bool                   `json:"loadSession"`
	PromptCapabilities  PromptCapabilities     `json:"promptCapabilities"`
	MCPCapabilities     MCPCapabilities        `json:"mcpCapabilities"`
	SessionCapabilities *SessionCapabilities   `json:"sessionCapabilities,omitempty"`
	Auth                *AgentAuthCapabilities `json:"auth,omitempty"`
	Meta                *AgentMeta             `json:"_meta,omitempty"`
}

// AgentAuthCapabilities says which auth methods beyond authenticate the
// agent serves: {"logout":{}} when it answers "logout".
type AgentAuthCapabilities struct {
	Logout *Empty `json:"logout,omitempty"`
}

// AuthenticateRequest is the params of "authenticate": the id of one of the
// authMethods of initialize, and, for an API-key method,
// _meta["api-key"].apiKey (the convention of the registry's agents).
type AuthenticateRequest struct {
	MethodID string          `json:"methodId"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// AuthenticateResponse is the (empty) result of "authenticate".
type AuthenticateResponse struct{}

// LogoutRequest is the params of "logout".
type LogoutRequest struct {
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// LogoutResponse is the (empty) result of "logout".
type LogoutResponse struct{}

// PromptCapabilities lists the optional prompt content types accepted.
type PromptCapabilities struct {
	Image           bool `json:"image"`
	Audio           bool `json:"audio"`
	EmbeddedContext bool `json:"embeddedContext"`
}

// MCPCapabilities lists the MCP transports accepted besides stdio.
type MCPCapabilities struct {
	HTTP bool `json:"http"`
	SSE  bool `json:"sse"`
}

// SessionCapabilities marks the optional session methods; a non-nil field
// is sent as {} and means supported.
type SessionCapabilities struct {
	List                  *Empty `json:"list,omitempty"`
	Resume                *Empty `json:"resume,omitempty"`
	Close                 *Empty `json:"close,omitempty"`
	Delete                *Empty `json:"delete,omitempty"`
	AdditionalDirectories *Empty `json:"additionalDirectories,omitempty"`
}

// AgentMeta is agentCapabilities._meta.
type AgentMeta struct {
	CodingAgent *CodingAgentCapabilities `json:"coding-agent,omitempty"`
}

// CodingAgentCapabilities is agentCapabilities._meta["coding-agent"]: the
// extensions this agent offers.
type CodingAgentCapabilities struct {
	Tools        []string      `json:"tools"`
	DocumentSync *DocumentSync `json:"documentSync,omitempty"`
	DirectTools  bool          `json:"directTools"`
	Outputs      bool          `json:"outputs"`
	Sandbox      *SandboxInfo  `json:"sandbox,omitempty"`
}

// DocumentSync advertises the document/* notifications (PROTOCOL.md §8).
type DocumentSync struct {
	Version int `json:"version"`
}

// SandboxInfo reports the sandbox found by the start-up probe.
type SandboxInfo struct {
	Available bool   `json:"available"`
	Kind      string `json:"kind"`
	Reason    string `json:"reason,omitempty"`
}

// Preset names (PROTOCOL.md §3), also the session mode ids.
const (
	PresetReadOnly       = "read-only"
	PresetWorkspaceWrite = "workspace-write"
	PresetFullAccess     = "full-access"
)

// NewSessionRequest is the params of "session/new".
type NewSessionRequest struct {
	Cwd                   string            `json:"cwd"`
	MCPServers            []json.RawMessage `json:"mcpServers"`
	AdditionalDirectories []string          `json:"additionalDirectories,omitempty"`
	Meta                  *SessionMeta      `json:"_meta,omitempty"`
}

// SessionMeta is the _meta of session/new, load and resume. Keys other than
// "coding-agent" are ignored.
type SessionMeta struct {
	CodingAgent *SessionOptions `json:"coding-agent,omitempty"`
}

// SessionOptions is _meta["coding-agent"] of session/new (PROTOCOL.md §3).
type SessionOptions struct {
	// Tools is nil when omitted (all built-in tools) and points to an empty
	// slice for "tools": [] (no tools).
	Tools                  *[]string `json:"tools,omitempty"`
	Preset                 string    `json:"preset,omitempty"`
	ApprovalTimeoutSeconds *float64  `json:"approvalTimeoutSeconds,omitempty"`
}

// Options returns the coding-agent session options, or nil when absent.
func (m *SessionMeta) Options() *SessionOptions {
	if m == nil {
		return nil
	}
	return m.CodingAgent
}

// NewSessionResponse is the result of "session/new".
type NewSessionResponse struct {
	SessionID     string                `json:"sessionId"`
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitempty"`
	// Meta is _meta: {"coding-agent":{"mcpServers":[…]}} when the session
	// has MCP servers (PROTOCOL.md §5a).
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// SessionModeState is the current mode and the modes available.
type SessionModeState struct {
	CurrentModeID  string        `json:"currentModeId"`
	AvailableModes []SessionMode `json:"availableModes"`
}

// SessionMode is one selectable mode.
type SessionMode struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// Config option categories and type.
const (
	ConfigCategoryMode  = "mode"
	ConfigCategoryModel = "model"
	ConfigTypeSelect    = "select"
)

// SessionConfigOption is one session configuration option (a select).
type SessionConfigOption struct {
	ID           string                      `json:"id"`
	Name         string                      `json:"name"`
	Description  string                      `json:"description,omitempty"`
	Category     string                      `json:"category,omitempty"`
	Type         string                      `json:"type"`
	CurrentValue string                      `json:"currentValue"`
	Options      []SessionConfigSelectOption `json:"options"`
}

// SessionConfigSelectOption is one value of a select option.
type SessionConfigSelectOption struct {
	Value       string `json:"value"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// LoadSessionRequest is the params of "session/load".
type LoadSessionRequest struct {
	SessionID             string            `json:"sessionId"`
	Cwd                   string            `json:"cwd"`
	MCPServers            []json.RawMessage `json:"mcpServers"`
	AdditionalDirectories []string          `json:"additionalDirectories,omitempty"`
	Meta                  *SessionMeta      `json:"_meta,omitempty"`
}

// LoadSessionResponse is the result of "session/load", sent after the
// history was replayed.
type LoadSessionResponse struct {
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitempty"`
	Meta          json.RawMessage       `json:"_meta,omitempty"`
}

// ResumeSessionRequest is the params of "session/resume".
type ResumeSessionRequest struct {
	SessionID             string            `json:"sessionId"`
	Cwd                   string            `json:"cwd"`
	MCPServers            []json.RawMessage `json:"mcpServers,omitempty"`
	AdditionalDirectories []string          `json:"additionalDirectories,omitempty"`
	Meta                  *SessionMeta      `json:"_meta,omitempty"`
}

// ResumeSessionResponse is the result of "session/resume".
type ResumeSessionResponse struct {
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitempty"`
	Meta          json.RawMessage       `json:"_meta,omitempty"`
}

// ListSessionsRequest is the params of "session/list".
type ListSessionsRequest struct {
	Cwd    string `json:"cwd,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// ListSessionsResponse is the result of "session/list".
type ListSessionsResponse struct {
	Sessions   []SessionInfo `json:"sessions"` // nil is sent as []
	NextCursor string        `json:"nextCursor,omitempty"`
}

// MarshalJSON sends a nil Sessions as [].
func (r ListSessionsResponse) MarshalJSON() ([]byte, error) {
	type plain ListSessionsResponse
	if r.Sessions == nil {
		r.Sessions = []SessionInfo{}
	}
	return marshal(plain(r))
}

// SessionInfo describes one stored session.
type SessionInfo struct {
	SessionID             string   `json:"sessionId"`
	Cwd                   string   `json:"cwd"`
	Title                 string   `json:"title,omitempty"`
	UpdatedAt             string   `json:"updatedAt,omitempty"` // RFC 3339
	AdditionalDirectories []string `json:"additionalDirectories,omitempty"`
}

// CloseSessionRequest is the params of "session/close".
type CloseSessionRequest struct {
	SessionID string `json:"sessionId"`
}

// CloseSessionResponse is the (empty) result of "session/close".
type CloseSessionResponse struct{}

// SetSessionModeRequest is the params of "session/set_mode".
type SetSessionModeRequest struct {
	SessionID string `json:"sessionId"`
	ModeID    string `json:"modeId"`
}

// SetSessionModeResponse is the (empty) result of "session/set_mode".
type SetSessionModeResponse struct{}

// SetSessionConfigOptionRequest is the params of "session/set_config_option".
// Only select options exist here, so Value is a string.
type SetSessionConfigOptionRequest struct {
	SessionID string `json:"sessionId"`
	ConfigID  string `json:"configId"`
	Value     string `json:"value"`
}

// SetSessionConfigOptionResponse is the result of
// "session/set_config_option": the full new list of options.
type SetSessionConfigOptionResponse struct {
	ConfigOptions []SessionConfigOption `json:"configOptions"`
}

// PromptRequest is the params of "session/prompt".
type PromptRequest struct {
	SessionID string          `json:"sessionId"`
	Prompt    []ContentBlock  `json:"prompt"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// Stop reasons of a prompt turn.
const (
	StopEndTurn         = "end_turn"
	StopMaxTokens       = "max_tokens"
	StopMaxTurnRequests = "max_turn_requests"
	StopRefusal         = "refusal"
	StopCancelled       = "cancelled"
)

// PromptResponse is the result of "session/prompt".
type PromptResponse struct {
	StopReason string `json:"stopReason"`
}

// CancelNotification is the params of the "session/cancel" notification.
type CancelNotification struct {
	SessionID string `json:"sessionId"`
}

// Content block types.
const (
	ContentText         = "text"
	ContentImage        = "image"
	ContentAudio        = "audio"
	ContentResourceLink = "resource_link"
	ContentResource     = "resource"
)

// ContentBlock is an ACP content block; Type selects which fields apply:
//
//	text          Text
//	image         Data (base64), MimeType, URI?
//	audio         Data (base64), MimeType
//	resource_link URI, Name, Title?, Description?, MimeType?, Size?
//	resource      Resource
type ContentBlock struct {
	Type        string            `json:"type"`
	Text        string            `json:"text,omitempty"`
	Data        string            `json:"data,omitempty"`
	MimeType    string            `json:"mimeType,omitempty"`
	URI         string            `json:"uri,omitempty"`
	Name        string            `json:"name,omitempty"`
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description,omitempty"`
	Size        *int64            `json:"size,omitempty"`
	Resource    *EmbeddedResource `json:"resource,omitempty"`
	Annotations json.RawMessage   `json:"annotations,omitempty"`
	Meta        json.RawMessage   `json:"_meta,omitempty"`
}

// TextBlock returns a text content block.
func TextBlock(text string) ContentBlock { return ContentBlock{Type: ContentText, Text: text} }

// MarshalJSON always sends the fields required by the block's type, even
// when empty (an empty text block still has "text":"").
func (b ContentBlock) MarshalJSON() ([]byte, error) {
	type plain ContentBlock
	raw, err := marshal(plain(b))
	if err != nil {
		return nil, err
	}
	var required []string
	switch b.Type {
	case ContentText:
		if b.Text == "" {
			required = []string{`"text":""`}
		}
	case ContentImage, ContentAudio:
		if b.Data == "" {
			required = append(required, `"data":""`)
		}
		if b.MimeType == "" {
			required = append(required, `"mimeType":""`)
		}
	case ContentResourceLink:
		if b.URI == "" {
			required = append(required, `"uri":""`)
		}
		if b.Name == "" {
			required = append(required, `"name":""`)
		}
	}
	return appendMembers(raw, required...), nil
}

// check reports the first problem of a block received from the client;
// field is the block's path for the error message.
func (b *ContentBlock) check(field string) *Error {
	switch b.Type {
	case ContentText, ContentImage, ContentAudio, ContentResourceLink:
	case ContentResource:
		if b.Resource == nil {
			return InvalidParams(field+".resource", "required for a resource block")
		}
	case "":
		return InvalidParams(field+".type", "required")
	default:
		return InvalidParams(field+".type", fmt.Sprintf("unknown content block type %q", b.Type))
	}
	return nil
}

// EmbeddedResource is the resource of a "resource" block: text or blob.
type EmbeddedResource struct {
	URI      string  `json:"uri"`
	Text     *string `json:"text,omitempty"`
	Blob     *string `json:"blob,omitempty"` // base64
	MimeType string  `json:"mimeType,omitempty"`
}

// SessionNotification is the params of the "session/update" notification.
type SessionNotification struct {
	SessionID string        `json:"sessionId"`
	Update    SessionUpdate `json:"update"`
}

// SessionUpdate is one variant of the update union, tagged on the wire by
// "sessionUpdate". The variants are [UserMessageChunk], [AgentMessageChunk],
// [AgentThoughtChunk], [ToolCall], [ToolCallUpdate], [Plan],
// [AvailableCommandsUpdate], [CurrentModeUpdate], [ConfigOptionUpdate],
// [UsageUpdate] and [SessionInfoUpdate].
type SessionUpdate interface {
	// SessionUpdateKind returns the "sessionUpdate" discriminator.
	SessionUpdateKind() string
}

// MarshalJSON writes the update with its "sessionUpdate" discriminator.
func (n SessionNotification) MarshalJSON() ([]byte, error) {
	if n.Update == nil {
		return nil, fmt.Errorf("session/update: update is nil")
	}
	body, err := marshal(n.Update)
	if err != nil {
		return nil, err
	}
	tag, _ := marshal(n.Update.SessionUpdateKind())
	var b bytes.Buffer
	b.WriteString(`{"sessionId":`)
	sid, _ := marshal(n.SessionID)
	b.Write(sid)
	b.WriteString(`,"update":{"sessionUpdate":`)
	b.Write(tag)
	if len(body) > 2 {
		b.WriteByte(',')
		b.Write(body[1:])
	} else {
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON decodes the update variant named by "sessionUpdate"; an
// unknown variant is an error, never a guess.
func (n *SessionNotification) UnmarshalJSON(data []byte) error {
	var w struct {
		SessionID string          `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	var tag struct {
		Kind string `json:"sessionUpdate"`
	}
	if err := json.Unmarshal(w.Update, &tag); err != nil {
		return fmt.Errorf("update: %w", err)
	}
	var u SessionUpdate
	switch tag.Kind {
	case "user_message_chunk":
		u = new(UserMessageChunk)
	case "agent_message_chunk":
		u = new(AgentMessageChunk)
	case "agent_thought_chunk":
		u = new(AgentThoughtChunk)
	case "tool_call":
		u = new(ToolCall)
	case "tool_call_update":
		u = new(ToolCallUpdate)
	case "plan":
		u = new(Plan)
	case "available_commands_update":
		u = new(AvailableCommandsUpdate)
	case "current_mode_update":
		u = new(CurrentModeUpdate)
	case "config_option_update":
		u = new(ConfigOptionUpdate)
	case "usage_update":
		u = new(UsageUpdate)
	case "session_info_update":
		u = new(SessionInfoUpdate)
	case "compaction_update":
		u = new(CompactionUpdate)
	default:
		return fmt.Errorf("update.sessionUpdate: unknown variant %q", tag.Kind)
	}
	if err := json.Unmarshal(w.Update, u); err != nil {
		return fmt.Errorf("update: %w", err)
	}
	n.SessionID, n.Update = w.SessionID, u
	return nil
}

// UserMessageChunk is a "user_message_chunk" update (used in history replay).
type UserMessageChunk struct {
	Content   ContentBlock `json:"content"`
	MessageID string       `json:"messageId,omitempty"`
}

// AgentMessageChunk is an "agent_message_chunk" update.
type AgentMessageChunk struct {
	Content   ContentBlock `json:"content"`
	MessageID string       `json:"messageId,omitempty"`
}

// AgentThoughtChunk is an "agent_thought_chunk" update.
type AgentThoughtChunk struct {
	Content   ContentBlock `json:"content"`
	MessageID string       `json:"messageId,omitempty"`
}

// SessionUpdateKind implements [SessionUpdate].
func (*UserMessageChunk) SessionUpdateKind() string { return "user_message_chunk" }

// SessionUpdateKind implements [SessionUpdate].
func (*AgentMessageChunk) SessionUpdateKind() string { return "agent_message_chunk" }

// SessionUpdateKind implements [SessionUpdate].
func (*AgentThoughtChunk) SessionUpdateKind() string { return "agent_thought_chunk" }

// Tool kinds (ACP ToolKind).
const (
	ToolKindRead    = "read"
	ToolKindEdit    = "edit"
	ToolKindDelete  = "delete"
	ToolKindMove    = "move"
	ToolKindSearch  = "search"
	ToolKindExecute = "execute"
	ToolKindThink   = "think"
	ToolKindFetch   = "fetch"
	ToolKindOther   = "other"
)

// Tool call statuses (ACP ToolCallStatus).
const (
	ToolStatusPending    = "pending"
	ToolStatusInProgress = "in_progress"
	ToolStatusCompleted  = "completed"
	ToolStatusFailed     = "failed"
)

// ToolCall is a "tool_call" update: a new tool call. Name is the tool's
// programmatic name (ACP's ToolCall.name, stable in the v1 schema the
// TypeScript SDK 2.4.0 bundles; older clients strip it silently).
type ToolCall struct {
	ToolCallID string             `json:"toolCallId"`
	Title      string             `json:"title"`
	Name       string             `json:"name,omitempty"`
	Kind       string             `json:"kind,omitempty"`
	Status     string             `json:"status,omitempty"`
	Content    []ToolCallContent  `json:"content,omitempty"`
	Locations  []ToolCallLocation `json:"locations,omitempty"`
	RawInput   json.RawMessage    `json:"rawInput,omitempty"`
	RawOutput  json.RawMessage    `json:"rawOutput,omitempty"`
	Meta       json.RawMessage    `json:"_meta,omitempty"`
}

// SessionUpdateKind implements [SessionUpdate].
func (*ToolCall) SessionUpdateKind() string { return "tool_call" }

// ToolCallUpdate is ACP's ToolCallUpdate: a tool call id plus the fields that
// changed. It is both the "tool_call_update" session update and the toolCall
// of a permission request (where no discriminator is sent). Content and Locations replace the previous
// arrays: nil leaves them unchanged (omitted), an empty non-nil slice clears
// them (sent as []).
type ToolCallUpdate struct {
	ToolCallID string             `json:"toolCallId"`
	Title      string             `json:"title,omitempty"`
	Name       string             `json:"name,omitempty"`
	Kind       string             `json:"kind,omitempty"`
	Status     string             `json:"status,omitempty"`
	Content    []ToolCallContent  `json:"content,omitzero"`
	Locations  []ToolCallLocation `json:"locations,omitzero"`
	RawInput   json.RawMessage    `json:"rawInput,omitempty"`
	RawOutput  json.RawMessage    `json:"rawOutput,omitempty"`
	Meta       json.RawMessage    `json:"_meta,omitempty"`
}

// SessionUpdateKind implements [SessionUpdate]: as a session update it is
// sent as "tool_call_update".
func (*ToolCallUpdate) SessionUpdateKind() string { return "tool_call_update" }

// Tool call content types.
const (
	ToolContentContent  = "content"
	ToolContentDiff     = "diff"
	ToolContentTerminal = "terminal"
)

// ToolCallContent is one item of a tool call's content; Type selects:
//
//	content   Content
//	diff      Path, OldText (nil = new file, sent as null), NewText
//	terminal  TerminalID
type ToolCallContent struct {
	Type       string        `json:"type"`
	Content    *ContentBlock `json:"content,omitempty"`
	Path       string        `json:"path,omitempty"`
	OldText    *string       `json:"oldText,omitempty"`
	NewText    string        `json:"newText,omitempty"`
	TerminalID string        `json:"terminalId,omitempty"`
}

// TextContent returns tool call content holding one text block.
func TextContent(text string) ToolCallContent {
	b := TextBlock(text)
	return ToolCallContent{Type: ToolContentContent, Content: &b}
}

// DiffContent returns a diff item; a nil oldText marks a new file.
func DiffContent(path string, oldText *string, newText string) ToolCallContent {
	return ToolCallContent{Type: ToolContentDiff, Path: path, OldText: oldText, NewText: newText}
}

// MarshalJSON writes exactly the members of the item's type; a diff always
// has "oldText" (null for a new file) and "newText".
func (c ToolCallContent) MarshalJSON() ([]byte, error) {
	switch c.Type {
	case ToolContentDiff:
		return marshal(struct {
			Type    string  `json:"type"`
			Path    string  `json:"path"`
			OldText *string `json:"oldText"`
			NewText string  `json:"newText"`
		}{c.Type, c.Path, c.OldText, c.NewText})
	case ToolContentContent:
		var block ContentBlock
		if c.Content != nil {
			block = *c.Content
		}
		return marshal(struct {
			Type    string       `json:"type"`
			Content ContentBlock `json:"content"`
		}{c.Type, block})
	case ToolContentTerminal:
		return marshal(struct {
			Type       string `json:"type"`
			TerminalID string `json:"terminalId"`
		}{c.Type, c.TerminalID})
	}
	type plain ToolCallContent
	return marshal(plain(c))
}

// ToolCallLocation is a file a tool call touches; Line is 1-based, 0 = none.
type ToolCallLocation struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
}

// Plan is a "plan" update: the full list of entries every time.
type Plan struct {
	Entries []PlanEntry `json:"entries"`
}

// SessionUpdateKind implements [SessionUpdate].
func (*Plan) SessionUpdateKind() string { return "plan" }

// PlanEntry is one step of a plan. Priority is high, medium or low; Status
// is pending, in_progress or completed.
type PlanEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"`
	Status   string `json:"status"`
}

// AvailableCommandsUpdate is an "available_commands_update" update.
type AvailableCommandsUpdate struct {
	AvailableCommands []AvailableCommand `json:"availableCommands"`
}

// SessionUpdateKind implements [SessionUpdate].
func (*AvailableCommandsUpdate) SessionUpdateKind() string { return "available_commands_update" }

// AvailableCommand is a slash command.
type AvailableCommand struct {
	Name        string                 `json:"name"`
	Description string                 `json:"description"`
	Input       *AvailableCommandInput `json:"input,omitempty"`
}

// AvailableCommandInput describes a command's free-text input.
type AvailableCommandInput struct {
	Hint string `json:"hint"`
}

// CurrentModeUpdate is a "current_mode_update" update.
type CurrentModeUpdate struct {
	CurrentModeID string `json:"currentModeId"`
}

// SessionUpdateKind implements [SessionUpdate].
func (*CurrentModeUpdate) SessionUpdateKind() string { return "current_mode_update" }

// ConfigOptionUpdate is a "config_option_update" update with the full list.
type ConfigOptionUpdate struct {
	ConfigOptions []SessionConfigOption `json:"configOptions"`
}

// SessionUpdateKind implements [SessionUpdate].
func (*ConfigOptionUpdate) SessionUpdateKind() string { return "config_option_update" }

// UsageUpdate is a "usage_update" update: tokens used of the context size.
type UsageUpdate struct {
	Used int64 `json:"used"`
	Size int64 `json:"size"`
	Cost *Cost `json:"cost,omitempty"`
}

// SessionUpdateKind implements [SessionUpdate].
func (*UsageUpdate) SessionUpdateKind() string { return "usage_update" }

// Cost is an amount of money spent.
type Cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// CompactionUpdate is a "compaction_update" update (ACP v1, sent only to
// clients that advertise clientCapabilities.session.compaction): one
// compaction, addressed by its id, in_progress then completed, failed or
// cancelled. Summary and Error are patch fields: nil leaves them as they
// were.
type CompactionUpdate struct {
	CompactionID string          `json:"compactionId"`
	Status       string          `json:"status"`
	Summary      *[]ContentBlock `json:"summary,omitempty"`
	Error        *string         `json:"error,omitempty"`
}

// SessionUpdateKind implements [SessionUpdate].
func (*CompactionUpdate) SessionUpdateKind() string { return "compaction_update" }

// SessionInfoUpdate is a "session_info_update" update. A nil field is
// omitted (unchanged).
type SessionInfoUpdate struct {
	Title     *string `json:"title,omitempty"`
	UpdatedAt *string `json:"updatedAt,omitempty"`
}

// SessionUpdateKind implements [SessionUpdate].
func (*SessionInfoUpdate) SessionUpdateKind() string { return "session_info_update" }

// Permission option kinds and ids (PROTOCOL.md §6).
const (
	PermissionAllowOnce    = "allow_once"
	PermissionAllowAlways  = "allow_always"
	PermissionRejectOnce   = "reject_once"
	PermissionRejectAlways = "reject_always"
)

// RequestPermissionRequest is the params of "session/request_permission".
type RequestPermissionRequest struct {
	SessionID string             `json:"sessionId"`
	ToolCall  ToolCallUpdate     `json:"toolCall"`
	Options   []PermissionOption `json:"options"`
}

// PermissionOption is one choice offered to the user.
type PermissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

// Permission outcomes.
const (
	OutcomeSelected  = "selected"
	OutcomeCancelled = "cancelled"
)

// RequestPermissionResponse is the result of "session/request_permission".
type RequestPermissionResponse struct {
	Outcome PermissionOutcome `json:"outcome"`
}

// PermissionOutcome is {outcome:"cancelled"} or {outcome:"selected", optionId}.
type PermissionOutcome struct {
	Outcome  string `json:"outcome"`
	OptionID string `json:"optionId,omitempty"`
}

// appendMembers inserts extra JSON members (already encoded "k":v pairs)
// into the object raw.
func appendMembers(raw []byte, members ...string) []byte {
	if len(members) == 0 {
		return raw
	}
	var b bytes.Buffer
	b.Write(raw[:len(raw)-1])
	for _, m := range members {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(m)
	}
	b.WriteByte('}')
	return b.Bytes()
}
