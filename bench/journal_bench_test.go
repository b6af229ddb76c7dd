//go:build unix

package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coding-agent/coding-agent/session"
	"github.com/coding-agent/coding-agent/session/models"
	"github.com/coding-agent/coding-agent/session/models/modeltest"
)

// BenchmarkSessionWriteRSS is issue 10 #4: one model write of N MiB through
// the real binary (serve over stdio, the model a scripted Anthropic server
// streaming the arguments in 64 KiB deltas), then session/load of that
// session in a fresh process. It reports the peak RSS of each process
// (getrusage of the child: ru_maxrss), the journal's size and whether the
// load succeeded. Target: write peak ≤ 3·N MiB + 30 MiB, whatever the
// content (plain text, and all '<', which HTML-escaping JSON encoders
// inflate sixfold).
//
//	go test -run '^$' -bench SessionWriteRSS -benchtime 1x ./bench/
func BenchmarkSessionWriteRSS(b *testing.B) {
	for _, mib := range []int{8, 48} {
		for _, kind := range []string{"plain", "lt"} {
			b.Run(fmt.Sprintf("%dMiB/%s", mib, kind), func(b *testing.B) {
				for b.Loop() {
					sessionWriteRSS(b, mib, kind)
				}
			})
		}
	}
}

func sessionWriteRSS(b *testing.B, mib int, kind string) {
	line := strings.Repeat("x", 63) + "\n"
	if kind == "lt" {
		line = strings.Repeat("<", 63) + "\n"
	}
	content := strings.Repeat(line, mib<<20/len(line))
	enc, _ := json.Marshal(content) // with \n escapes; '<' becomes \u003c here, as a real model would not send it
	encoded := strings.ReplaceAll(string(enc), `\u003c`, "<")
	args := `{"path":"out.txt","content":` + encoded + `}`
	var chunks []string
	for i := 0; i < len(args); i += 64 << 10 {
		chunks = append(chunks, args[i:min(i+64<<10, len(args))])
	}
	srv := modeltest.NewAnthropicServer(b, modeltest.Script{
		{Steps: []modeltest.Step{modeltest.Tool("toolu_w", "write", chunks...)}},
		{Steps: []modeltest.Step{modeltest.Text("Written.")}},
	})
	data, cwd := b.TempDir(), b.TempDir()
	env := append(os.Environ(), "ANTHROPIC_API_KEY=sk-bench", "ANTHROPIC_BASE_URL="+srv.BaseURL,
		"CODING_AGENT_MODEL=anthropic/claude-sonnet-4-5", "OPENAI_API_KEY=", "OPENAI_BASE_URL=")

	c, cmd := rssServer(b, cwd, data, env)
	c.callRSS(b, "initialize", map[string]any{"protocolVersion": 1})
	res := c.callRSS(b, "session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}, "_meta": map[string]any{"coding-agent": map[string]any{"preset": "full-access"}}})
	sid := res["sessionId"].(string)
	start := time.Now()
	c.callRSS(b, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "write it"}}})
	writeTime := time.Since(start)
	writeRSS := c.stop(b, cmd)
	if fi, err := os.Stat(filepath.Join(cwd, "out.txt")); err != nil || fi.Size() != int64(len(content)) {
		b.Fatalf("out.txt: %v (size %v, want %d)", err, fi, len(content))
	}
	journal, _ := filepath.Glob(filepath.Join(data, "sessions", "*.jsonl"))
	var jsize int64
	if len(journal) == 1 {
		if fi, err := os.Stat(journal[0]); err == nil {
			jsize = fi.Size()
		}
	}

	c, cmd = rssServer(b, cwd, data, env)
	c.callRSS(b, "initialize", map[string]any{"protocolVersion": 1})
	start = time.Now()
	c.send("session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}})
	m := <-c.res
	loadTime := time.Since(start)
	loaded := 1.0
	if _, bad := m["error"]; bad || m == nil {
		loaded = 0
		b.Logf("session/load failed: %v", m["error"])
	}
	loadRSS := c.stop(b, cmd)

	b.ReportMetric(float64(writeRSS)/(1<<20), "write-peak-MiB")
	b.ReportMetric(float64(3*mib+30), "target-MiB")
	b.ReportMetric(writeTime.Seconds(), "write-s")
	b.ReportMetric(float64(jsize)/(1<<20), "journal-MiB")
	b.ReportMetric(loaded, "load-ok")
	b.ReportMetric(loadTime.Seconds(), "load-s")
	b.ReportMetric(float64(loadRSS)/(1<<20), "load-peak-MiB")
}

// rssServer starts the binary with its notifications drained (they are
// not what is measured).
func rssServer(b *testing.B, cwd, data string, env []string) (*stdioClient, *exec.Cmd) {
	cmd := exec.Command(agentBinary(b), "serve", "--data-dir", data, "--log-level", "error")
	cmd.Dir, cmd.Env = cwd, env
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	c := &stdioClient{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), notes: make(chan map[string]any), res: make(chan map[string]any, 16)}
	go c.read()
	return c, cmd
}

func (c *stdioClient) callRSS(b *testing.B, method string, params any) map[string]any {
	c.send(method, params)
	m, ok := <-c.res
	if !ok {
		b.Fatalf("%s: the server closed its output", method)
	}
	if e, ok := m["error"]; ok {
		b.Fatalf("%s: %v", method, e)
	}
	r, _ := m["result"].(map[string]any)
	return r
}

// stop closes the server's input, waits for it and returns its peak RSS in
// bytes.
func (c *stdioClient) stop(b *testing.B, cmd *exec.Cmd) int64 {
	c.in.Close()
	for range c.res {
	}
	if err := cmd.Wait(); err != nil {
		b.Logf("server exit: %v", err)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	return ru.Maxrss * 1024 // kilobytes on Linux
}

// BenchmarkJournal1000Turns stores a session of 1,000 turns (each a prompt,
// an answer streamed in 40 pieces, one read call and its result) and
// reports the journal's size and the time to open it again
// (Env.OpenSession, what session/load and resume do first).
//
//	go test -run '^$' -bench Journal1000Turns -benchtime 1x ./bench/
func BenchmarkJournal1000Turns(b *testing.B) {
	const turns = 1000
	var script modeltest.Script
	var pieces []modeltest.Step
	for i := range 40 {
		pieces = append(pieces, modeltest.Text(fmt.Sprintf("word%02d ", i)))
	}
	for range turns {
		script = append(script,
			modeltest.Response{Steps: []modeltest.Step{modeltest.Text("Reading."), modeltest.Tool("toolu_r", "read", `{"path":"a.txt"}`)}},
			modeltest.Response{Steps: pieces})
	}
	srv := modeltest.NewAnthropicServer(b, script)
	m, err := models.NewAnthropic("claude-sonnet-4-5", "sk-bench", srv.BaseURL, models.Options{})
	if err != nil {
		b.Fatal(err)
	}
	data, cwd := b.TempDir(), b.TempDir()
	os.WriteFile(filepath.Join(cwd, "a.txt"), []byte(strings.Repeat("some text of the file\n", 50)), 0o644)
	env := &session.Env{DataDir: data, Getenv: func(string) string { return "" }}
	s, err := env.NewSession(session.Options{Cwd: cwd, Model: m, OnEvent: func(session.Event) {}})
	if err != nil {
		b.Fatal(err)
	}
	// Each turn's tool call needs an id of its own.
	for i := range turns {
		if _, err := s.Prompt(context.Background(), []session.Content{session.Text(fmt.Sprintf("turn %d: read a.txt", i))}); err != nil {
			b.Fatal(err)
		}
	}
	id := s.ID()
	s.Close()
	fi, err := os.Stat(filepath.Join(data, "sessions", id+".jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	lines := 0
	if f, err := os.Open(filepath.Join(data, "sessions", id+".jsonl")); err == nil {
		r := bufio.NewReaderSize(f, 1<<20)
		for {
			if _, err := r.ReadSlice('\n'); err != nil {
				if err == bufio.ErrBufferFull {
					continue
				}
				break
			}
			lines++
		}
		f.Close()
	}
	var loads []time.Duration
	for b.Loop() {
		start := time.Now()
		env := &session.Env{DataDir: data, Getenv: func(string) string { return "" }}
		s, _, err := env.OpenSession(id, session.Options{Cwd: cwd, OnEvent: func(session.Event) {}})
		if err != nil {
			b.Fatal(err)
		}
		loads = append(loads, time.Since(start))
		if n := len(s.History()); n != 4*turns {
			b.Fatalf("%d messages after loading, want %d", n, 4*turns)
		}
		s.Close()
	}
	var sum time.Duration
	for _, d := range loads {
		sum += d
	}
	b.ReportMetric(float64(fi.Size())/(1<<20), "journal-MiB")
	b.ReportMetric(float64(lines), "journal-lines")
	b.ReportMetric(float64(sum.Milliseconds())/float64(len(loads)), "load-ms")
}
