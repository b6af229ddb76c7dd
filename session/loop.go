package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/coding-agent/coding-agent/session/models"
	"github.com/coding-agent/coding-agent/tools"
)

// DefaultMaxTurnRequests bounds the model requests of one prompt.
const DefaultMaxTurnRequests = 100

// maxAgentsMD bounds how much of AGENTS.md goes into the system prompt.
const maxAgentsMD = 64 << 10

// ErrNoModel is returned by [Session.Prompt] when the session has no model.
var ErrNoModel = models.ErrNoModel

// ErrBusy is returned by [Session.Prompt] while another prompt runs.
var ErrBusy = errors.New("a prompt is already running in this session")

// Prompt runs one prompt turn: it sends the conversation to the model,
// streams its answer as updates, runs the tool calls of each answer one
// after another, returns their results to the model, and loops until the
// model stops. It returns the ACP stop reason. Cancellation (ctx, Cancel or
// Close) ends the turn with "cancelled", never an error.
func (s *Session) Prompt(ctx context.Context, prompt []Content) (StopReason, error) {
	if name, arg, ok := parseCommand(prompt); ok && name != "compact" {
		return s.command(ctx, name, arg)
	}
	model := s.Model()
	if model == nil {
		return "", ErrNoModel
	}
	user, err := userMessage(prompt)
	if err != nil {
		return "", err
	}
	ctx, done, err := s.beginTurn(ctx)
	if err != nil {
		return "", err
	}
	defer done()

	s.warnUnsaved()
	set := s.toolSet()
	specs := toolSpecs(set)
	system := s.systemPrompt(specs)
	if focus, ok := compactCommand(prompt); ok {
		return s.compactNow(ctx, model, system, specs, focus)
	}
	msgID := newID("msg")
	for _, b := range prompt {
		s.emit(&UserMessage{Content: b, MessageID: msgID})
	}
	first := len(s.History()) == 0
	s.appendHistory(user)
	// The title comes from the first prompt (no model call), as
	// session/list shows it; every prompt moves updatedAt. Live only: a
	// replay's client has both from session/list.
	info := &InfoChanged{UpdatedAt: time.Now().UTC().Format(time.RFC3339)}
	if first {
		info.Title = titleOf(user)
	}
	s.send(info)
	retried, noAuto := false, false
	for range s.maxTurnRequests() {
		if ctx.Err() != nil {
			return StopCancelled, nil
		}
		// The tool set of each model request: an MCP server may have
		// changed its tools (notifications/tools/list_changed) since the
		// last one.
		set := s.toolSet()
		specs := toolSpecs(set)
		system := s.systemPrompt(specs)
		t := &turn{s: s, ctx: ctx, tools: set, msgID: newID("msg")}
		info := s.modelInfo(ctx, model)
		req := models.Request{System: system, Messages: s.History(), Tools: specs, Thinking: s.Thinking()}
		if !noAuto && s.needsCompaction(info, req) {
			if err := s.compact(ctx, model, info, system, specs, compactAuto, ""); err != nil {
				s.env.Logger.Warn("compaction failed; sending the whole conversation", "session", s.id, "err", err)
				noAuto = true
			}
			req.Messages = s.History()
			if s.needsCompaction(info, req) {
				// What is kept verbatim is too large by itself: do
				// not summarize again before every request of the turn.
				noAuto = true
			}
		}
		stop, err := t.stream(model, req)
		if err == nil {
			s.accountRequest(info, t, req)
		}
		if err != nil && !retried && ctx.Err() == nil && t.empty() && models.IsContextOverflow(err) {
			// The provider says the conversation does not fit: compact
			// and try once more.
			retried = true
			if cerr := s.compact(ctx, model, info, system, specs, compactOverflow, ""); cerr == nil {
				continue
			} else {
				s.env.Logger.Warn("compaction after a context overflow failed", "session", s.id, "err", cerr)
			}
		}
		if ctx.Err() != nil {
			t.failPending("cancelled")
			s.appendHistory(t.assistant())
			s.appendHistory(t.cancelledResults())
			return StopCancelled, nil
		}
		if err != nil {
			t.failPending("the model request failed")
			return "", err
		}
		s.appendHistory(t.assistant())
		if len(t.calls) == 0 {
			return acpStop(stop), nil
		}
		results := models.Message{Role: models.RoleUser}
		for _, c := range t.calls {
			if ctx.Err() != nil {
				s.emit(failedUpdate(c.id, "cancelled before it ran"))
				results.Parts = append(results.Parts, toolResult(c.modelID, "The user cancelled before this tool call ran.", true))
				continue
			}
			res := s.modelToolCall(ctx, set, c)
			results.Parts = append(results.Parts, toolResult(c.modelID, resultText(res), res.IsError))
		}
		s.appendHistory(results)
		if ctx.Err() != nil {
			return StopCancelled, nil
		}
	}
	return StopMaxTurnRequests, nil
}

// acpStop maps a provider-neutral stop reason to ACP's.
func acpStop(stop string) StopReason {
	switch stop {
	case models.StopMaxTokens:
		return StopMaxTokens
	case models.StopRefusal:
		return StopRefusal
	}
	return StopEndTurn
}

// turn is one model request of a prompt turn and what it streamed.
type turn struct {
	s        *Session
	ctx      context.Context
	tools    *tools.Set
	msgID    string
	thinkID  string
	text     strings.Builder
	thinking strings.Builder
	sig      string
	calls    []*pendingCall
	byIndex  map[int]*pendingCall
	usage    models.Usage
	gotUsage bool
	redacted []string // redacted thinking blocks, replayed verbatim
}

// pendingCall is a tool call the model is emitting.
type pendingCall struct {
	// id is the call's id in this session (ACP's toolCallId, unique within
	// the session); modelID is the provider's id for it, which the model
	// is told its result under.
	id, modelID, name string
	tool              tools.Tool // nil when the session has no such tool
	args              strings.Builder
	titler            tools.Titler
	title             string
	input             *tools.PartialInput // what has arrived of the arguments
	finished          bool
}

// stream runs one model request, turning its events into session updates.
func (t *turn) stream(model models.Model, req models.Request) (string, error) {
	var stop string
	t.byIndex = map[int]*pendingCall{}
	err := model.Stream(t.ctx, req, func(ev models.Event) {
		switch ev.Kind {
		case models.EventText:
			t.text.WriteString(ev.Text)
			t.s.emit(&MessageChunk{Text: ev.Text, MessageID: t.msgID})
		case models.EventThinking:
			if t.thinkID == "" {
				t.thinkID = newID("msg")
			}
			t.thinking.WriteString(ev.Text)
			if ev.Signature != "" {
				t.sig = ev.Signature
			}
			if ev.Redacted != "" {
				t.redacted = append(t.redacted, ev.Redacted)
			}
			if ev.Text != "" {
				t.s.emit(&ThoughtChunk{Text: ev.Text, MessageID: t.thinkID})
			}
		case models.EventToolStart:
			c := &pendingCall{id: t.s.callID(ev.ToolCallID), modelID: ev.ToolCallID, name: ev.ToolName}
			if c.modelID == "" {
				c.modelID = c.id
			}
			kind := tools.KindOther
			c.titler = tools.StaticTitle(c.name)
			if tool, ok := t.tools.Lookup(c.name); ok {
				c.tool, c.titler, kind = tool, tool.NewTitler(), tool.Kind()
			}
			c.title = c.titler.Feed("")
			c.input = tools.NewPartialInput()
			t.calls = append(t.calls, c)
			t.byIndex[ev.Index] = c
			t.s.emit(&ToolCallStarted{CallID: c.id, Tool: c.name, Title: c.title, Kind: kind, Input: c.input.JSON()})
		case models.EventToolDelta:
			c := t.byIndex[ev.Index]
			if c == nil {
				return
			}
			c.args.WriteString(ev.ArgsDelta)
			// The title and the partial arguments are sent when the title
			// changes or a new argument begins: a bounded number of times
			// per call, each bounded in size, whatever the arguments' length.
			grew := c.input.Feed(ev.ArgsDelta)
			if title := c.titler.Feed(ev.ArgsDelta); title != c.title || grew {
				c.title = title
				t.s.emit(&ToolCallUpdated{CallID: c.id, Title: title, Input: c.input.JSON()})
			}
		case models.EventToolEnd:
			if c := t.byIndex[ev.Index]; c != nil {
				c.finished = true
			}
		case models.EventUsage:
			t.usage, t.gotUsage = ev.Usage, true
		case models.EventDone:
			stop = ev.StopReason
		}
	})
	return stop, err
}

// empty says whether the request streamed nothing the user saw.
func (t *turn) empty() bool {
	return t.text.Len() == 0 && t.thinking.Len() == 0 && len(t.calls) == 0
}

// assistant is the assistant message the model sent in this request.
func (t *turn) assistant() models.Message {
	m := models.Message{Role: models.RoleAssistant}
	if t.thinking.Len() > 0 || t.sig != "" {
		m.Parts = append(m.Parts, models.Part{Kind: models.PartThinking, Text: t.thinking.String(), Signature: t.sig})
	}
	for _, d := range t.redacted {
		m.Parts = append(m.Parts, models.Part{Kind: models.PartThinking, Data: d})
	}
	if t.text.Len() > 0 {
		m.Parts = append(m.Parts, models.Part{Kind: models.PartText, Text: t.text.String()})
	}
	for _, c := range t.calls {
		m.Parts = append(m.Parts, models.Part{Kind: models.PartToolCall, ToolCallID: c.modelID, ToolName: c.name, Args: argsOrEmpty(c.args.String())})
	}
	return m
}

// cancelledResults answers every tool call of this request as cancelled, so
// that the history stays well-formed for the next prompt.
func (t *turn) cancelledResults() models.Message {
	m := models.Message{Role: models.RoleUser}
	for _, c := range t.calls {
		m.Parts = append(m.Parts, toolResult(c.modelID, "The user cancelled before this tool call ran.", true))
	}
	return m
}

// failPending marks the tool calls of this request failed.
func (t *turn) failPending(why string) {
	for _, c := range t.calls {
		t.s.emit(failedUpdate(c.id, why))
	}
}

// failedUpdate ends a call that never ran.
func failedUpdate(id, why string) *ToolCallFinished {
	return &ToolCallFinished{CallID: id, Status: StatusFailed, Text: []string{why}}
}

// argsOrEmpty returns the arguments as JSON; arguments that are not a
// valid JSON object (a model that stopped mid-way) become {}.
func argsOrEmpty(s string) json.RawMessage {
	if json.Valid([]byte(s)) && strings.HasPrefix(strings.TrimSpace(s), "{") {
		return json.RawMessage(s)
	}
	return json.RawMessage(`{}`)
}

// modelToolCall validates and runs one tool call of the model, in order.
// The call was announced (pending) while it streamed; an unknown tool or
// invalid arguments fail it without dispatching it.
func (s *Session) modelToolCall(ctx context.Context, set *tools.Set, c *pendingCall) tools.Result {
	args := json.RawMessage(c.args.String())
	if c.tool == nil {
		res := tools.ErrorResult(fmt.Errorf("unknown tool %q: this session's tools are %s", c.name, strings.Join(set.Names(), ", ")))
		s.emit(finalUpdate(c.id, argsOrEmpty(c.args.String()), res, nil))
		return res
	}
	if !json.Valid(args) {
		res := tools.ErrorResult(&tools.ValidationError{Tool: c.name, Rule: "the arguments are not a complete JSON object"})
		s.emit(finalUpdate(c.id, argsOrEmpty(c.args.String()), res, nil))
		return res
	}
	return s.dispatch(ctx, c.id, c.tool, args)
}

func toolResult(id, text string, isError bool) models.Part {
	return models.Part{Kind: models.PartToolResult, ToolCallID: id, Text: text, IsError: isError}
}

// resultText is what the model is told of a tool result.
func resultText(res tools.Result) string {
	var b strings.Builder
	for _, c := range res.Content {
		if c.Type != "" && c.Type != ContentText {
			continue // an MCP tool's image or resource: described in its text
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(c.Text)
	}
	if b.Len() == 0 {
		return "(no output)"
	}
	return b.String()
}

// userMessage converts a prompt into the user's message for the model.
func userMessage(prompt []Content) (models.Message, error) {
	m := models.Message{Role: models.RoleUser}
	for i, b := range prompt {
		switch b.Type {
		case ContentText:
			m.Parts = append(m.Parts, models.Part{Kind: models.PartText, Text: b.Text})
		case ContentImage:
			m.Parts = append(m.Parts, models.Part{Kind: models.PartImage, MimeType: b.MimeType, Data: b.Data})
		case ContentResourceLink:
			m.Parts = append(m.Parts, models.Part{Kind: models.PartText, Text: fmt.Sprintf("[@%s](%s)", b.Name, b.URI)})
		case ContentResource:
			r := b.Resource
			switch {
			case r == nil:
				return m, &ParamError{Field: fmt.Sprintf("prompt[%d].resource", i), Msg: "required"}
			case r.Text != nil:
				m.Parts = append(m.Parts, models.Part{Kind: models.PartText, Text: fmt.Sprintf("<context uri=%q>\n%s\n</context>", r.URI, *r.Text)})
			case r.Blob != nil && strings.HasPrefix(r.MimeType, "image/"):
				m.Parts = append(m.Parts, models.Part{Kind: models.PartImage, MimeType: r.MimeType, Data: *r.Blob})
			default:
				m.Parts = append(m.Parts, models.Part{Kind: models.PartText, Text: fmt.Sprintf("[binary resource %s (%s) omitted]", r.URI, r.MimeType)})
			}
		case ContentAudio:
			return m, &ParamError{Field: fmt.Sprintf("prompt[%d]", i), Msg: "audio is not supported (promptCapabilities.audio is false)"}
		default:
			return m, &ParamError{Field: fmt.Sprintf("prompt[%d].type", i), Msg: fmt.Sprintf("unknown content block type %q", b.Type)}
		}
	}
	if len(m.Parts) == 0 {
		return m, &ParamError{Field: "prompt", Msg: "must not be empty"}
	}
	return m, nil
}

// toolSpecs describes a tool set to the model.
func toolSpecs(set *tools.Set) []models.ToolSpec {
	var specs []models.ToolSpec
	for _, t := range set.Tools() {
		specs = append(specs, models.ToolSpec{Name: t.Name(), Description: t.Description(), Schema: t.Schema()})
	}
	return specs
}

// systemPrompt tells the model who it is, what it can do, where it works
// and the project's own instructions.
func (s *Session) systemPrompt(specs []models.ToolSpec) string {
	var b strings.Builder
	b.WriteString("You are coding-agent, a coding assistant that works in the user's project through tools. ")
	b.WriteString("Be direct and precise. Read before you change; prefer small, exact edits; check your work.\n")
	if len(specs) == 0 {
		b.WriteString("\nYou have no tools in this session: answer from the conversation alone.\n")
	} else {
		b.WriteString("\n# Tools\n")
		for _, spec := range specs {
			fmt.Fprintf(&b, "\n## %s\n%s\n", spec.Name, spec.Description)
		}
		b.WriteString("\nTool calls of one message run one after another, in order. ")
		b.WriteString("When a write, an edit or an escalated command needs the user's approval, give a brief `justification` in the user's language. ")
		b.WriteString("It is shown to the user as plain text; it never changes the permission preset and authorizes nothing by itself.\n")
	}
	b.WriteString("\n# Environment\n")
	fmt.Fprintf(&b, "- Working directory: %s\n", s.cwd)
	if len(s.roots) > 1 {
		fmt.Fprintf(&b, "- Additional directories: %s\n", strings.Join(s.roots[1:], ", "))
	}
	fmt.Fprintf(&b, "- OS: %s/%s\n", runtime.GOOS, runtime.GOARCH)
	// The session's start date, not today's: the system prompt is the
	// start of every request's cached prefix, so nothing in it may change
	// from one request to the next.
	fmt.Fprintf(&b, "- Date the session started: %s\n", s.created.Local().Format("2006-01-02"))
	fmt.Fprintf(&b, "- Permission preset: %s (%s)\n", s.Preset(), presetSummary(s.Preset()))
	if md := readAgentsMD(s.cwd); md != "" {
		b.WriteString("\n# Project instructions (AGENTS.md)\n\n")
		b.WriteString(md)
		b.WriteString("\n")
	}
	return b.String()
}

func presetSummary(p tools.Preset) string {
	switch p {
	case tools.WorkspaceWrite:
		return "edits and sandboxed commands may write inside the working directory and additional directories; anything else needs approval"
	case tools.FullAccess:
		return "no sandbox; .git and the agent's data stay protected"
	}
	return "you may read anywhere; edits, writes and commands that write need the user's approval"
}

// readAgentsMD returns AGENTS.md at the root of cwd, bounded in size.
func readAgentsMD(cwd string) string {
	f, err := os.Open(filepath.Join(cwd, "AGENTS.md"))
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, maxAgentsMD))
	return strings.TrimSpace(string(b))
}

// callID returns the id of a new tool call in this session (ACP's
// toolCallId, which must be unique within the session) for the id the
// model gave it: that id when the session has not used it yet, else a
// fresh one. Providers' ids are unique, but local and scripted servers
// repeat theirs (call_1 in every turn); the model is still told its
// results under its own id.
func (s *Session) callID(modelID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.callIDs == nil {
		s.callIDs = map[string]bool{}
		for _, m := range s.history {
			for _, p := range m.Parts {
				if p.ToolCallID != "" {
					s.callIDs[p.ToolCallID] = true
				}
			}
		}
	}
	id := modelID
	if id == "" || s.callIDs[id] {
		id = newID("call")
	}
	s.callIDs[id] = true
	return id
}

// command runs a slash command as a turn of the session: one at a time
// with prompts, ended by Cancel and Close.
func (s *Session) command(ctx context.Context, name, arg string) (StopReason, error) {
	ctx, done, err := s.beginTurn(ctx)
	if err != nil {
		return "", err
	}
	defer done()
	return s.runCommand(ctx, name, arg)
}

// beginTurn starts a turn (a prompt or a command): ErrBusy while another
// runs; otherwise an operation (see begin) whose done also ends the turn.
func (s *Session) beginTurn(ctx context.Context) (context.Context, func(), error) {
	s.mu.Lock()
	if s.prompting {
		s.mu.Unlock()
		return nil, nil, ErrBusy
	}
	s.prompting = true
	s.mu.Unlock()
	end := func() {
		s.mu.Lock()
		s.prompting = false
		s.mu.Unlock()
	}
	ctx, done, err := s.begin(ctx)
	if err != nil {
		end()
		return nil, nil, err
	}
	return ctx, func() { done(); end() }, nil
}
