package modeltest

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

// NewAnthropicServer starts a fake Anthropic Messages API playing script.
// Its BaseURL is the value for ANTHROPIC_BASE_URL (requests go to
// BaseURL+"/v1/messages"). The server stops when the test ends.
func NewAnthropicServer(t testing.TB, script Script) *Server {
	t.Helper()
	return newServer(t, anthropicFormat{}, "", script)
}

type anthropicFormat struct{}

func (anthropicFormat) name() string { return "anthropic" }
func (anthropicFormat) path() string { return "/v1/messages" }

func (anthropicFormat) errorBody(typ, msg string) any {
	if typ == "" {
		typ = "api_error"
	}
	return map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}}
}

// check applies the structural rules the Messages API enforces.
func (anthropicFormat) check(body []byte) string {
	var req struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
		Stream    bool   `json:"stream"`
		Messages  []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string         `json:"name"`
			InputSchema map[string]any `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return "request body: " + err.Error()
	}
	switch {
	case req.Model == "":
		return "model: Field required"
	case req.MaxTokens <= 0:
		return "max_tokens: Field required"
	case !req.Stream:
		return "modeltest: only streaming requests are scripted"
	case len(req.Messages) == 0:
		return "messages: at least one message is required"
	case req.Messages[0].Role != "user":
		return "messages: first message must use the \"user\" role"
	}
	for i, t := range req.Tools {
		if t.Name == "" {
			return fmt.Sprintf("tools.%d.name: Field required", i)
		}
		if t.InputSchema == nil || t.InputSchema["type"] != "object" {
			return fmt.Sprintf("tools.%d.input_schema.type: Input should be 'object'", i)
		}
	}
	var pending []string // tool_use ids awaiting results
	for i, m := range req.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return fmt.Sprintf("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		if len(m.Content) == 0 {
			return fmt.Sprintf("messages.%d: all messages must have non-empty content", i)
		}
		answered := map[string]bool{}
		seenOther := false
		var uses []string
		for j, raw := range m.Content {
			var b struct {
				Type      string          `json:"type"`
				Text      *string         `json:"text"`
				ID        string          `json:"id"`
				Name      string          `json:"name"`
				Input     json.RawMessage `json:"input"`
				ToolUseID string          `json:"tool_use_id"`
				Signature string          `json:"signature"`
				Source    *struct {
					Type      string `json:"type"`
					MediaType string `json:"media_type"`
					Data      string `json:"data"`
				} `json:"source"`
			}
			if err := json.Unmarshal(raw, &b); err != nil {
				return fmt.Sprintf("messages.%d.content.%d: %v", i, j, err)
			}
			where := fmt.Sprintf("messages.%d.content.%d", i, j)
			switch b.Type {
			case "text":
				if b.Text == nil || *b.Text == "" {
					return where + ": text content blocks must be non-empty"
				}
				seenOther = true
			case "image":
				if b.Source == nil || b.Source.Type != "base64" || b.Source.MediaType == "" || b.Source.Data == "" {
					return where + ".source: base64 source with media_type and data required"
				}
				seenOther = true
			case "redacted_thinking":
				if m.Role != "assistant" {
					return where + ": redacted_thinking blocks need the assistant role"
				}
			case "thinking":
				if m.Role != "assistant" || b.Signature == "" {
					return where + ": thinking blocks need the assistant role and a signature"
				}
			case "tool_use":
				var obj map[string]any
				if m.Role != "assistant" || b.ID == "" || b.Name == "" || json.Unmarshal(b.Input, &obj) != nil || obj == nil {
					return where + ": tool_use needs the assistant role, id, name and an object input"
				}
				uses = append(uses, b.ID)
			case "tool_result":
				if m.Role != "user" {
					return where + ": tool_result blocks belong in user messages"
				}
				if seenOther {
					return where + ": tool_result blocks must come first in the content array"
				}
				if !slices.Contains(pending, b.ToolUseID) {
					return fmt.Sprintf("%s: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", where, b.ToolUseID)
				}
				answered[b.ToolUseID] = true
			default:
				return fmt.Sprintf("%s.type: unknown block type %q", where, b.Type)
			}
		}
		for _, id := range pending {
			if !answered[id] {
				return fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s", i, id)
			}
		}
		pending = uses
	}
	return ""
}

func (anthropicFormat) stream(w *streamWriter, model string, resp Response) {
	w.event("message_start", map[string]any{
		"type": "message_start",
		"message": map[string]any{
			"id": "msg_modeltest", "type": "message", "role": "assistant", "content": []any{},
			"model": model, "stop_reason": nil, "stop_sequence": nil,
			"usage": map[string]any{
				"input_tokens": resp.Usage.InputTokens, "output_tokens": 1,
				"cache_read_input_tokens": resp.Usage.CacheReadTokens, "cache_creation_input_tokens": resp.Usage.CacheWriteTokens,
			},
		},
	})
	w.event("ping", map[string]any{"type": "ping"})

	index := -1
	open := "" // type of the open block, "" if none
	closeBlock := func() {
		if open != "" {
			w.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
			open = ""
		}
	}
	startBlock := func(typ string, block map[string]any) {
		closeBlock()
		index++
		open = typ
		block["type"] = typ
		w.event("content_block_start", map[string]any{"type": "content_block_start", "index": index, "content_block": block})
	}
	delta := func(d map[string]any) {
		w.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index, "delta": d})
	}
	for _, st := range resp.Steps {
		switch {
		case st.Text != "":
			if open != "text" {
				startBlock("text", map[string]any{"text": ""})
			}
			delta(map[string]any{"type": "text_delta", "text": st.Text})
		case st.Thinking != "":
			if open != "thinking" {
				startBlock("thinking", map[string]any{"thinking": ""})
			}
			delta(map[string]any{"type": "thinking_delta", "thinking": st.Thinking})
		case st.Signature != "":
			if open != "thinking" {
				startBlock("thinking", map[string]any{"thinking": ""})
			}
			delta(map[string]any{"type": "signature_delta", "signature": st.Signature})
			closeBlock()
		case st.Tool != nil:
			startBlock("tool_use", map[string]any{"id": st.Tool.ID, "name": st.Tool.Name, "input": map[string]any{}})
			// The API opens every tool's input with an empty delta.
			delta(map[string]any{"type": "input_json_delta", "partial_json": ""})
			for _, c := range st.Tool.Chunks {
				delta(map[string]any{"type": "input_json_delta", "partial_json": c})
			}
			closeBlock()
		case st.Error != nil:
			w.event("error", map[string]any{"type": "error", "error": map[string]string{"type": st.Error.Type, "message": st.Error.Message}})
			return
		case st.Raw != "":
			w.raw(st.Raw)
		case st.Stall:
			w.stall()
			return
		case st.Disconnect:
			w.disconnect()
		}
	}
	closeBlock()
	w.event("message_delta", map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": stopReason(resp), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": resp.Usage.OutputTokens},
	})
	w.event("message_stop", map[string]any{"type": "message_stop"})
}
