package chat

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/coding-agent/coding-agent/session"
	"github.com/coding-agent/coding-agent/session/models"
	"github.com/coding-agent/coding-agent/session/models/modeltest"
	"github.com/coding-agent/coding-agent/tools"
)

// openPTY opens a pseudo-terminal pair: the chat gets the slave as its
// terminal, the benchmark types into and reads from the master.
func openPTY(tb testing.TB) (master, slave *os.File) {
	tb.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		tb.Skipf("no pseudo-terminals: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		tb.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 80})
	return m, s
}

// screenReader collects what the chat writes to the terminal and lets the
// benchmark wait for a string.
type screenReader struct {
	ch  chan []byte
	buf bytes.Buffer
}

func newScreenReader(m *os.File) *screenReader {
	r := &screenReader{ch: make(chan []byte, 1024)}
	go func() {
		defer close(r.ch)
		b := make([]byte, 64<<10)
		for {
			n, err := m.Read(b)
			if n > 0 {
				r.ch <- append([]byte(nil), b[:n]...)
			}
			if err != nil {
				return
			}
		}
	}()
	return r
}

// waitFor reads until s has been written after the mark, and returns when.
func (r *screenReader) waitFor(tb testing.TB, s string) time.Time {
	tb.Helper()
	timeout := time.After(60 * time.Second)
	for !bytes.Contains(r.buf.Bytes(), []byte(s)) {
		select {
		case b, ok := <-r.ch:
			if !ok {
				tb.Fatalf("the terminal closed before %q; screen: %q", s, r.buf.String())
			}
			r.buf.Write(b)
		case <-timeout:
			tb.Fatalf("no %q; screen: %q", s, r.buf.String())
		}
	}
	at := time.Now()
	i := bytes.Index(r.buf.Bytes(), []byte(s))
	rest := append([]byte(nil), r.buf.Bytes()[i+len(s):]...)
	r.buf.Reset()
	r.buf.Write(rest)
	return at
}

// BenchmarkFirstChar measures the time from Enter to the first character
// of the answer on the terminal, through the whole chat (line editor,
// session, model client, renderer), against the same scripted model
// server's own latency: the time a bare model client takes from sending
// the request to its first text delta. Reported per turn as
// enter-to-first-char-ns and server-first-text-ns.
func BenchmarkFirstChar(b *testing.B) {
	const answer = "ZQXanswer"
	script := make(modeltest.Script, 0, b.N)
	base := make(modeltest.Script, 0, b.N)
	for i := 0; i < b.N; i++ {
		script = append(script, modeltest.Response{Steps: []modeltest.Step{modeltest.Text(answer + " and more")}})
		base = append(base, modeltest.Response{Steps: []modeltest.Step{modeltest.Text(answer + " and more")}})
	}
	srv := modeltest.NewAnthropicServer(b, script)
	bsrv := modeltest.NewAnthropicServer(b, base)

	// The baseline: a model client alone.
	m, err := models.NewAnthropic("claude-sonnet-4-5", "k", bsrv.BaseURL, models.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var serverTotal time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		first := time.Duration(0)
		err := m.Stream(context.Background(), models.Request{Messages: []models.Message{{Role: "user", Parts: []models.Part{{Kind: models.PartText, Text: "hi"}}}}}, func(ev models.Event) {
			if ev.Kind == models.EventText && first == 0 {
				first = time.Since(start)
			}
		})
		if err != nil {
			b.Fatal(err)
		}
		serverTotal += first
	}

	master, slave := openPTY(b)
	defer master.Close()
	screen := newScreenReader(master)
	env := &session.Env{DataDir: b.TempDir(), Getenv: func(k string) string {
		return map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.BaseURL, "CODING_AGENT_MODEL": "anthropic/claude-sonnet-4-5"}[k]
	}}
	defer env.Shutdown()
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), Config{Env: env, Options: session.Options{Cwd: b.TempDir(), Tools: []string{}, Preset: tools.Preset("read-only")}, In: slave, Out: slave})
	}()
	screen.waitFor(b, "› ")
	var total time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		io.WriteString(master, "hi\r")
		total += screen.waitFor(b, answer).Sub(start)
		screen.waitFor(b, "› ")
	}
	b.StopTimer()
	io.WriteString(master, "\x04")
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	slave.Close()
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "enter-to-first-char-ns")
	b.ReportMetric(float64(serverTotal.Nanoseconds())/float64(b.N), "server-first-text-ns")
}

// countWriter counts what the terminal would be sent.
type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// BenchmarkTail10k renders a command printing 10,000 lines as the session
// reports it (a progress event per line, each with the output's tail),
// against the baseline of writing the same 10,000 lines straight to the
// terminal. The live region is redrawn at most every redrawEvery, so the
// bytes sent to the terminal stay a fraction of the output's.
func BenchmarkTail10k(b *testing.B) {
	lines := make([]string, 10000)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d of the build output, with some text to make it realistic", i)
	}
	b.Run("raw", func(b *testing.B) {
		w := &countWriter{}
		for i := 0; i < b.N; i++ {
			for _, l := range lines {
				io.WriteString(crlf{w}, l+"\n")
			}
		}
		b.ReportMetric(float64(w.n)/float64(b.N), "terminal-bytes/op")
	})
	b.Run("chat", func(b *testing.B) {
		w := &countWriter{}
		for i := 0; i < b.N; i++ {
			r := newRenderer(crlf{w}, style{color: true}, true, 80)
			r.event(&session.ToolCallStarted{CallID: "c", Tool: "bash", Title: "Bash · make", Kind: tools.KindExecute})
			r.event(&session.ToolCallUpdated{CallID: "c", Status: session.StatusInProgress})
			var tail strings.Builder
			for j, l := range lines {
				tail.WriteString(l + "\n")
				t := tail.String()
				if len(t) > 4096 {
					t = t[len(t)-4096:]
				}
				r.event(&session.ToolCallUpdated{CallID: "c", Progress: &tools.Progress{Tail: t, Bytes: int64(j)}})
			}
			r.event(&session.ToolCallFinished{CallID: "c", Status: session.StatusCompleted})
			r.close()
		}
		b.ReportMetric(float64(w.n)/float64(b.N), "terminal-bytes/op")
	})
}
