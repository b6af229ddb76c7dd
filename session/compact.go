package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/coding-agent/coding-agent/rpc"
	"github.com/coding-agent/coding-agent/session/models"
)

// Compaction keeps a long session inside its model's context window: when
// the next request would leave less than a reserve of the window free, the
// older part of the conversation is summarized in one model request, the
// summary replaces it, and the turn goes on. The latest turns stay
// verbatim, and a tool call is never separated from its result. The
// journal keeps every message and records the compaction after them, so
// that a load replays what the user saw and a resume continues from the
// compacted conversation.

// Compaction reports a compaction of the conversation: Status is
// "in_progress", then "completed" (with Summary) or "failed" (with Error).
type Compaction struct {
	ID      string
	Status  string
	Trigger string // "auto", "overflow" (the provider said the context was too long) or "manual" (/compact)
	Summary string
	Error   string
	// TokensBefore and TokensAfter estimate the context before and after.
	TokensBefore, TokensAfter int64
}

func (*Compaction) isEvent() {}

// Compaction statuses.
const (
	CompactionInProgress = "in_progress"
	CompactionCompleted  = "completed"
	CompactionFailed     = "failed"
)

// Compaction triggers.
const (
	compactAuto     = "auto"
	compactOverflow = "overflow"
	compactManual   = "manual"
)

// maxSummaryTokens bounds the summary's length.
const maxSummaryTokens = 8192

// compactionLimits returns the context size above which the next request
// compacts first, and about how much of the latest conversation stays
// verbatim.
func (s *Session) compactionLimits(info models.Info) (threshold, keep int64) {
	cfg, _ := s.env.config()
	w := info.ContextWindow
	reserve := cfg.Compaction.ReserveTokens
	if reserve <= 0 {
		reserve = min(info.MaxOutputTokens, w/4) + w/20
	}
	keep = cfg.Compaction.KeepRecentTokens
	if keep <= 0 {
		keep = min(w/4, 40_000)
	}
	return w - reserve, keep
}

// estimateNext estimates the input tokens of req from the latest known
// usage and the messages added since, or from its bytes.
func (s *Session) estimateNext(req models.Request) int64 {
	s.mu.Lock()
	st := s.usage
	s.mu.Unlock()
	if st.known && st.sent <= len(req.Messages) {
		n := st.last.Context()
		for _, m := range req.Messages[st.sent:] {
			n += estimateMessage(m)
		}
		return n
	}
	return estimateRequest(req)
}

// needsCompaction says whether req should be compacted before it is sent.
func (s *Session) needsCompaction(info models.Info, req models.Request) bool {
	cfg, _ := s.env.config()
	if cfg.Compaction.Disabled || len(req.Messages) < 2 {
		return false
	}
	threshold, _ := s.compactionLimits(info)
	return s.estimateNext(req) > threshold
}

// cutPoint chooses where the verbatim part of h starts: the earliest
// message from which the rest stays within keep tokens, among the messages
// a conversation may start again from (an assistant message, whose tool
// results follow it, or a user prompt that answers no call). With none, it
// is the latest such point; 0 means nothing can be summarized.
func cutPoint(h []models.Message, keep int64) int {
	valid := func(i int) bool {
		m := h[i]
		if m.Role == models.RoleAssistant {
			return true
		}
		for _, p := range m.Parts {
			if p.Kind == models.PartToolResult {
				return false
			}
		}
		return true
	}
	var tail int64
	cut, latest := 0, 0
	for i := len(h) - 1; i >= 1; i-- {
		tail += estimateMessage(h[i])
		if !valid(i) {
			continue
		}
		if latest == 0 {
			latest = i
		}
		if tail > keep {
			break
		}
		cut = i
	}
	if cut == 0 {
		cut = latest
	}
	return cut
}

// summaryPrompt asks for the structured summary.
const summaryPrompt = `Your conversation with the user is about to be compacted: everything above this message will be replaced by a summary you write now, and you will continue the work from that summary and the latest messages, which are kept as they are.

Write the summary for yourself, in the user's language, complete enough to continue without the original. Do not call tools. Use exactly these sections:

## User's goals
What the user asked for, in their words where they matter, including constraints and preferences.

## Decisions
Decisions taken and why, approaches rejected.

## Files
Files read (what was learned from them) and files changed (what changed), with their paths.

## Errors
Errors met, and how they were resolved or what is still failing.

## Remaining work
What remains to do, the next step first.`

// compactResult is the conversation after a compaction.
type compactResult struct {
	head    []models.Message
	kept    int
	summary string
}

// compact summarizes the older part of the conversation and replaces it.
// focus, from /compact, says what the summary should keep above all.
func (s *Session) compact(ctx context.Context, model models.Model, info models.Info, system string, specs []models.ToolSpec, trigger, focus string) error {
	h := s.History()
	_, keep := s.compactionLimits(info)
	if trigger == compactManual {
		keep = -1 // /compact: all of it, as users of other agents expect
	}
	before := estimateRequest(models.Request{System: system, Tools: specs, Messages: h})
	id := newID("cmp")
	s.emit(&Compaction{ID: id, Status: CompactionInProgress, Trigger: trigger, TokensBefore: before})
	res, err := s.summarize(ctx, model, info, system, specs, h, keep, focus)
	if err != nil {
		msg := err.Error()
		if ctx.Err() != nil {
			msg = "cancelled"
		}
		s.emit(&Compaction{ID: id, Status: CompactionFailed, Trigger: trigger, Error: msg, TokensBefore: before})
		return err
	}
	s.mu.Lock()
	// The prompt goroutine is the only writer of the history; it is here.
	kept := s.history[len(s.history)-res.kept:]
	s.history = append(append([]models.Message(nil), res.head...), kept...)
	after := s.history
	s.usage.known = false // its counts were of the history before
	s.mu.Unlock()
	tokensAfter := estimateRequest(models.Request{System: system, Tools: specs, Messages: after})
	s.journal.append(record{Type: recCompact, Compact: &compactRecord{ID: id, Head: res.head, Kept: res.kept, TokensBefore: before, TokensAfter: tokensAfter}})
	s.emit(&Compaction{ID: id, Status: CompactionCompleted, Trigger: trigger, Summary: res.summary, TokensBefore: before, TokensAfter: tokensAfter})
	s.send(&Usage{Used: tokensAfter, Size: info.ContextWindow, CostUSD: s.costSoFar()})
	return nil
}

// costSoFar is the session's spending, nil when no price is known.
func (s *Session) costSoFar() *float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.usage.priced {
		return nil
	}
	c := s.usage.cost
	return &c
}

// errNothingToCompact says the conversation is too short to summarize.
var errNothingToCompact = errors.New("the conversation is too short to compact")

// summarize makes the summary request. When the part to summarize does
// not fit either (the provider says so), its oldest half is left out, up
// to three times.
func (s *Session) summarize(ctx context.Context, model models.Model, info models.Info, system string, specs []models.ToolSpec, h []models.Message, keep int64, focus string) (compactResult, error) {
	cut := len(h) // keep < 0: summarize it all
	if keep >= 0 {
		cut = cutPoint(h, keep)
	}
	if cut == 0 {
		if len(h) == 0 {
			return compactResult{}, errNothingToCompact
		}
		// No point to start again from but the beginning: summarize it
		// all (a single turn of many calls, its latest result included).
		cut = len(h)
	}
	older := h[:cut]
	from := 0
	var lastErr error
	for range 3 {
		msgs := summaryMessages(older[from:], focus, from > 0)
		req := models.Request{System: system, Tools: specs, Messages: msgs, NoToolUse: true, MaxTokens: int(min(maxSummaryTokens, info.MaxOutputTokens))}
		var text strings.Builder
		err := model.Stream(ctx, req, func(ev models.Event) {
			if ev.Kind == models.EventText {
				text.WriteString(ev.Text)
			}
		})
		if err == nil {
			summary := strings.TrimSpace(text.String())
			if summary == "" {
				return compactResult{}, errors.New("the model returned an empty summary")
			}
			return compactHead(h, cut, summary), nil
		}
		lastErr = err
		if ctx.Err() != nil || !models.IsContextOverflow(err) {
			return compactResult{}, fmt.Errorf("summarizing the conversation: %w", err)
		}
		// Leave out the oldest half, starting again at a valid point.
		rest := older[from:]
		next := cutPoint(rest, estimateRequest(models.Request{Messages: rest})/2)
		if next == 0 {
			break
		}
		from += next
	}
	return compactResult{}, fmt.Errorf("summarizing the conversation: %w", lastErr)
}

// maxSummarizedResult bounds each tool result shown to the summary
// request: its start and end are what a summary needs.
const maxSummarizedResult = 8 << 10

// summaryMessages is the conversation to summarize, with long tool results
// shortened, thinking left out, and the instruction last.
func summaryMessages(older []models.Message, focus string, omitted bool) []models.Message {
	var out []models.Message
	for _, m := range older {
		c := models.Message{Role: m.Role}
		for _, p := range m.Parts {
			switch p.Kind {
			case models.PartThinking:
				continue
			case models.PartToolResult:
				if len(p.Text) > maxSummarizedResult {
					half := maxSummarizedResult / 2
					p.Text = p.Text[:half] + fmt.Sprintf("\n[… %d bytes left out …]\n", len(p.Text)-2*half) + p.Text[len(p.Text)-half:]
				}
			}
			c.Parts = append(c.Parts, p)
		}
		if len(c.Parts) > 0 {
			out = append(out, c)
		}
	}
	out = repairHistory(out)
	instruction := summaryPrompt
	if omitted {
		instruction += "\n\n(The oldest part of the conversation did not fit and is not shown; say so in the summary.)"
	}
	if focus != "" {
		instruction += "\n\nThe user asks the summary to focus on: " + focus
	}
	part := models.Part{Kind: models.PartText, Text: instruction}
	if n := len(out); n > 0 && out[n-1].Role == models.RoleUser {
		out[n-1].Parts = append(out[n-1].Parts, part)
	} else {
		out = append(out, models.Message{Role: models.RoleUser, Parts: []models.Part{part}})
	}
	return out
}

// compactHead builds the messages that replace h[:cut].
func compactHead(h []models.Message, cut int, summary string) compactResult {
	text := "This conversation was compacted to fit the model's context window. Summary of the earlier part:\n\n<summary>\n" + summary + "\n</summary>"
	// The user's latest prompt stays word for word when it is in the
	// summarized part (a long turn of tool calls).
	if cut < len(h) && h[cut].Role == models.RoleAssistant {
		if p := latestPrompt(h[:cut]); p != "" {
			text += "\n\nThe user's latest message, which the work continues on:\n\n" + p
		}
	}
	head := models.Message{Role: models.RoleUser, Parts: []models.Part{{Kind: models.PartText, Text: text}}}
	kept := len(h) - cut
	if cut < len(h) && h[cut].Role == models.RoleUser {
		// A user prompt starts the kept part: one user message, the
		// summary first.
		head.Parts = append(head.Parts, h[cut].Parts...)
		kept--
	}
	return compactResult{head: []models.Message{head}, kept: kept, summary: summary}
}

// maxKeptPrompt bounds the latest prompt repeated after a summary.
const maxKeptPrompt = 16 << 10

// latestPrompt is the text of the latest user prompt in h (not a message
// of tool results).
func latestPrompt(h []models.Message) string {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Role != models.RoleUser {
			continue
		}
		var b strings.Builder
		results := false
		for _, p := range h[i].Parts {
			switch p.Kind {
			case models.PartToolResult:
				results = true
			case models.PartText:
				b.WriteString(p.Text)
				b.WriteByte('\n')
			}
		}
		if results {
			continue
		}
		t := strings.TrimSpace(b.String())
		if len(t) > maxKeptPrompt {
			t = t[:maxKeptPrompt] + "…"
		}
		return t
	}
	return ""
}

// compactCommand recognizes "/compact [focus]" as a whole prompt.
func compactCommand(prompt []Content) (focus string, ok bool) {
	if len(prompt) != 1 || prompt[0].Type != ContentText {
		return "", false
	}
	t := strings.TrimSpace(prompt[0].Text)
	rest, ok := strings.CutPrefix(t, "/compact")
	if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '\n' && rest[0] != '\t') {
		return "", false
	}
	return strings.TrimSpace(rest), true
}

// compactNow runs /compact: it compacts the conversation and ends the turn.
func (s *Session) compactNow(ctx context.Context, model models.Model, system string, specs []models.ToolSpec, focus string) (StopReason, error) {
	err := s.compact(ctx, model, s.modelInfo(ctx, model), system, specs, compactManual, focus)
	switch {
	case ctx.Err() != nil:
		return StopCancelled, nil
	case errors.Is(err, errNothingToCompact):
		s.send(&MessageChunk{MessageID: newID("msg"), Text: "There is nothing to compact yet."})
		return StopEndTurn, nil
	case err != nil:
		return "", err
	}
	return StopEndTurn, nil
}

// clientTakesCompaction reads clientCapabilities.session.compaction: an
// object (even {}) means yes; absent or null, no.
func clientTakesCompaction(c *rpc.ClientCapabilities) bool {
	if c == nil || len(c.Session) == 0 {
		return false
	}
	var sess map[string]json.RawMessage
	if json.Unmarshal(c.Session, &sess) != nil {
		return false
	}
	raw, ok := sess["compaction"]
	return ok && len(raw) > 0 && string(raw) != "null"
}

// compactionUpdate is the ACP compaction_update of ev.
func compactionUpdate(ev *Compaction) *rpc.CompactionUpdate {
	u := &rpc.CompactionUpdate{CompactionID: ev.ID, Status: ev.Status}
	switch ev.Status {
	case CompactionCompleted:
		summary := []rpc.ContentBlock{rpc.TextBlock(ev.Summary)}
		u.Summary = &summary
	case CompactionFailed:
		e := ev.Error
		u.Error = &e
	}
	return u
}
