package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// anthropicVersion is the Messages API version header this client speaks.
const anthropicVersion = "2023-06-01"

const defaultAnthropicBase = "https://api.anthropic.com"

// anthropicModel streams from Anthropic's Messages API.
type anthropicModel struct {
	model    string
	apiKey   string
	url      string
	official bool // api.anthropic.com: list prices apply
	c        *client
}

// NewAnthropic returns the Anthropic model named model (e.g.
// "claude-sonnet-4-5"), authenticating with apiKey at baseURL ("" means
// https://api.anthropic.com; the path /v1/messages is appended).
//
// Requests mark the system prompt, the tools and the newest message as
// prompt-cache breakpoints, so each turn of a conversation re-reads the
// previous turns from Anthropic's cache. Thinking parts are replayed with
// their signatures; thinking parts without a signature (from another
// provider) are dropped, as the API would reject them.
func NewAnthropic(model, apiKey, baseURL string, opts Options) (Model, error) {
	if model == "" {
		return nil, errors.New("anthropic: empty model name")
	}
	if apiKey == "" {
		return nil, fmt.Errorf("anthropic: %s is not set", EnvAnthropicAPIKey)
	}
	if baseURL == "" {
		baseURL = defaultAnthropicBase
	}
	if err := checkBaseURL(baseURL); err != nil {
		return nil, fmt.Errorf("anthropic: base URL: %w", err)
	}
	u, _ := url.Parse(baseURL)
	return &anthropicModel{
		model:    model,
		apiKey:   apiKey,
		url:      strings.TrimRight(baseURL, "/") + "/v1/messages",
		official: u != nil && u.Hostname() == "api.anthropic.com",
		c:        newClient(ProviderAnthropic, opts),
	}, nil
}

func (m *anthropicModel) Name() string { return ProviderAnthropic + "/" + m.model }

// Describe returns the built-in limits of the model (every Claude model has
// a 200,000-token window); the list price applies at api.anthropic.com only.
func (m *anthropicModel) Describe(context.Context) Info {
	if info, ok := builtinInfo(m.model, m.official); ok {
		return info
	}
	return Info{ContextWindow: 200_000, MaxOutputTokens: int64(anthropicMaxTokens(m.model)), Source: "default"}
}

func (m *anthropicModel) Stream(ctx context.Context, req Request, on func(Event)) error {
	body, err := m.encode(req)
	if err != nil {
		return err
	}
	h := http.Header{}
	h.Set("X-Api-Key", m.apiKey)
	h.Set("Anthropic-Version", anthropicVersion)
	return m.c.stream(ctx, m.url, h, body, func(r io.Reader, emit func(Event)) error {
		p := &anthropicParser{}
		return p.parse(r, emit)
	}, on)
}

// Wire types of the request.

type antRequest struct {
	Model      string         `json:"model"`
	MaxTokens  int            `json:"max_tokens"`
	System     []antBlock     `json:"system,omitempty"`
	Messages   []antMessage   `json:"messages"`
	Tools      []antTool      `json:"tools,omitempty"`
	ToolChoice *antToolChoice `json:"tool_choice,omitempty"`
	Thinking   *antThinking   `json:"thinking,omitempty"`
	Stream     bool           `json:"stream"`
}

type antToolChoice struct {
	Type string `json:"type"`
}

type antThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

type antMessage struct {
	Role    string     `json:"role"`
	Content []antBlock `json:"content"`
}

// antBlock is any content block; Type selects the fields that apply.
type antBlock struct {
	Type string `json:"type"`
	// text
	Text *string `json:"text,omitempty"`
	// thinking
	Thinking  *string `json:"thinking,omitempty"`
	Signature string  `json:"signature,omitempty"`
	// redacted_thinking
	Data string `json:"data,omitempty"`
	// image
	Source *antImageSource `json:"source,omitempty"`
	// tool_use
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// tool_result
	ToolUseID string  `json:"tool_use_id,omitempty"`
	Content   *string `json:"content,omitempty"`
	IsError   bool    `json:"is_error,omitempty"`

	CacheControl *antCacheControl `json:"cache_control,omitempty"`
}

type antImageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

type antCacheControl struct {
	Type string `json:"type"`
}

type antTool struct {
	Name         string           `json:"name"`
	Description  string           `json:"description,omitempty"`
	InputSchema  json.RawMessage  `json:"input_schema"`
	CacheControl *antCacheControl `json:"cache_control,omitempty"`
}

var ephemeral = &antCacheControl{Type: "ephemeral"}

// anthropicMaxTokens is the output budget when the request sets none:
// generous for current models, within the smaller limits of older ones.
func anthropicMaxTokens(model string) int {
	switch {
	case strings.HasPrefix(model, "claude-3-5"):
		return 8192
	case strings.HasPrefix(model, "claude-3-7"):
		return 32000
	case strings.HasPrefix(model, "claude-3"):
		return 4096
	}
	return 32000
}

func (m *anthropicModel) encode(req Request) ([]byte, error) {
	out := antRequest{Model: m.model, MaxTokens: req.MaxTokens, Stream: true}
	if out.MaxTokens <= 0 {
		out.MaxTokens = anthropicMaxTokens(m.model)
	}
	if budget := map[string]int{ThinkingLow: thinkingBudgetLow, ThinkingMedium: thinkingBudgetMedium, ThinkingHigh: thinkingBudgetHigh}[req.Thinking]; budget > 0 {
		// The budget counts within max_tokens and must leave room for
		// the answer; the model's output limit caps both.
		limit := int(m.Describe(context.Background()).MaxOutputTokens)
		out.MaxTokens = min(max(out.MaxTokens, budget+8192), limit)
		budget = min(budget, out.MaxTokens-4096)
		if budget >= 1024 {
			out.Thinking = &antThinking{Type: "enabled", BudgetTokens: budget}
		}
	} else if req.Thinking != "" {
		return nil, fmt.Errorf("anthropic: thinking: unknown effort %q (want low, medium or high)", req.Thinking)
	}
	if req.NoToolUse && len(req.Tools) > 0 {
		out.ToolChoice = &antToolChoice{Type: "none"}
	}
	if req.System != "" {
		out.System = []antBlock{{Type: "text", Text: &req.System, CacheControl: ephemeral}}
	}
	for i, t := range req.Tools {
		schema, err := toolSchema(t)
		if err != nil {
			return nil, fmt.Errorf("anthropic: tools[%d]: %w", i, err)
		}
		out.Tools = append(out.Tools, antTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if n := len(out.Tools); n > 0 {
		out.Tools[n-1].CacheControl = ephemeral
	}
	for i, msg := range req.Messages {
		var blocks, results []antBlock
		switch msg.Role {
		case RoleUser, RoleAssistant:
		default:
			return nil, fmt.Errorf("anthropic: messages[%d].role: unknown role %q", i, msg.Role)
		}
		for j, p := range msg.Parts {
			if err := checkPart(msg.Role, p); err != nil {
				return nil, fmt.Errorf("anthropic: messages[%d].parts[%d]: %w", i, j, err)
			}
			switch p.Kind {
			case PartText:
				if p.Text != "" { // the API rejects empty text blocks
					blocks = append(blocks, antBlock{Type: "text", Text: &p.Text})
				}
			case PartThinking:
				if p.Data != "" && p.Text == "" {
					blocks = append(blocks, antBlock{Type: "redacted_thinking", Data: p.Data})
				} else if p.Signature != "" {
					blocks = append(blocks, antBlock{Type: "thinking", Thinking: &p.Text, Signature: p.Signature})
				}
			case PartImage:
				blocks = append(blocks, antBlock{Type: "image", Source: &antImageSource{Type: "base64", MediaType: p.MimeType, Data: p.Data}})
			case PartToolCall:
				blocks = append(blocks, antBlock{Type: "tool_use", ID: p.ToolCallID, Name: p.ToolName, Input: objectArgs(p.Args)})
			case PartToolResult:
				b := antBlock{Type: "tool_result", ToolUseID: p.ToolCallID, IsError: p.IsError}
				if p.Text != "" {
					b.Content = &p.Text
				}
				results = append(results, b)
			}
		}
		// The API wants tool results first in their user message.
		blocks = append(results, blocks...)
		if len(blocks) == 0 {
			continue // the API rejects empty messages
		}
		out.Messages = append(out.Messages, antMessage{Role: msg.Role, Content: blocks})
	}
	// The newest message is the fourth breakpoint: it writes this request's
	// prefix for the next one. The user message before it (the previous
	// request's newest) is the last: its prefix was written by the previous
	// request, so it is read back even when the turn between added more
	// blocks than the cache looks back over (20).
	marked := 0
	for i := len(out.Messages) - 1; i >= 0 && marked < 2; i-- {
		if marked == 1 && out.Messages[i].Role != RoleUser {
			continue
		}
		blocks := out.Messages[i].Content
		// Thinking blocks cannot carry cache_control.
		for k := len(blocks) - 1; k >= 0; k-- {
			if blocks[k].Type != "thinking" && blocks[k].Type != "redacted_thinking" {
				blocks[k].CacheControl = ephemeral
				marked++
				break
			}
		}
	}
	return json.Marshal(out)
}

// checkPart rejects parts that do not fit their message, naming the field.
func checkPart(role string, p Part) error {
	switch p.Kind {
	case PartText:
	case PartThinking:
		if role != RoleAssistant {
			return errors.New("kind: thinking parts belong in assistant messages")
		}
	case PartImage:
		if p.MimeType == "" {
			return errors.New("mimeType: empty for an image")
		}
		if p.Data == "" {
			return errors.New("data: empty for an image")
		}
	case PartToolCall:
		if role != RoleAssistant {
			return errors.New("kind: tool_call parts belong in assistant messages")
		}
		if p.ToolCallID == "" {
			return errors.New("toolCallId: empty")
		}
		if p.ToolName == "" {
			return errors.New("toolName: empty")
		}
	case PartToolResult:
		if role != RoleUser {
			return errors.New("kind: tool_result parts belong in user messages")
		}
		if p.ToolCallID == "" {
			return errors.New("toolCallId: empty")
		}
	default:
		return fmt.Errorf("kind: unknown part kind %q", p.Kind)
	}
	return nil
}

// objectArgs returns args when it is a JSON object, else {}: the API takes
// only objects, and arguments the model got wrong were already answered by a
// tool result reporting the validation error.
func objectArgs(args json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if len(args) == 0 || json.Unmarshal(args, &obj) != nil || obj == nil {
		return json.RawMessage("{}")
	}
	return args
}

// toolSchema returns t's schema, defaulting to an empty object schema.
func toolSchema(t ToolSpec) (json.RawMessage, error) {
	if t.Name == "" {
		return nil, errors.New("name: empty")
	}
	if len(t.Schema) == 0 {
		return json.RawMessage(`{"type":"object","properties":{}}`), nil
	}
	if !json.Valid(t.Schema) {
		return nil, fmt.Errorf("schema of %q: invalid JSON", t.Name)
	}
	return t.Schema, nil
}

// Wire types of the stream.

type antUsage struct {
	InputTokens              *int64 `json:"input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
}

type antEvent struct {
	Type    string `json:"type"`
	Index   *int   `json:"index"`
	Message *struct {
		Usage antUsage `json:"usage"`
	} `json:"message"`
	ContentBlock *struct {
		Type     string `json:"type"`
		ID       string `json:"id"`
		Name     string `json:"name"`
		Text     string `json:"text"`
		Thinking string `json:"thinking"`
		Data     string `json:"data"`
	} `json:"content_block"`
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *antUsage `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

type antBlockState struct {
	kind    string // text, thinking, tool_use, or another type (ignored)
	tool    int    // tool call ordinal for tool_use
	gotArgs bool
	sig     strings.Builder
}

// anthropicParser turns one Messages API event stream into Events.
type anthropicParser struct {
	blocks                map[int]*antBlockState
	tools                 int
	input, output         int64
	cacheWrite, cacheRead int64
	stop                  string
}

func (p *anthropicParser) parse(r io.Reader, emit func(Event)) error {
	p.blocks = map[int]*antBlockState{}
	sse := newSSEReader(r)
	for {
		raw, err := sse.Next()
		if errors.Is(err, io.EOF) {
			return &readError{errors.New("anthropic: the stream ended before message_stop")}
		}
		if err != nil {
			return fmt.Errorf("anthropic: reading the stream: %w", err)
		}
		done, err := p.event(raw, emit)
		if err != nil || done {
			return err
		}
	}
}

func (p *anthropicParser) event(raw sseEvent, emit func(Event)) (done bool, err error) {
	var ev antEvent
	if err := json.Unmarshal(raw.Data, &ev); err != nil {
		return false, malformed(ProviderAnthropic, raw.Name, raw.Data, err)
	}
	name := ev.Type
	if name == "" {
		name = raw.Name
	}
	bad := func(msg string) error {
		return malformed(ProviderAnthropic, name, raw.Data, errors.New(msg))
	}
	block := func() (*antBlockState, error) {
		if ev.Index == nil {
			return nil, bad("no index")
		}
		b := p.blocks[*ev.Index]
		if b == nil {
			return nil, bad(fmt.Sprintf("no open content block %d", *ev.Index))
		}
		return b, nil
	}
	switch name {
	case "ping":
	case "message_start":
		if ev.Message == nil {
			return false, bad("no message")
		}
		p.usage(ev.Message.Usage)
	case "content_block_start":
		if ev.Index == nil || ev.ContentBlock == nil {
			return false, bad("no index or content_block")
		}
		if p.blocks[*ev.Index] != nil {
			return false, bad(fmt.Sprintf("content block %d started twice", *ev.Index))
		}
		cb := ev.ContentBlock
		b := &antBlockState{kind: cb.Type}
		p.blocks[*ev.Index] = b
		switch cb.Type {
		case "text":
			if cb.Text != "" {
				emit(Event{Kind: EventText, Text: cb.Text})
			}
		case "thinking":
			if cb.Thinking != "" {
				emit(Event{Kind: EventThinking, Text: cb.Thinking})
			}
		case "redacted_thinking":
			if cb.Data != "" {
				emit(Event{Kind: EventThinking, Redacted: cb.Data})
			}
		case "tool_use":
			if cb.ID == "" || cb.Name == "" {
				return false, bad("tool_use without id or name")
			}
			b.tool = p.tools
			p.tools++
			emit(Event{Kind: EventToolStart, Index: b.tool, ToolCallID: cb.ID, ToolName: cb.Name})
		}
	case "content_block_delta":
		b, err := block()
		if err != nil {
			return false, err
		}
		if ev.Delta == nil {
			return false, bad("no delta")
		}
		d := ev.Delta
		switch d.Type {
		case "text_delta":
			if d.Text != "" {
				emit(Event{Kind: EventText, Text: d.Text})
			}
		case "thinking_delta":
			if d.Thinking != "" {
				emit(Event{Kind: EventThinking, Text: d.Thinking})
			}
		case "signature_delta":
			b.sig.WriteString(d.Signature)
		case "input_json_delta":
			if b.kind != "tool_use" {
				return false, bad("input_json_delta for a " + b.kind + " block")
			}
			if d.PartialJSON != "" {
				b.gotArgs = true
				emit(Event{Kind: EventToolDelta, Index: b.tool, ArgsDelta: d.PartialJSON})
			}
		}
	case "content_block_stop":
		b, err := block()
		if err != nil {
			return false, err
		}
		p.closeBlock(*ev.Index, b, emit)
	case "message_delta":
		if ev.Delta != nil && ev.Delta.StopReason != "" {
			p.stop = ev.Delta.StopReason
		}
		if ev.Usage != nil {
			p.usage(*ev.Usage)
		}
		emit(Event{Kind: EventUsage, Usage: Usage{InputTokens: p.input, CacheReadTokens: p.cacheRead, CacheWriteTokens: p.cacheWrite, OutputTokens: p.output}})
	case "message_stop":
		// Blocks left open are closed in order (a server bug, but the
		// content is complete).
		for _, i := range slices.Sorted(maps.Keys(p.blocks)) {
			p.closeBlock(i, p.blocks[i], emit)
		}
		emit(Event{Kind: EventDone, StopReason: anthropicStop(p.stop)})
		return true, nil
	case "error":
		e := &APIError{Provider: ProviderAnthropic}
		if ev.Error != nil {
			e.Type, e.Message = ev.Error.Type, ev.Error.Message
		}
		switch e.Type {
		case "overloaded_error", "api_error", "rate_limit_error":
			e.retry = true
		}
		return false, e
	default:
		// Unknown events are skipped, as Anthropic's versioning policy asks.
	}
	return false, nil
}

// closeBlock ends block i: a tool call's arguments are complete (an empty
// object if none streamed); a thinking block's signature is delivered.
func (p *anthropicParser) closeBlock(i int, b *antBlockState, emit func(Event)) {
	delete(p.blocks, i)
	switch b.kind {
	case "tool_use":
		if !b.gotArgs {
			emit(Event{Kind: EventToolDelta, Index: b.tool, ArgsDelta: "{}"})
		}
		emit(Event{Kind: EventToolEnd, Index: b.tool})
	case "thinking":
		if b.sig.Len() > 0 {
			emit(Event{Kind: EventThinking, Signature: b.sig.String()})
		}
	}
}

// usage folds a usage object in. Later events may repeat or omit fields, so
// each counter keeps its last value.
func (p *anthropicParser) usage(u antUsage) {
	for _, f := range []struct {
		dst *int64
		src *int64
	}{{&p.input, u.InputTokens}, {&p.cacheWrite, u.CacheCreationInputTokens}, {&p.cacheRead, u.CacheReadInputTokens}, {&p.output, u.OutputTokens}} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
}

func anthropicStop(s string) string {
	switch s {
	case "tool_use":
		return StopToolUse
	case "max_tokens", "model_context_window_exceeded":
		return StopMaxTokens
	case "refusal":
		return StopRefusal
	}
	return StopEndTurn // end_turn, stop_sequence, pause_turn
}
