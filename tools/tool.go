// Package tools implements the four built-in tools of coding-agent (read,
// bash, edit and write) as a Go library: the SDK for Go hosts.
//
// Build one tool with [NewRead], [NewBash], [NewEdit] or [NewWrite], or a set
// of them by name with [Build]. Every tool validates its arguments against
// its JSON Schema before it runs, applies the permission preset and the
// protected-storage rules, and serializes mutations of one file through the
// [MutationQueue] shared by the tools of one [Options].
//
// A [Tool] is a value that knows everything a host needs about it: its
// name, description and schema for the model; its ACP [Kind] and a live
// title from its streamed arguments ([Titler]) for clients; how to
// validate and decode its arguments before the call is dispatched; and
// how to run. Tools from elsewhere (an MCP server's) implement the same
// interface and sit beside the built-in ones in a session's tool set.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/coding-agent/coding-agent/sandbox"
)

// Tool is one tool a session offers to a model: one of the built-in tools
// ([NewRead], [NewBash], [NewEdit], [NewWrite]) or a tool from elsewhere,
// such as one an MCP server provides. A host holds tools as values: it
// builds them once (for a session, when it starts or when its policy
// changes) and calls them many times.
//
// A tool of another origin implements this interface too; nothing outside
// the tool needs to know its name. Such a tool:
//   - names itself ([Tool.Name], unique within the set it is part of) and
//     describes itself to the model (Description, Schema);
//   - tells clients how to show its calls: an ACP kind ([Tool.Kind],
//     [KindOther] if nothing fits) and a live title from its streamed
//     arguments ([Tool.NewTitler]; [StaticTitle] or [FieldTitle] make
//     one);
//   - validates and decodes its arguments ([Tool.Validate]) before the
//     call is dispatched, so that an invalid call is refused without
//     starting;
//   - runs ([Tool.Execute]), taking the decoded arguments from
//     [Call.Input].
//
// The methods are safe for concurrent use.
type Tool interface {
	// Name is the name the model calls the tool by: "read", "bash",
	// "edit" or "write" for the built-in tools.
	Name() string
	// Title is a short human title ("Read").
	Title() string
	// Description is what the model is told about the tool.
	Description() string
	// Schema is the JSON Schema of the arguments object.
	Schema() json.RawMessage
	// Kind is the ACP kind of the tool's calls.
	Kind() Kind
	// NewTitler returns the live title of one call, computed from its
	// arguments while they stream ("Bash · go test ./...").
	NewTitler() Titler
	// Validate checks complete arguments against the schema and the
	// tool's rules and decodes them. An invalid call is a
	// *ValidationError naming the field; the decoded value goes into
	// [Call.Input].
	Validate(args json.RawMessage) (any, error)
	// Execute runs the tool. When call.Input holds what Validate returned
	// for call.Args it is used as is; otherwise Execute validates
	// call.Args itself.
	//
	// It returns a Result for every outcome the tool produced, including a
	// failed command (Result.IsError). It returns a non-nil error when the
	// call was refused or could not do its work: invalid arguments
	// (*ValidationError), a denied permission (*PermissionError), a missing
	// file, or cancellation. The error's text is written for the model;
	// [ErrorResult] turns it into the result a client expects.
	Execute(ctx context.Context, call Call) (Result, error)
}

// Call is one invocation of a tool.
type Call struct {
	// ID identifies the call (the ACP toolCallId). It may be empty for
	// standalone calls; it names retained output files and attributes
	// file changes.
	ID string
	// Args is the JSON arguments object.
	Args json.RawMessage
	// Input, if not nil, is what the tool's Validate returned for Args:
	// the arguments are then not parsed again.
	Input any
	// Started, if not nil, is called when the call has passed its checks
	// and approvals and its work begins: a host reports the call in
	// progress then, not while an approval is still being asked. The
	// built-in tools call it at most once; a call refused before its work
	// never calls it.
	Started func()
	// Progress, if not nil, receives live output while the tool runs
	// (bash: the current tail of the output, at most 10 times a second).
	// It is called from one goroutine at a time.
	Progress func(Progress)
}

// input returns the decoded arguments of call: call.Input when it has the
// type validate returns, else validate(call.Args).
func input[T any](call Call, validate func(json.RawMessage) (any, error)) (T, error) {
	if in, ok := call.Input.(T); ok {
		return in, nil
	}
	v, err := validate(call.Args)
	if err != nil {
		var zero T
		return zero, err
	}
	return v.(T), nil
}

// Progress is a live update from a running tool.
type Progress struct {
	// Tail is the most recent output, within the output limits.
	Tail string
	// Bytes is the total number of output bytes so far.
	Bytes int64
}

// Result is the outcome of a tool call, in the shape of PROTOCOL.md §5:
// {content, isError, details}.
type Result struct {
	Content []Content      `json:"content"`
	IsError bool           `json:"isError"`
	Details map[string]any `json:"details"`
	// Changes lists the files the call changed, for hosts that show diffs
	// (ACP {type:"diff"} tool call content). It is not part of the wire
	// result.
	Changes []FileChange `json:"-"`
}

// Content is one content block of a result. The built-in tools produce
// text blocks only; a tool from elsewhere (an MCP server's) may add blocks
// of the other ACP ContentBlock types: "image" and "audio" (Data in
// base64, MimeType), "resource_link" (URI, Name, …) and "resource"
// (Resource). Hosts give the model the text blocks.
type Content struct {
	Type        string    `json:"type"`
	Text        string    `json:"text"`
	Data        string    `json:"data,omitempty"`
	MimeType    string    `json:"mimeType,omitempty"`
	URI         string    `json:"uri,omitempty"`
	Name        string    `json:"name,omitempty"`
	Title       string    `json:"title,omitempty"`
	Description string    `json:"description,omitempty"`
	Size        *int64    `json:"size,omitempty"`
	Resource    *Resource `json:"resource,omitempty"`
}

// Resource is an embedded resource of a "resource" content block: its
// text, or a binary blob in base64.
type Resource struct {
	URI      string  `json:"uri"`
	MimeType string  `json:"mimeType,omitempty"`
	Text     *string `json:"text,omitempty"`
	Blob     *string `json:"blob,omitempty"`
}

// FileChange describes a change a tool made to one file.
type FileChange struct {
	// Path is the absolute path that was changed.
	Path string
	// OldText is the previous content, nil when the file was created.
	OldText *string
	// NewText is the new content.
	NewText string
	// Line is the 1-based line of the first change.
	Line int
}

// TextResult returns a successful result with one text block.
func TextResult(text string, details map[string]any) Result {
	if details == nil {
		details = map[string]any{}
	}
	return Result{Content: []Content{{Type: "text", Text: text}}, Details: details}
}

// ErrorResult turns an error from [Tool.Execute] into the error result a
// client or a model expects: one text block with the error's message and
// details.error naming its kind ("validation", "permission", "cancelled",
// "failed").
func ErrorResult(err error) Result {
	r := TextResult(err.Error(), map[string]any{"error": ErrorKind(err)})
	r.IsError = true
	return r
}

// Run executes tool and folds a returned error into the result, as a host
// that only forwards results to a client wants.
func Run(ctx context.Context, tool Tool, call Call) Result {
	res, err := tool.Execute(ctx, call)
	if err != nil {
		return ErrorResult(err)
	}
	if res.Details == nil {
		res.Details = map[string]any{}
	}
	if res.Content == nil {
		res.Content = []Content{}
	}
	return res
}

// Output limits for the text returned to the model, before annotations
// (PROTOCOL.md §5): whichever comes first.
const (
	MaxLines = 2000
	MaxBytes = 50 * 1024
)

// Preset is a permission preset. It is [sandbox.Preset], the one preset
// type of coding-agent, under the name its users look for here.
type Preset = sandbox.Preset

// The presets, from the most to the least restrictive.
const (
	ReadOnly       = sandbox.ReadOnly
	WorkspaceWrite = sandbox.WorkspaceWrite
	FullAccess     = sandbox.FullAccess
)

// Presets lists the valid presets in order.
func Presets() []Preset { return sandbox.Presets() }

// ParsePreset checks a preset name. The empty string means [ReadOnly].
func ParsePreset(s string) (Preset, error) { return sandbox.ParsePreset(s) }

// Options configure the tools of one session or one standalone call. The
// zero value gives read-only tools with no approval context.
type Options struct {
	// Preset is the permission preset; empty means ReadOnly.
	Preset Preset
	// WritableRoots are directories besides cwd where workspace-write
	// allows mutations (ACP additionalDirectories).
	WritableRoots []string
	// DataDir is the agent's data directory: protected storage, and the
	// home of retained output files (DataDir/outputs).
	DataDir string
	// Approver is asked about mutations outside the preset and about bash
	// escalations. Nil means there is no approval context: such requests
	// are denied.
	Approver Approver
	// Queue serializes mutations per canonical path. Tools that may touch
	// the same files must share one queue; nil gives each tool its own.
	Queue *MutationQueue
	// Buffers reports editor buffers with unsaved changes. Nil means no
	// editor is attached.
	Buffers Buffers
	// Outputs registers retained full-output files. Nil gives a store
	// under DataDir/outputs.
	Outputs *OutputStore
	// Sandbox prepares sandboxed bash commands. Nil means no sandbox is
	// available: bash refuses to run under read-only and workspace-write.
	Sandbox Sandbox
	// Commands caps the bash commands running at once; the rest wait.
	// Tools of one process should share one. Nil means no cap.
	Commands *CommandLimit
	// KillGrace is how long a cancelled or timed-out bash command gets
	// between SIGTERM and SIGKILL; 0 means DefaultGrace (the most allowed).
	KillGrace time.Duration
	// Env is the environment for bash commands; nil means os.Environ().
	Env []string
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
}

// Approver decides on one request that the preset does not allow by itself.
// It is declared here, where it is consumed; a session implements it by
// asking the client (ACP session/request_permission).
type Approver interface {
	// Approve returns nil to allow exactly this change or command once. Any
	// non-nil error means not allowed; its text says why (rejected, timed
	// out, cancelled, the client answered with an error).
	Approve(ctx context.Context, req ApprovalRequest) error
}

// ApprovalFunc adapts a function to [Approver].
type ApprovalFunc func(ctx context.Context, req ApprovalRequest) error

// Approve calls f.
func (f ApprovalFunc) Approve(ctx context.Context, req ApprovalRequest) error { return f(ctx, req) }

// Approval request kinds, as in PROTOCOL.md §6 _meta.request.
const (
	RequestFileChange = "file-change"
	RequestEscalation = "escalation"
	// RequestMCPTool asks to call a tool of an MCP server (Server,
	// MCPTool, Args).
	RequestMCPTool = "mcp-tool"
)

// ApprovalRequest is the exact change or command to approve.
type ApprovalRequest struct {
	// Kind is RequestFileChange, RequestEscalation or RequestMCPTool.
	Kind string
	// Tool is the tool's name; CallID the call's ID.
	Tool   string
	CallID string
	// Args are the call's validated arguments.
	Args json.RawMessage
	// Change is the file change (file-change requests).
	Change *FileChange
	// Diff is a unified diff of Change.
	Diff string
	// Command is the bash command (escalation requests).
	Command string
	// Server and MCPTool name the MCP server and its tool (RequestMCPTool).
	Server  string
	MCPTool string
	// Justification is the model's justification, if it gave one.
	Justification string
	// Reason is a policy-written reason, always set.
	Reason string
}

// Buffers is the view of the editor's open documents the tools need. It is
// declared here and implemented by package editorsync.
type Buffers interface {
	// Unsaved reports whether the editor holds unsaved changes to the file
	// at the absolute path.
	Unsaved(path string) bool
}

// Sandbox prepares a bash command that runs inside the OS sandbox.
type Sandbox interface {
	// Command returns a command, not started yet, that runs
	// `bash -c req.Command` in req.Dir under the policy of req.
	Command(ctx context.Context, req SandboxRequest) (SandboxedCommand, error)
}

// SandboxRequest is what the bash tool asks the sandbox to run.
type SandboxRequest struct {
	Command string
	Dir     string
	// Preset is ReadOnly or WorkspaceWrite.
	Preset Preset
	// WritableRoots are the session roots (cwd first) writable under
	// WorkspaceWrite.
	WritableRoots []string
	// Protected are extra paths kept read-only (the data directory).
	Protected []string
	// Env is the unfiltered environment; the sandbox filters it.
	Env []string
}

// SandboxedCommand is a command prepared by a [Sandbox]. The bash tool
// calls Start, Pid, Ended, Wait and Close, in that order, from one
// goroutine.
type SandboxedCommand interface {
	// Start starts the command with stdin on /dev/null and its output on
	// stdout and stderr; the caller closes its copies afterwards.
	Start(stdout, stderr *os.File) error
	// Pid is the leader of the command's process group: a signal to the
	// group reaches every process of the command.
	Pid() int
	// Ended blocks until the command has ended. The process group ID
	// stays reserved until Wait, so that the group can still be killed
	// safely.
	Ended()
	// Wait returns the command's exit code; when it ended without one,
	// the code is -1 and the error says why.
	Wait() (int, error)
	// Close releases what the sandbox set up for the command. Call it
	// once, after Wait, or instead of Start.
	Close()
}

// ValidationError reports arguments that do not satisfy a tool's schema or
// its rules. Field is a JSON pointer-like path ("/edits/0/oldText"), Rule
// says what was violated.
type ValidationError struct {
	Tool  string
	Field string
	Rule  string
}

func (e *ValidationError) Error() string {
	field := e.Field
	if field == "" {
		field = "arguments"
	}
	return fmt.Sprintf("invalid arguments for %s: %s: %s", e.Tool, field, e.Rule)
}

// PermissionError reports a call that the preset, the protected-storage
// rules or the approver did not allow. Nothing was changed or run.
type PermissionError struct {
	Path   string
	Reason string
}

func (e *PermissionError) Error() string { return e.Reason }

// ErrorKind classifies an error from [Tool.Execute]: "validation",
// "permission", "cancelled" or "failed".
func ErrorKind(err error) string {
	var ve *ValidationError
	var pe *PermissionError
	switch {
	case errors.As(err, &ve):
		return "validation"
	case errors.As(err, &pe):
		return "permission"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "cancelled"
	default:
		return "failed"
	}
}

// Builtins returns the names of the built-in tools in their canonical order.
func Builtins() []string { return []string{"read", "bash", "edit", "write"} }

// Select applies the rules for a list of tool names: an empty list means no
// tools, duplicates are removed (first occurrence kept), and an unknown name
// rejects the whole list with an error that lists the valid names.
func Select(names []string) ([]string, error) {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if !slices.Contains(Builtins(), n) {
			return nil, fmt.Errorf("unknown tool %q (valid tools: %s)", n, strings.Join(Builtins(), ", "))
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// started reports that the call's work begins (see [Call.Started]).
func (c Call) started() {
	if c.Started != nil {
		c.Started()
	}
}
