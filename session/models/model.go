// Package models talks to language-model providers for the agent loop:
// Anthropic's Messages API and OpenAI-compatible Chat Completions (which also
// serves Ollama, vLLM, llama.cpp and LM Studio through a base URL), both
// streaming, behind one provider-neutral [Model] interface.
package models

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
)

// Model streams one model response.
type Model interface {
	// Name is "provider/model", e.g. "anthropic/claude-sonnet-4-5".
	Name() string
	// Stream sends req and calls on for every event of the response, in
	// order, from the calling goroutine. It returns when the response is
	// complete (after an EventDone), when ctx ends (ctx.Err()), or on an
	// error that retries could not overcome. An error names the provider
	// and, for HTTP failures, the status and the provider's message.
	Stream(ctx context.Context, req Request, on func(Event)) error
}

// Request is one model request: the whole conversation so far.
type Request struct {
	System   string
	Messages []Message
	Tools    []ToolSpec
	// MaxTokens bounds the response; 0 means the provider default chosen by
	// this package.
	MaxTokens int
	// NoToolUse forbids tool calls in the response (tool_choice "none"):
	// the tools are still described, since the history may use them.
	NoToolUse bool
	// Thinking is the reasoning effort: "" (the provider's default), or
	// one of ThinkingLow, ThinkingMedium, ThinkingHigh. Anthropic gets an
	// extended-thinking budget, OpenAI-compatible models reasoning_effort.
	Thinking string
}

// Reasoning efforts of [Request.Thinking].
const (
	ThinkingLow    = "low"
	ThinkingMedium = "medium"
	ThinkingHigh   = "high"
)

// Anthropic extended-thinking budgets of the efforts, in tokens.
const (
	thinkingBudgetLow    = 4_096
	thinkingBudgetMedium = 16_384
	thinkingBudgetHigh   = 32_000
)

// IsContextOverflow says whether err is a provider's refusal of a request
// that does not fit the model's context window, in the forms of Anthropic,
// OpenAI and the common local servers (vLLM, llama.cpp, Ollama, LM Studio).
func IsContextOverflow(err error) bool {
	var e *APIError
	if !errors.As(err, &e) {
		return false
	}
	if e.Status != 0 && e.Status != 400 && e.Status != 413 && e.Status != 422 && e.Status != 500 {
		return false
	}
	if e.Status == 413 && e.Provider == ProviderAnthropic {
		return false // request_too_large: the body's bytes, not the context
	}
	t := strings.ToLower(e.Type)
	if t == "context_length_exceeded" || t == "exceed_context_size_error" || t == "model_context_window_exceeded" {
		return true
	}
	m := strings.ToLower(e.Message)
	for _, s := range []string{
		"prompt is too long",                     // Anthropic: prompt is too long: 210000 tokens > 200000 maximum
		"exceed context limit",                   // Anthropic: input length and max_tokens exceed context limit
		"maximum context length",                 // OpenAI, vLLM: This model's maximum context length is N tokens
		"context_length_exceeded",                // OpenAI code quoted in the message
		"exceeds the context window",             // OpenAI: Your input exceeds the context window of this model
		"exceeds the available context size",     // llama.cpp
		"exceed_context_size",                    // llama.cpp error type quoted
		"context size has been exceeded",         // llama.cpp (older)
		"longer than the maximum model length",   // vLLM
		"exceeds maximum context length",         // Ollama
		"prompt too long",                        // Ollama
		"greater than the context length",        // LM Studio
		"tokens to keep from the initial prompt", // LM Studio / llama.cpp: context overflow
	} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// Roles of a message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one turn of the conversation. Tool results are sent in a user
// message (Anthropic's convention); the OpenAI provider maps them to "tool"
// messages.
type Message struct {
	Role  string `json:"role"`
	Parts []Part `json:"parts"`
}

// Part kinds.
const (
	PartText       = "text"
	PartThinking   = "thinking"
	PartImage      = "image"
	PartToolCall   = "tool_call"
	PartToolResult = "tool_result"
)

// Part is one piece of a message; Kind selects the fields that apply:
//
//	text         Text
//	thinking     Text, Signature (Anthropic's signature, replayed verbatim);
//	             or Data alone: redacted thinking, replayed verbatim
//	image        MimeType, Data (base64)
//	tool_call    ToolCallID, ToolName, Args (assistant messages)
//	tool_result  ToolCallID, Text, IsError (user messages)
type Part struct {
	Kind       string          `json:"kind"`
	Text       string          `json:"text,omitempty"`
	Signature  string          `json:"signature,omitempty"`
	MimeType   string          `json:"mimeType,omitempty"`
	Data       string          `json:"data,omitempty"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	ToolName   string          `json:"toolName,omitempty"`
	Args       json.RawMessage `json:"args,omitempty"`
	IsError    bool            `json:"isError,omitempty"`
}

// A thinking part with Data (and no Text) is Anthropic's redacted
// thinking: encrypted reasoning, replayed verbatim.

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string
	Description string
	Schema      json.RawMessage
}

// Event kinds.
const (
	// EventText carries Text, a piece of the answer.
	EventText = "text"
	// EventThinking carries Text, a piece of visible reasoning (and, at its
	// end, Signature where the provider gives one).
	EventThinking = "thinking"
	// EventToolStart announces tool call Index with its ToolCallID and
	// ToolName, as soon as the model starts emitting it.
	EventToolStart = "tool_start"
	// EventToolDelta carries ArgsDelta, the next bytes of tool call Index's
	// JSON arguments, split wherever the provider split them.
	EventToolDelta = "tool_delta"
	// EventToolEnd says tool call Index's arguments are complete.
	EventToolEnd = "tool_end"
	// EventUsage carries token counts so far.
	EventUsage = "usage"
	// EventDone ends the response with StopReason.
	EventDone = "done"
)

// Stop reasons, provider-neutral.
const (
	StopEndTurn   = "end_turn"
	StopToolUse   = "tool_use"
	StopMaxTokens = "max_tokens"
	StopRefusal   = "refusal"
)

// Event is one streamed event of a response.
type Event struct {
	Kind       string
	Text       string
	Signature  string
	Index      int
	ToolCallID string
	ToolName   string
	ArgsDelta  string
	Usage      Usage
	StopReason string
	// Redacted, on an EventThinking, is a block of redacted thinking
	// (Anthropic), to be replayed as it came.
	Redacted string
}

// Usage counts the tokens of one response. Input tokens are split the way
// prompt caches bill them: InputTokens were neither read from nor written
// to the cache.
type Usage struct {
	InputTokens      int64
	CacheReadTokens  int64
	CacheWriteTokens int64
	OutputTokens     int64
}

// Context is the size of the request's context: all its input tokens,
// cached or not.
func (u Usage) Context() int64 { return u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens }
