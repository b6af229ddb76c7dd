package models

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

const defaultOpenAIBase = "https://api.openai.com/v1"

// openAIModel streams from an OpenAI-compatible Chat Completions endpoint.
type openAIModel struct {
	model    string
	apiKey   string
	base     string
	url      string
	official bool
	c        *client
	info     describeOnce
}

// NewOpenAI returns the Chat Completions model named model at baseURL (""
// means https://api.openai.com/v1; the path /chat/completions is appended),
// which also reaches Ollama, vLLM, llama.cpp and LM Studio. apiKey may be
// empty for a local server: no Authorization header is sent then.
//
// Tool results become "tool" messages; since that role has no error flag, a
// failed tool's text is prefixed with "Error: ". Thinking parts are not sent
// back. Streamed "reasoning_content" or "reasoning" deltas (DeepSeek, vLLM,
// llama.cpp, Ollama) become EventThinking.
func NewOpenAI(model, apiKey, baseURL string, opts Options) (Model, error) {
	if model == "" {
		return nil, errors.New("openai: empty model name")
	}
	if baseURL == "" {
		baseURL = defaultOpenAIBase
	}
	if err := checkBaseURL(baseURL); err != nil {
		return nil, fmt.Errorf("openai: base URL: %w", err)
	}
	official := isOfficialOpenAI(baseURL)
	if apiKey == "" && official {
		return nil, fmt.Errorf("openai: %s is not set", EnvOpenAIAPIKey)
	}
	return &openAIModel{
		model:    model,
		apiKey:   apiKey,
		base:     baseURL,
		url:      strings.TrimRight(baseURL, "/") + "/chat/completions",
		official: official,
		c:        newClient(ProviderOpenAI, opts),
	}, nil
}

// IsOfficialOpenAI reports whether base is OpenAI's own API rather than a
// compatible server.
func IsOfficialOpenAI(base string) bool { return isOfficialOpenAI(base) }

func isOfficialOpenAI(base string) bool {
	u, err := url.Parse(base)
	return err == nil && u.Hostname() == "api.openai.com"
}

func (m *openAIModel) Name() string { return ProviderOpenAI + "/" + m.model }

// Describe returns the model's limits. At OpenAI they come from the built-in
// table, with the list price. Another server is asked first (see
// serverContext), once; what it does not say comes from the table, else
// from the defaults.
func (m *openAIModel) Describe(ctx context.Context) Info {
	return m.info.get(ctx, func(ctx context.Context) Info {
		info, ok := builtinInfo(m.model, m.official)
		if !ok {
			info = Info{ContextWindow: DefaultContextWindow, MaxOutputTokens: DefaultMaxOutputTokens, Source: "default"}
		}
		if m.official {
			return info
		}
		info.Price = nil
		if n := serverContext(ctx, m.c.http, m.base, m.apiKey, m.model); n > 0 {
			info.ContextWindow, info.Source = n, "server"
			info.MaxOutputTokens = min(info.MaxOutputTokens, max(n/4, 1))
		}
		return info
	})
}

func (m *openAIModel) Stream(ctx context.Context, req Request, on func(Event)) error {
	body, err := m.encode(req)
	if err != nil {
		return err
	}
	h := http.Header{}
	if m.apiKey != "" {
		h.Set("Authorization", "Bearer "+m.apiKey)
	}
	return m.c.stream(ctx, m.url, h, body, func(r io.Reader, emit func(Event)) error {
		p := &openAIParser{}
		return p.parse(r, emit)
	}, on)
}

// Wire types of the request.

type oaRequest struct {
	Model               string      `json:"model"`
	Messages            []oaMessage `json:"messages"`
	Tools               []oaTool    `json:"tools,omitempty"`
	Stream              bool        `json:"stream"`
	StreamOptions       oaStreamOpt `json:"stream_options"`
	MaxTokens           int         `json:"max_tokens,omitempty"`
	MaxCompletionTokens int         `json:"max_completion_tokens,omitempty"`
	ToolChoice          string      `json:"tool_choice,omitempty"`
	ReasoningEffort     string      `json:"reasoning_effort,omitempty"`
}

type oaStreamOpt struct {
	IncludeUsage bool `json:"include_usage"`
}

type oaMessage struct {
	Role       string       `json:"role"`
	Content    any          `json:"content,omitempty"` // string or []oaContent
	ToolCalls  []oaToolCall `json:"tool_calls,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
}

type oaContent struct {
	Type     string      `json:"type"`
	Text     string      `json:"text,omitempty"`
	ImageURL *oaImageURL `json:"image_url,omitempty"`
}

type oaImageURL struct {
	URL string `json:"url"`
}

type oaToolCall struct {
	ID       string         `json:"id"`
	Type     string         `json:"type"`
	Function oaFunctionCall `json:"function"`
}

type oaFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type oaTool struct {
	Type     string     `json:"type"`
	Function oaFunction `json:"function"`
}

type oaFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

func (m *openAIModel) encode(req Request) ([]byte, error) {
	out := oaRequest{Model: m.model, Stream: true, StreamOptions: oaStreamOpt{IncludeUsage: true}}
	if req.MaxTokens > 0 {
		// OpenAI's reasoning models accept only max_completion_tokens;
		// compatible servers widely know only max_tokens.
		if m.official {
			out.MaxCompletionTokens = req.MaxTokens
		} else {
			out.MaxTokens = req.MaxTokens
		}
	}
	switch req.Thinking {
	case "", ThinkingLow, ThinkingMedium, ThinkingHigh:
		out.ReasoningEffort = req.Thinking
	default:
		return nil, fmt.Errorf("openai: thinking: unknown effort %q (want low, medium or high)", req.Thinking)
	}
	if req.NoToolUse && len(req.Tools) > 0 {
		out.ToolChoice = "none"
	}
	if req.System != "" {
		out.Messages = append(out.Messages, oaMessage{Role: "system", Content: req.System})
	}
	for i, t := range req.Tools {
		schema, err := toolSchema(t)
		if err != nil {
			return nil, fmt.Errorf("openai: tools[%d]: %w", i, err)
		}
		out.Tools = append(out.Tools, oaTool{Type: "function", Function: oaFunction{Name: t.Name, Description: t.Description, Parameters: schema}})
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case RoleUser, RoleAssistant:
		default:
			return nil, fmt.Errorf("openai: messages[%d].role: unknown role %q", i, msg.Role)
		}
		var content []oaContent
		var calls []oaToolCall
		var text strings.Builder
		for j, p := range msg.Parts {
			if err := checkPart(msg.Role, p); err != nil {
				return nil, fmt.Errorf("openai: messages[%d].parts[%d]: %w", i, j, err)
			}
			switch p.Kind {
			case PartText:
				if msg.Role == RoleAssistant {
					text.WriteString(p.Text)
				} else if p.Text != "" {
					content = append(content, oaContent{Type: "text", Text: p.Text})
				}
			case PartImage:
				content = append(content, oaContent{Type: "image_url", ImageURL: &oaImageURL{URL: "data:" + p.MimeType + ";base64," + p.Data}})
			case PartToolCall:
				args := string(p.Args)
				if args == "" {
					args = "{}"
				}
				calls = append(calls, oaToolCall{ID: p.ToolCallID, Type: "function", Function: oaFunctionCall{Name: p.ToolName, Arguments: args}})
			case PartToolResult:
				// Tool messages must directly follow the assistant message
				// that called them, so they go before the user's content.
				t := p.Text
				if p.IsError {
					t = "Error: " + t
				}
				out.Messages = append(out.Messages, oaMessage{Role: "tool", ToolCallID: p.ToolCallID, Content: t})
			case PartThinking:
			}
		}
		switch {
		case msg.Role == RoleAssistant:
			if text.Len() == 0 && len(calls) == 0 {
				continue
			}
			am := oaMessage{Role: "assistant", ToolCalls: calls}
			if text.Len() > 0 {
				am.Content = text.String()
			}
			out.Messages = append(out.Messages, am)
		case len(content) == 1 && content[0].Type == "text":
			// Plain string content is what every compatible server accepts.
			out.Messages = append(out.Messages, oaMessage{Role: "user", Content: content[0].Text})
		case len(content) > 0:
			out.Messages = append(out.Messages, oaMessage{Role: "user", Content: content})
		}
	}
	return json.Marshal(out)
}

// Wire types of the stream.

type oaChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          *string           `json:"content"`
			Refusal          *string           `json:"refusal"`
			ReasoningContent *string           `json:"reasoning_content"`
			Reasoning        *string           `json:"reasoning"`
			ToolCalls        []oaToolCallDelta `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

type oaToolCallDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaCallState struct {
	ordinal int
	id      string
	name    string
	started bool
	pending strings.Builder // arguments received before the name
	gotArgs bool
}

// openAIParser turns one Chat Completions stream into Events.
type openAIParser struct {
	calls   []*oaCallState
	byIndex map[int]*oaCallState
	finish  string
	refused bool
	usage   *Usage
}

func (p *openAIParser) parse(r io.Reader, emit func(Event)) error {
	p.byIndex = map[int]*oaCallState{}
	sse := newSSEReader(r)
	for {
		raw, err := sse.Next()
		if errors.Is(err, io.EOF) {
			if p.finish != "" {
				// Some compatible servers end without [DONE] once finished.
				return p.end(emit)
			}
			return &readError{errors.New("openai: the stream ended before the response was complete")}
		}
		if err != nil {
			return fmt.Errorf("openai: reading the stream: %w", err)
		}
		if string(bytes.TrimSpace(raw.Data)) == "[DONE]" {
			return p.end(emit)
		}
		if err := p.chunk(raw, emit); err != nil {
			return err
		}
	}
}

func (p *openAIParser) chunk(raw sseEvent, emit func(Event)) error {
	var c oaChunk
	if err := json.Unmarshal(raw.Data, &c); err != nil {
		return malformed(ProviderOpenAI, "chunk", raw.Data, err)
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		e := &APIError{Provider: ProviderOpenAI}
		e.Type, e.Message = errorBodyMessage(raw.Data)
		return e
	}
	if c.Usage != nil {
		// prompt_tokens counts the cached tokens too.
		u := &Usage{InputTokens: c.Usage.PromptTokens, OutputTokens: c.Usage.CompletionTokens}
		if d := c.Usage.PromptTokensDetails; d != nil && d.CachedTokens > 0 && d.CachedTokens <= u.InputTokens {
			u.CacheReadTokens = d.CachedTokens
			u.InputTokens -= d.CachedTokens
		}
		p.usage = u
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // only one choice is requested
		}
		d := ch.Delta
		if d.ReasoningContent != nil && *d.ReasoningContent != "" {
			emit(Event{Kind: EventThinking, Text: *d.ReasoningContent})
		}
		if d.Reasoning != nil && *d.Reasoning != "" {
			emit(Event{Kind: EventThinking, Text: *d.Reasoning})
		}
		if d.Content != nil && *d.Content != "" {
			emit(Event{Kind: EventText, Text: *d.Content})
		}
		if d.Refusal != nil && *d.Refusal != "" {
			p.refused = true
			emit(Event{Kind: EventText, Text: *d.Refusal})
		}
		for _, tc := range d.ToolCalls {
			if err := p.toolDelta(tc, emit); err != nil {
				return err
			}
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			p.finish = *ch.FinishReason
		}
	}
	return nil
}

// toolDelta routes one tool_calls entry. Calls are keyed by index; a new id
// at a known index starts a new call too, since some servers send every call
// with index 0, and a missing index continues the latest call.
func (p *openAIParser) toolDelta(tc oaToolCallDelta, emit func(Event)) error {
	var c *oaCallState
	switch {
	case tc.Index != nil:
		c = p.byIndex[*tc.Index]
		if c != nil && tc.ID != "" && c.id != "" && tc.ID != c.id {
			c = nil
		}
	case tc.ID == "" && len(p.calls) > 0:
		c = p.calls[len(p.calls)-1]
	}
	if c == nil {
		c = &oaCallState{ordinal: len(p.calls), id: tc.ID}
		if c.id == "" {
			c.id = newCallID()
		}
		p.calls = append(p.calls, c)
		if tc.Index != nil {
			p.byIndex[*tc.Index] = c
		}
	}
	if !c.started && tc.Function.Name != "" {
		c.name = tc.Function.Name
		c.started = true
		emit(Event{Kind: EventToolStart, Index: c.ordinal, ToolCallID: c.id, ToolName: c.name})
		if c.pending.Len() > 0 {
			emit(Event{Kind: EventToolDelta, Index: c.ordinal, ArgsDelta: c.pending.String()})
			c.pending.Reset()
		}
	}
	if a := tc.Function.Arguments; a != "" {
		c.gotArgs = true
		if c.started {
			emit(Event{Kind: EventToolDelta, Index: c.ordinal, ArgsDelta: a})
		} else {
			c.pending.WriteString(a)
		}
	}
	return nil
}

// end completes the response: every tool call's arguments are complete
// (Chat Completions marks no per-call end), then usage, then done.
func (p *openAIParser) end(emit func(Event)) error {
	for _, c := range p.calls {
		if !c.started {
			return fmt.Errorf("openai: tool call %d (%s) never received a function name", c.ordinal, c.id)
		}
		if !c.gotArgs {
			emit(Event{Kind: EventToolDelta, Index: c.ordinal, ArgsDelta: "{}"})
		}
		emit(Event{Kind: EventToolEnd, Index: c.ordinal})
	}
	if p.usage != nil {
		emit(Event{Kind: EventUsage, Usage: *p.usage})
	}
	emit(Event{Kind: EventDone, StopReason: p.stopReason()})
	return nil
}

func (p *openAIParser) stopReason() string {
	switch {
	case p.finish == "length":
		return StopMaxTokens
	case p.finish == "content_filter" || p.refused:
		return StopRefusal
	case len(p.calls) > 0:
		// Some servers say "stop" after tool calls; the calls still need
		// running.
		return StopToolUse
	}
	return StopEndTurn
}

// newCallID makes an id for servers that send tool calls without one.
func newCallID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}
