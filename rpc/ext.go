package rpc

import (
	"encoding/json"
	"time"
)

// This file holds the wire types of the _coding-agent/ extension methods
// (PROTOCOL.md §9), the document/* notifications (§8) and files_changed.

// ToolsListRequest is the params of "_coding-agent/tools/list".
type ToolsListRequest struct{}

// ToolsListResponse is the result of "_coding-agent/tools/list".
type ToolsListResponse struct {
	Tools []ToolInfo `json:"tools"`
}

// MarshalJSON sends a nil Tools as [].
func (r ToolsListResponse) MarshalJSON() ([]byte, error) {
	type plain ToolsListResponse
	if r.Tools == nil {
		r.Tools = []ToolInfo{}
	}
	return marshal(plain(r))
}

// ToolInfo describes one built-in tool.
type ToolInfo struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// ToolsCallRequest is the params of "_coding-agent/tools/call". With
// SessionID it runs in that session; without it, standalone in Cwd (required
// then) under Preset (default read-only).
type ToolsCallRequest struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"` // raw; validated by the tool
	SessionID string          `json:"sessionId,omitempty"`
	Cwd       string          `json:"cwd,omitempty"`
	Preset    string          `json:"preset,omitempty"`
}

// ToolsCallResponse is the result of "_coding-agent/tools/call": the tool
// result. A failed tool is IsError true, not a JSON-RPC error.
type ToolsCallResponse struct {
	Content []ContentBlock  `json:"content"`
	IsError bool            `json:"isError"`
	Details json.RawMessage `json:"details,omitempty"`
}

// MarshalJSON sends a nil Content as [] and a nil Details as {}.
func (r ToolsCallResponse) MarshalJSON() ([]byte, error) {
	type plain ToolsCallResponse
	if r.Content == nil {
		r.Content = []ContentBlock{}
	}
	if len(r.Details) == 0 {
		r.Details = json.RawMessage(`{}`)
	}
	return marshal(plain(r))
}

// OutputsListRequest is the params of "_coding-agent/outputs/list".
type OutputsListRequest struct{}

// OutputsListResponse is the result of "_coding-agent/outputs/list".
type OutputsListResponse struct {
	Outputs []OutputInfo `json:"outputs"`
}

// MarshalJSON sends a nil Outputs as [].
func (r OutputsListResponse) MarshalJSON() ([]byte, error) {
	type plain OutputsListResponse
	if r.Outputs == nil {
		r.Outputs = []OutputInfo{}
	}
	return marshal(plain(r))
}

// OutputInfo describes one retained full-output file.
type OutputInfo struct {
	Path       string    `json:"path"`
	Bytes      int64     `json:"bytes"`
	ToolCallID string    `json:"toolCallId"`
	CreatedAt  time.Time `json:"createdAt"`
}

// OutputsRemoveRequest is the params of "_coding-agent/outputs/remove":
// exactly one of Path and All.
type OutputsRemoveRequest struct {
	Path string `json:"path,omitempty"`
	All  bool   `json:"all,omitempty"`
}

// OutputsRemoveResponse is the result of "_coding-agent/outputs/remove".
type OutputsRemoveResponse struct {
	Removed []string `json:"removed"`
}

// MarshalJSON sends a nil Removed as [].
func (r OutputsRemoveResponse) MarshalJSON() ([]byte, error) {
	type plain OutputsRemoveResponse
	if r.Removed == nil {
		r.Removed = []string{}
	}
	return marshal(plain(r))
}

// DidOpenNotification is the params of "document/didOpen".
type DidOpenNotification struct {
	SessionID  string `json:"sessionId"`
	URI        string `json:"uri"`
	LanguageID string `json:"languageId,omitempty"`
	Version    int64  `json:"version"`
	Text       string `json:"text"`
}

// DidChangeNotification is the params of "document/didChange".
type DidChangeNotification struct {
	SessionID      string          `json:"sessionId"`
	URI            string          `json:"uri"`
	Version        int64           `json:"version"`
	ContentChanges []ContentChange `json:"contentChanges"`
}

// ContentChange is one edit: Text replaces Range, or the whole document when
// Range is nil.
type ContentChange struct {
	Range *Range `json:"range,omitempty"`
	Text  string `json:"text"`
}

// Range is a span of a document, end exclusive.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Position is a zero-based line and a zero-based offset in UTF-16 code units
// within it, as in LSP.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// DidSaveNotification is the params of "document/didSave".
type DidSaveNotification struct {
	SessionID string `json:"sessionId"`
	URI       string `json:"uri"`
}

// DidCloseNotification is the params of "document/didClose".
type DidCloseNotification struct {
	SessionID string `json:"sessionId"`
	URI       string `json:"uri"`
}

// File change kinds of [FileChange].
const (
	ChangeCreated  = "created"
	ChangeModified = "modified"
	ChangeDeleted  = "deleted"
)

// FilesChangedNotification is the params of "_coding-agent/files_changed".
type FilesChangedNotification struct {
	SessionID string       `json:"sessionId"`
	Changes   []FileChange `json:"changes"`
}

// FileChange reports one changed path. Origin is nil (sent as null) when no
// tool call caused the change.
type FileChange struct {
	Path   string        `json:"path"`
	URI    string        `json:"uri"`
	Kind   string        `json:"kind"`
	Origin *ChangeOrigin `json:"origin"`
	Open   bool          `json:"open"`
	SHA256 string        `json:"sha256,omitempty"`
}

// ChangeOrigin attributes a change to a tool call.
type ChangeOrigin struct {
	ToolCallID string `json:"toolCallId,omitempty"`
	Tool       string `json:"tool,omitempty"`
}
