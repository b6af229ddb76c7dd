package modeltest

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"
)

// NewOpenAIServer starts a fake OpenAI Chat Completions API playing script.
// Its BaseURL (ending in /v1) is the value for OPENAI_BASE_URL (requests go
// to BaseURL+"/chat/completions"). The server stops when the test ends.
func NewOpenAIServer(t testing.TB, script Script) *Server {
	t.Helper()
	return newServer(t, openAIFormat{}, "/v1", script)
}

type openAIFormat struct{}

func (openAIFormat) name() string { return "openai" }
func (openAIFormat) path() string { return "/v1/chat/completions" }

func (openAIFormat) errorBody(typ, msg string) any {
	return map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}}
}

// check applies the structural rules Chat Completions enforces.
func (openAIFormat) check(body []byte) string {
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return "We could not parse the JSON body of your request: " + err.Error()
	}
	switch {
	case req.Model == "":
		return "you must provide a model parameter"
	case !req.Stream:
		return "modeltest: only streaming requests are scripted"
	case len(req.Messages) == 0:
		return "'messages' must contain at least one message"
	}
	for i, t := range req.Tools {
		if t.Type != "function" || t.Function.Name == "" {
			return fmt.Sprintf("tools[%d]: a function tool with a name is required", i)
		}
	}
	var pending []string // ids of the last assistant tool_calls not yet answered
	for i, m := range req.Messages {
		if m.Role == "tool" {
			if !slices.Contains(pending, m.ToolCallID) {
				return fmt.Sprintf("messages[%d]: messages with role 'tool' must be a response to a preceeding message with 'tool_calls' (tool_call_id %q)", i, m.ToolCallID)
			}
			pending = slices.DeleteFunc(pending, func(s string) bool { return s == m.ToolCallID })
			continue
		}
		if len(pending) > 0 {
			return fmt.Sprintf("messages[%d]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: %v", i, pending)
		}
		switch m.Role {
		case "system", "developer", "user":
			if len(m.Content) == 0 || string(m.Content) == "null" {
				return fmt.Sprintf("messages[%d].content: required for role %q", i, m.Role)
			}
		case "assistant":
			if (len(m.Content) == 0 || string(m.Content) == "null") && len(m.ToolCalls) == 0 {
				return fmt.Sprintf("messages[%d]: assistant content is required unless tool_calls is specified", i)
			}
			for j, c := range m.ToolCalls {
				if c.ID == "" || c.Type != "function" || c.Function.Name == "" || !json.Valid([]byte(c.Function.Arguments)) {
					return fmt.Sprintf("messages[%d].tool_calls[%d]: id, type function, name and JSON arguments are required", i, j)
				}
				pending = append(pending, c.ID)
			}
		default:
			return fmt.Sprintf("messages[%d].role: invalid role %q", i, m.Role)
		}
	}
	if len(pending) > 0 {
		return fmt.Sprintf("the following tool_call_ids did not have response messages: %v", pending)
	}
	return ""
}

func (openAIFormat) stream(w *streamWriter, model string, resp Response) {
	created := time.Now().Unix()
	chunk := func(delta map[string]any, finish any) {
		w.event("", map[string]any{
			"id": "chatcmpl-modeltest", "object": "chat.completion.chunk", "created": created,
			"model": model, "system_fingerprint": "fp_modeltest",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
			"usage":   nil,
		})
	}
	chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil)
	tools := 0
	for _, st := range resp.Steps {
		switch {
		case st.Text != "":
			chunk(map[string]any{"content": st.Text}, nil)
		case st.Thinking != "":
			chunk(map[string]any{"reasoning_content": st.Thinking}, nil)
		case st.Signature != "":
			// Chat Completions has no thinking signatures.
		case st.Tool != nil:
			i := tools
			tools++
			chunk(map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "id": st.Tool.ID, "type": "function",
				"function": map[string]any{"name": st.Tool.Name, "arguments": ""},
			}}}, nil)
			for _, c := range st.Tool.Chunks {
				chunk(map[string]any{"tool_calls": []any{map[string]any{
					"index": i, "function": map[string]any{"arguments": c},
				}}}, nil)
			}
		case st.Error != nil:
			w.event("", map[string]any{"error": map[string]any{"message": st.Error.Message, "type": st.Error.Type, "param": nil, "code": nil}})
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
	finish := map[string]string{"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length", "refusal": "content_filter"}[stopReason(resp)]
	chunk(map[string]any{}, finish)
	w.event("", map[string]any{
		"id": "chatcmpl-modeltest", "object": "chat.completion.chunk", "created": created,
		"model": model, "system_fingerprint": "fp_modeltest", "choices": []any{},
		"usage": map[string]any{
			"prompt_tokens": resp.Usage.InputTokens + resp.Usage.CacheReadTokens, "completion_tokens": resp.Usage.OutputTokens,
			"total_tokens":          resp.Usage.InputTokens + resp.Usage.CacheReadTokens + resp.Usage.OutputTokens,
			"prompt_tokens_details": map[string]any{"cached_tokens": resp.Usage.CacheReadTokens},
		},
	})
	w.raw("data: [DONE]\n\n")
}
