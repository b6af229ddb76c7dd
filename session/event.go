package session

import (
	"encoding/json"

	"github.com/coding-agent/coding-agent/tools"
)

// The SDK's own vocabulary. A host of a [Session] sees what happens in it as
// [Event] values, sends prompts as [Content], and decides on
// [ApprovalRequest]s with a [Decision]. None of these are wire types: the
// ACP adapter ([NewAgent]) translates them to ACP messages, and other front
// ends (--print, a web page, a terminal UI) read them directly.

// Content is one block of a prompt (or of a user message echoed back).
// Type selects which fields apply:
//
//	text          Text
//	image         Data (base64), MimeType, URI (optional)
//	audio         Data (base64), MimeType
//	resource_link URI, Name; Title, Description, MimeType, Size (optional)
//	resource      Resource
//
// Annotations and Meta are kept as they came, to be echoed back.
type Content struct {
	Type        string
	Text        string
	Data        string
	MimeType    string
	URI         string
	Name        string
	Title       string
	Description string
	Size        *int64
	Resource    *Resource
	Annotations json.RawMessage
	Meta        json.RawMessage
}

// Content block types.
const (
	ContentText         = "text"
	ContentImage        = "image"
	ContentAudio        = "audio"
	ContentResourceLink = "resource_link"
	ContentResource     = "resource"
)

// Text returns a text content block.
func Text(s string) Content { return Content{Type: ContentText, Text: s} }

// Resource is an embedded resource: a file's text or its bytes (base64).
type Resource struct {
	URI      string
	Text     *string
	Blob     *string
	MimeType string
}

// Event is one thing that happened in a session. Its dynamic type is one of
// *UserMessage, *MessageChunk, *ThoughtChunk, *ToolCallStarted,
// *ToolCallUpdated, *ToolCallFinished, *Usage, *ModeChanged,
// *ConfigChanged, *InfoChanged, or, for a subscriber that fell behind,
// *Lagged.
type Event interface{ isEvent() }

// UserMessage is a block of the user's prompt, as the session received it.
type UserMessage struct {
	MessageID string
	Content   Content
}

// MessageChunk is a piece of the agent's answer. Chunks of one message
// share its MessageID.
type MessageChunk struct {
	MessageID string
	Text      string
}

// ThoughtChunk is a piece of the model's visible reasoning.
type ThoughtChunk struct {
	MessageID string
	Text      string
}

// ToolStatus is the state of a tool call.
type ToolStatus string

// The states of a tool call: pending (announced, its arguments may still
// stream), in progress (validated and running), then completed or failed.
// A call refused before it runs goes from pending to failed.
const (
	StatusPending    ToolStatus = "pending"
	StatusInProgress ToolStatus = "in_progress"
	StatusCompleted  ToolStatus = "completed"
	StatusFailed     ToolStatus = "failed"
)

// ToolCallStarted announces a tool call (status pending). While the model
// streams its arguments, Input is nil and the title follows them in
// ToolCallUpdated events.
type ToolCallStarted struct {
	CallID string
	// Tool is the tool's name, as the model called it.
	Tool  string
	Title string
	Kind  tools.Kind
	// Input is the complete arguments, when known at the start (a host's
	// direct call).
	Input json.RawMessage
}

// ToolCallUpdated is a change of a running or pending call: a new title, a
// new status, or live output. Empty fields are unchanged.
type ToolCallUpdated struct {
	CallID string
	Title  string
	Status ToolStatus
	// Progress, if not nil, is the call's latest live output.
	Progress *tools.Progress
	// Input, if not nil, is what has arrived of the arguments of a call
	// that is still streaming: its top-level string members so far, each
	// cut to 4 KiB (see [tools.PartialInput]).
	Input json.RawMessage
}

// ToolCallFinished ends a tool call: completed or failed.
type ToolCallFinished struct {
	CallID string
	Status ToolStatus // StatusCompleted or StatusFailed
	// Text is the result's text for the model (or why the call ended
	// without running).
	Text []string
	// Media are the result's blocks besides its text, for the host to
	// show: an MCP tool's images, audio, resource links and resources.
	Media []Content
	// Diffs are the file changes the call made: the tool's own, and for a
	// command the files it changed on disk.
	Diffs []Diff
	// Locations are the files the call touched.
	Locations []Location
	// Input is the call's final arguments; Details the tool's details
	// (JSON). Both are nil for a call that never ran (cancelled before it
	// started, or its model request failed).
	Input   json.RawMessage
	Details json.RawMessage
}

// Diff is a change to one file. OldText nil means the file was created.
type Diff struct {
	Path    string
	OldText *string
	NewText string
}

// Location is a file (and a 1-based line) a tool call touched.
type Location struct {
	Path string
	Line int
}

// Usage reports the context the latest model request used, of the
// model's window, and the money spent by the session when known.
type Usage struct {
	Used, Size int64
	// CostUSD is the session's spending so far; nil when the price of the
	// model is unknown.
	CostUSD *float64
}

// ModeChanged reports a new permission preset (ACP's mode).
type ModeChanged struct {
	Preset tools.Preset
}

// ConfigChanged reports the session's settings after one changed: the
// full list.
type ConfigChanged struct {
	Options []ConfigOption
}

// ConfigOption is a setting of a session with a fixed set of values.
type ConfigOption struct {
	ID, Name string
	// Category is "mode" or "model".
	Category     string
	CurrentValue string
	Values       []ConfigValue
}

// ConfigValue is one value a ConfigOption can take.
type ConfigValue struct {
	Value, Name, Description string
}

// InfoChanged reports new metadata of the session; empty fields are
// unchanged.
type InfoChanged struct {
	Title     string
	UpdatedAt string // RFC 3339
}

// Lagged tells a subscriber that it fell behind and missed Missed events
// (see [Session.Subscribe]). The events after it are live again; the
// subscriber can rebuild what it shows from [Session.History].
type Lagged struct {
	Missed int
}

func (*UserMessage) isEvent()      {}
func (*MessageChunk) isEvent()     {}
func (*ThoughtChunk) isEvent()     {}
func (*ToolCallStarted) isEvent()  {}
func (*ToolCallUpdated) isEvent()  {}
func (*ToolCallFinished) isEvent() {}
func (*Usage) isEvent()            {}
func (*ModeChanged) isEvent()      {}
func (*ConfigChanged) isEvent()    {}
func (*InfoChanged) isEvent()      {}
func (*Lagged) isEvent()           {}

// ApprovalRequest asks the host to allow one change or command that the
// permission preset does not allow by itself.
type ApprovalRequest struct {
	SessionID string
	CallID    string
	// Tool, Title and Kind describe the call.
	Tool  string
	Title string
	Kind  tools.Kind
	// Request is tools.RequestFileChange, tools.RequestEscalation or
	// tools.RequestMCPTool.
	Request string
	// Path is the file that would change, after resolving the path the
	// model gave (file changes).
	Path string
	// Change is the change (file changes); Diff the same as a unified
	// diff.
	Change *Diff
	Diff   string
	// Command is the command that would run outside the sandbox
	// (escalations).
	Command string
	// Justification is the model's reason, if it gave one: plain text
	// from the model, never an authorization by itself.
	Justification string
	// Reason is the policy's reason for asking, always set.
	Reason string
	// Input is the call's arguments.
	Input json.RawMessage
	// Server and MCPTool name the MCP server and its tool
	// (tools.RequestMCPTool). AllowAlways then allows that tool for the
	// rest of the session.
	Server  string
	MCPTool string
}

// Decision is a host's answer to an ApprovalRequest.
type Decision int

// The decisions. AllowAlways allows this request and, for the rest of the
// session, the same request again (the same file for a change, the same
// command line for an escalation) without asking.
const (
	Reject Decision = iota
	AllowOnce
	AllowAlways
)

func (d Decision) String() string {
	switch d {
	case AllowOnce:
		return "allow once"
	case AllowAlways:
		return "allow always"
	}
	return "reject"
}

// StopReason says why a prompt turn ended.
type StopReason string

// The stop reasons of a turn (as ACP names them).
const (
	StopEndTurn         StopReason = "end_turn"
	StopMaxTokens       StopReason = "max_tokens"
	StopMaxTurnRequests StopReason = "max_turn_requests"
	StopRefusal         StopReason = "refusal"
	StopCancelled       StopReason = "cancelled"
)
