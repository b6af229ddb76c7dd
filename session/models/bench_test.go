package models

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// anthropicStream builds a Messages API stream of n text deltas and one
// tool call with n argument deltas.
func anthropicStream(n int) string {
	var b strings.Builder
	b.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n")
	b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for range n {
		b.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"some words \"}}\n\n")
	}
	b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	b.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"write\",\"input\":{}}}\n\n")
	for range n {
		b.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"line of code\\\\n\"}}\n\n")
	}
	b.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n")
	b.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":99}}\n\n")
	b.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	return b.String()
}

func openAIStream(n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(`data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"some words "},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n")
	}
	b.WriteString(`data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"write","arguments":""}}]},"finish_reason":null}],"usage":null}` + "\n\n")
	for range n {
		b.WriteString(`data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"line of code\\n"}}]},"finish_reason":null}],"usage":null}` + "\n\n")
	}
	b.WriteString(`data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n")
	b.WriteString(`data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}` + "\n\ndata: [DONE]\n\n")
	return b.String()
}

// BenchmarkParse measures decoding a stream of 2,000 deltas (1,000 text,
// 1,000 tool argument) into events, per stream.
func BenchmarkParse(b *testing.B) {
	for _, p := range []struct {
		name   string
		stream string
		parse  func(io.Reader, func(Event)) error
	}{
		{"anthropic", anthropicStream(1000), func(r io.Reader, on func(Event)) error { return (&anthropicParser{}).parse(r, on) }},
		{"openai", openAIStream(1000), func(r io.Reader, on func(Event)) error { return (&openAIParser{}).parse(r, on) }},
	} {
		b.Run(p.name, func(b *testing.B) {
			b.SetBytes(int64(len(p.stream)))
			b.ReportAllocs()
			for b.Loop() {
				events := 0
				if err := p.parse(strings.NewReader(p.stream), func(Event) { events++ }); err != nil {
					b.Fatal(err)
				}
				if events < 2000 {
					b.Fatalf("%d events", events)
				}
			}
		})
	}
}

// BenchmarkEncode measures building the request body for a 200-message
// conversation with 4 KiB tool results.
func BenchmarkEncode(b *testing.B) {
	var req Request
	req.System = strings.Repeat("system prompt ", 500)
	result := strings.Repeat("output line\n", 340)
	for i := range 100 {
		id := fmt.Sprintf("call_%d", i)
		req.Messages = append(req.Messages,
			Message{Role: RoleAssistant, Parts: []Part{{Kind: PartText, Text: "Let me look."}, {Kind: PartToolCall, ToolCallID: id, ToolName: "bash", Args: []byte(`{"command":"ls -la"}`)}}},
			Message{Role: RoleUser, Parts: []Part{{Kind: PartToolResult, ToolCallID: id, Text: result}}},
		)
	}
	req.Messages = append([]Message{{Role: RoleUser, Parts: []Part{{Kind: PartText, Text: "go"}}}}, req.Messages...)
	am, _ := NewAnthropic("claude-sonnet-4-5", "k", "", Options{})
	om, _ := NewOpenAI("gpt-5", "k", "", Options{})
	for _, m := range []struct {
		name string
		enc  func(Request) ([]byte, error)
	}{{"anthropic", am.(*anthropicModel).encode}, {"openai", om.(*openAIModel).encode}} {
		b.Run(m.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				body, err := m.enc(req)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(body)))
			}
		})
	}
}
