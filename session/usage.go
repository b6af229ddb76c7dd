package session

import (
	"context"
	"fmt"

	"github.com/coding-agent/coding-agent/session/models"
)

// usageState is the session's token accounting: what the latest request
// cost in context, and the money spent so far.
type usageState struct {
	// last is the usage of the latest model request, known says whether
	// there was one (since the session started or was loaded).
	last  models.Usage
	known bool
	// sent is how many history messages the latest request held: the
	// messages after them are not in last's count yet.
	sent int
	// cost is the money spent by the session's requests, in USD; priced
	// says whether any request had a known price.
	cost   float64
	priced bool
}

// modelInfo returns the limits of model m: config.json's "models" entry
// for its name wins, then what the model (or its server) says.
func (s *Session) modelInfo(ctx context.Context, m models.Model) models.Info {
	info := models.Describe(ctx, m)
	cfg, _ := s.env.config()
	if c, ok := cfg.Models[m.Name()]; ok {
		if c.ContextWindow > 0 {
			info.ContextWindow, info.Source = c.ContextWindow, "config"
		}
		if c.MaxOutputTokens > 0 {
			info.MaxOutputTokens = c.MaxOutputTokens
		}
	}
	if info.ContextWindow <= 0 {
		info.ContextWindow, info.Source = models.DefaultContextWindow, "default"
	}
	if info.MaxOutputTokens <= 0 || info.MaxOutputTokens >= info.ContextWindow {
		info.MaxOutputTokens = min(models.DefaultMaxOutputTokens, info.ContextWindow/4)
	}
	return info
}

// recordUsage accounts one finished model request that held sent history
// messages, and tells the client: used is the context of this request
// (its input, cached or not), size the model's window, cost the session's
// spending so far when the price is known.
func (s *Session) recordUsage(info models.Info, u models.Usage, sent int) {
	s.mu.Lock()
	s.usage.last, s.usage.known, s.usage.sent = u, true, sent
	if info.Price != nil {
		s.usage.cost += info.Price.Cost(u)
		s.usage.priced = true
	}
	st := s.usage
	s.mu.Unlock()
	s.journal.append(record{Type: recUsage, Usage: &usageRecord{
		Input: u.InputTokens, CacheRead: u.CacheReadTokens, CacheWrite: u.CacheWriteTokens, Output: u.OutputTokens,
		Messages: sent, CostUSD: st.cost,
	}})
	// Not journaled: a load sends the latest once (see replayUsage).
	s.send(usageUpdate(st, info.ContextWindow))
}

// replayUsage is the usage_update that ends a replay: the state of the
// latest request, nil when there was none.
func (s *Session) replayUsage(ctx context.Context) *Usage {
	s.mu.Lock()
	st := s.usage
	m := s.model
	s.mu.Unlock()
	if !st.known || m == nil {
		return nil
	}
	return usageUpdate(st, s.modelInfo(ctx, m).ContextWindow)
}

func usageUpdate(st usageState, window int64) *Usage {
	u := &Usage{Used: st.last.Context(), Size: window}
	if st.priced {
		cost := st.cost
		u.CostUSD = &cost
	}
	return u
}

// usageRecord is a journal record of one request's usage.
type usageRecord struct {
	Input      int64   `json:"input"`
	CacheRead  int64   `json:"cacheRead,omitempty"`
	CacheWrite int64   `json:"cacheWrite,omitempty"`
	Output     int64   `json:"output"`
	Messages   int     `json:"messages"`
	CostUSD    float64 `json:"costUSD,omitempty"`
}

// accountRequest records the usage of a finished request; a server that
// reported none gets an estimate, so that clients still see a meter.
func (s *Session) accountRequest(info models.Info, t *turn, req models.Request) {
	u := t.usage
	if !t.gotUsage {
		u = models.Usage{InputTokens: estimateRequest(req), OutputTokens: estimateMessage(t.assistant())}
	}
	s.recordUsage(info, u, len(req.Messages))
}

// bytesPerToken is the estimate of how many bytes one token holds, on the
// low side (code and JSON tokenize more densely than prose), so that
// estimates err towards compacting early.
const bytesPerToken = 3

// estimateRequest estimates the tokens of a request's input.
func estimateRequest(req models.Request) int64 {
	n := int64(len(req.System))
	for _, t := range req.Tools {
		n += int64(len(t.Name) + len(t.Description) + len(t.Schema))
	}
	tokens := n / bytesPerToken
	for _, m := range req.Messages {
		tokens += estimateMessage(m)
	}
	return tokens
}

// estimateMessage estimates the tokens of one message.
func estimateMessage(m models.Message) int64 {
	n := int64(8) // role and framing
	for _, p := range m.Parts {
		switch p.Kind {
		case models.PartImage:
			n += 1600 // a typical image, whatever its encoded size
		default:
			n += int64(len(p.Text)+len(p.Args)+len(p.ToolName)+len(p.Signature)/4)/bytesPerToken + 4
		}
	}
	return n
}

// warnUnsaved tells the client, once, at its first prompt, that the
// session is not being saved (see PersistError).
func (s *Session) warnUnsaved() {
	if s.persistErr == nil {
		return
	}
	s.mu.Lock()
	warned := s.warnedUnsaved
	s.warnedUnsaved = true
	s.mu.Unlock()
	if warned {
		return
	}
	s.send(&MessageChunk{
		MessageID: newID("msg"),
		Text:      fmt.Sprintf("Warning: this session is not being saved (%v); it cannot be loaded or resumed later.\n\n", s.persistErr),
	})
}
