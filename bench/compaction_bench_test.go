package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coding-agent/coding-agent/session"
	"github.com/coding-agent/coding-agent/session/models"
)

// windowModel is a model with a hard context window: it counts a
// request's tokens (4 bytes each), refuses one that does not fit the way
// Anthropic does ("prompt is too long"), reports its usage, answers a
// summary request with a summary, and otherwise alternates a read of a
// large file with an answer.
type windowModel struct {
	window int64

	mu                     sync.Mutex
	requests, summaries    int
	summaryTokens, tokens  int64
	refusals, turnRequests int
}

func (m *windowModel) Name() string { return "anthropic/bench-window" }

func tokensOf(req models.Request) int64 {
	n := len(req.System)
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Schema)
	}
	for _, msg := range req.Messages {
		for _, p := range msg.Parts {
			n += len(p.Text) + len(p.Args) + 8
		}
	}
	return int64(n / 4)
}

func (m *windowModel) Stream(ctx context.Context, req models.Request, on func(models.Event)) error {
	in := tokensOf(req)
	m.mu.Lock()
	m.requests++
	m.tokens += in
	last := req.Messages[len(req.Messages)-1]
	lastText := last.Parts[len(last.Parts)-1].Text
	summary := req.NoToolUse && strings.Contains(lastText, "## User's goals")
	if in+int64(req.MaxTokens) > m.window {
		m.refusals++
		m.mu.Unlock()
		return &models.APIError{Provider: "anthropic", Status: 400, Type: "invalid_request_error",
			Message: fmt.Sprintf("prompt is too long: %d tokens > %d maximum", in, m.window)}
	}
	if summary {
		m.summaries++
		m.summaryTokens += in
	} else {
		m.turnRequests++
	}
	callNow := !summary && last.Parts[0].Kind != models.PartToolResult
	m.mu.Unlock()
	switch {
	case summary:
		on(models.Event{Kind: models.EventText, Text: "## User's goals\nRead big.txt each turn.\n## Decisions\nNone.\n## Files\nbig.txt read.\n## Errors\nNone.\n## Remaining work\nKeep reading."})
	case callNow:
		on(models.Event{Kind: models.EventToolStart, ToolCallID: fmt.Sprintf("call_%d", m.requests), ToolName: "read"})
		on(models.Event{Kind: models.EventToolDelta, ArgsDelta: `{"path":"big.txt"}`})
		on(models.Event{Kind: models.EventToolEnd})
	default:
		on(models.Event{Kind: models.EventText, Text: "Read it; it is a long file of numbered lines."})
	}
	on(models.Event{Kind: models.EventUsage, Usage: models.Usage{InputTokens: in, OutputTokens: 20}})
	stop := models.StopEndTurn
	if callNow {
		stop = models.StopToolUse
	}
	on(models.Event{Kind: models.EventDone, StopReason: stop})
	return nil
}

// BenchmarkCompaction300Turns is issue 16's long session: 300 turns, each
// reading a 40 KB file (about 10,000 tokens of tool output), against a
// 200,000-token window that refuses what does not fit. It must finish
// without a context error; it reports the compactions, the time spent in
// them and the tokens their summary requests sent.
//
//	go test -run '^$' -bench Compaction300Turns -benchtime 1x ./bench/
func BenchmarkCompaction300Turns(b *testing.B) {
	for b.Loop() {
		cwd := b.TempDir()
		var lines strings.Builder
		for i := range 1000 {
			fmt.Fprintf(&lines, "line %04d of a large file, with some text on it\n", i)
		}
		os.WriteFile(filepath.Join(cwd, "big.txt"), []byte(lines.String()), 0o644)
		m := &windowModel{window: 200_000}
		var mu sync.Mutex
		var started time.Time
		var inCompaction time.Duration
		compactions := 0
		env := &session.Env{DataDir: b.TempDir(), Getenv: func(string) string { return "" }}
		s, err := env.NewSession(session.Options{Cwd: cwd, Model: m, OnEvent: func(ev session.Event) {
			if c, ok := ev.(*session.Compaction); ok {
				mu.Lock()
				switch c.Status {
				case session.CompactionInProgress:
					started = time.Now()
				default:
					inCompaction += time.Since(started)
					compactions++
				}
				mu.Unlock()
			}
		}})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		for i := range 300 {
			if _, err := s.Prompt(context.Background(), []session.Content{session.Text(fmt.Sprintf("turn %d: read big.txt again", i))}); err != nil {
				b.Fatalf("turn %d: %v", i, err)
			}
		}
		total := time.Since(start)
		s.Close()
		b.ReportMetric(float64(compactions), "compactions")
		b.ReportMetric(float64(m.refusals), "context-errors")
		b.ReportMetric(inCompaction.Seconds(), "compaction-s")
		b.ReportMetric(total.Seconds(), "total-s")
		b.ReportMetric(float64(m.summaryTokens), "summary-input-tokens")
		b.ReportMetric(float64(m.tokens), "all-input-tokens")
	}
}
