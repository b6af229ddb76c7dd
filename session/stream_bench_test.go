package session

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/coding-agent/coding-agent/session/models"
	"github.com/coding-agent/coding-agent/tools"
)

// deltaModel streams one write call whose arguments arrive in deltas of
// a fixed size, then ends the turn on the next request.
type deltaModel struct {
	args  string
	delta int
	n     int
}

func (m *deltaModel) Name() string { return "test/delta" }

func (m *deltaModel) Stream(ctx context.Context, req models.Request, on func(models.Event)) error {
	m.n++
	if m.n%2 == 0 {
		on(models.Event{Kind: models.EventText, Text: "ok"})
		on(models.Event{Kind: models.EventDone, StopReason: models.StopEndTurn})
		return nil
	}
	on(models.Event{Kind: models.EventToolStart, ToolCallID: fmt.Sprintf("call_%d", m.n), ToolName: "write"})
	for i := 0; i < len(m.args); i += m.delta {
		on(models.Event{Kind: models.EventToolDelta, ArgsDelta: m.args[i:min(i+m.delta, len(m.args))]})
	}
	on(models.Event{Kind: models.EventToolEnd})
	on(models.Event{Kind: models.EventDone, StopReason: models.StopToolUse})
	return nil
}

// BenchmarkStreamingWriteArgs measures one prompt whose model streams a
// write call's arguments in 16-byte deltas: the live title, validation,
// the write and its updates. Its cost must grow linearly with the content
// (issue 10 #3); ns/byte should stay flat across the sizes.
func BenchmarkStreamingWriteArgs(b *testing.B) {
	for _, size := range []int{100 << 10, 1 << 20, 8 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			content := strings.Repeat("0123456789abcde\n", size/16)
			args := `{"path":"out.txt","content":"` + strings.ReplaceAll(content, "\n", `\n`) + `"}`
			env := &Env{Getenv: func(string) string { return "" }}
			m := &deltaModel{args: args, delta: 16}
			s, err := env.NewSession(Options{Cwd: b.TempDir(), Model: m, Preset: tools.FullAccess, OnEvent: func(Event) {}})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.SetBytes(int64(len(args)))
			b.ResetTimer()
			for range b.N {
				if _, err := s.Prompt(context.Background(), []Content{Text("write")}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
