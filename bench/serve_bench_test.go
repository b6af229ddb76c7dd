package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The server benchmarks of issues 4 and 6 run the real binary over its
// stdio, as an editor does: spawn → initialize, a small direct tool call
// (latency and throughput), and the latency from a write on disk to the
// _coding-agent/files_changed notification at the client.

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// agentBinary builds cmd/coding-agent once per benchmark run.
func agentBinary(b *testing.B) string {
	b.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "coding-agent-bench-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "coding-agent")
		out, err := exec.Command("go", "build", "-o", binPath, "../cmd/coding-agent").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		b.Fatal(buildErr)
	}
	return binPath
}

// stdioClient speaks NDJSON to a running server.
type stdioClient struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	id    int
	notes chan map[string]any
	res   chan map[string]any
}

func startServer(b *testing.B, dir string) *stdioClient {
	b.Helper()
	cmd := exec.Command(agentBinary(b), "serve", "--data-dir", b.TempDir(), "--log-level", "error")
	cmd.Dir = dir
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	c := &stdioClient{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), notes: make(chan map[string]any, 4096), res: make(chan map[string]any, 16)}
	go c.read()
	b.Cleanup(func() {
		in.Close()
		cmd.Wait()
	})
	return c
}

func (c *stdioClient) read() {
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			close(c.res)
			return
		}
		var m map[string]any
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		if _, ok := m["method"]; ok {
			select {
			case c.notes <- m:
			default: // benchmarks only wait for some notifications
			}
			continue
		}
		c.res <- m
	}
}

func (c *stdioClient) send(method string, params any) int {
	c.id++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	c.in.Write(append(b, '\n'))
	return c.id
}

func (c *stdioClient) call(b *testing.B, method string, params any) map[string]any {
	c.send(method, params)
	m, ok := <-c.res
	if !ok {
		b.Fatalf("%s: the server closed its output", method)
	}
	if e, ok := m["error"]; ok {
		b.Fatalf("%s: %v", method, e)
	}
	return m["result"].(map[string]any)
}

// BenchmarkSpawnToInitialize is the time from spawning the binary to the
// answer to initialize (target ≤ 15 ms).
func BenchmarkSpawnToInitialize(b *testing.B) {
	bin := agentBinary(b)
	data := b.TempDir()
	init := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n")
	var times []time.Duration
	for b.Loop() {
		start := time.Now()
		cmd := exec.Command(bin, "serve", "--data-dir", data, "--log-level", "error")
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		in.Write(init)
		if _, err := bufio.NewReader(out).ReadBytes('\n'); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
		in.Close()
		cmd.Wait()
	}
	reportPercentiles(b, times)
}

// BenchmarkDirectReadCall is one standalone _coding-agent/tools/call read
// of a small file, round trip over the binary's stdio.
func BenchmarkDirectReadCall(b *testing.B) {
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "small.txt"), []byte(strings.Repeat("a line of text\n", 40)), 0o644)
	c := startServer(b, dir)
	c.call(b, "initialize", map[string]any{"protocolVersion": 1})
	params := map[string]any{"name": "read", "cwd": dir, "arguments": map[string]any{"path": "small.txt"}}
	c.call(b, "_coding-agent/tools/call", params) // warm up
	var times []time.Duration
	for b.Loop() {
		start := time.Now()
		res := c.call(b, "_coding-agent/tools/call", params)
		times = append(times, time.Since(start))
		if res["isError"] != false {
			b.Fatalf("read failed: %v", res)
		}
	}
	reportPercentiles(b, times)
}

// BenchmarkDirectReadThroughput keeps 32 read calls in flight.
func BenchmarkDirectReadThroughput(b *testing.B) {
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "small.txt"), []byte(strings.Repeat("a line of text\n", 40)), 0o644)
	c := startServer(b, dir)
	c.call(b, "initialize", map[string]any{"protocolVersion": 1})
	params := map[string]any{"name": "read", "cwd": dir, "arguments": map[string]any{"path": "small.txt"}}
	const window = 32
	start := time.Now()
	inflight := 0
	n := 0
	for b.Loop() {
		c.send("_coding-agent/tools/call", params)
		inflight++
		n++
		if inflight == window {
			<-c.res
			inflight--
		}
	}
	for ; inflight > 0; inflight-- {
		<-c.res
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "calls/s")
}

// BenchmarkFilesChangedLatency is the time from a write on disk (by this
// process, outside the agent) to the files_changed notification at the
// client, through the real binary.
func BenchmarkFilesChangedLatency(b *testing.B) {
	dir := b.TempDir()
	c := startServer(b, dir)
	c.call(b, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{
		"_meta": map[string]any{"coding-agent": map[string]any{"extensions": true}}}})
	c.call(b, "session/new", map[string]any{"cwd": dir, "mcpServers": []any{}})
	var times []time.Duration
	i := 0
	for b.Loop() {
		i++
		path := filepath.Join(dir, fmt.Sprintf("f%d.txt", i%50))
		start := time.Now()
		if err := os.WriteFile(path, fmt.Appendf(nil, "%d\n", i), 0o644); err != nil {
			b.Fatal(err)
		}
		waitNote(b, c, path)
		times = append(times, time.Since(start))
	}
	reportPercentiles(b, times)
}

// BenchmarkSessionOn20kFiles is the cost of a session/new whose root holds
// 20,000 files in 1,000 directories: the watcher's start-up, and the
// server's resident memory afterwards.
func BenchmarkSessionOn20kFiles(b *testing.B) {
	dir := b.TempDir()
	for d := range 1000 {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", d))
		os.MkdirAll(sub, 0o755)
		for f := range 20 {
			os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%02d.go", f)), []byte("package x\n"), 0o644)
		}
	}
	var times []time.Duration
	var rss []float64
	for b.Loop() {
		c := startServer(b, dir)
		c.call(b, "initialize", map[string]any{"protocolVersion": 1})
		before := rssKiB(c.cmd.Process.Pid)
		start := time.Now()
		c.call(b, "session/new", map[string]any{"cwd": dir, "mcpServers": []any{}})
		times = append(times, time.Since(start))
		rss = append(rss, float64(rssKiB(c.cmd.Process.Pid)-before)/1024)
		c.in.Close()
		c.cmd.Wait()
	}
	reportPercentiles(b, times)
	slices.Sort(rss)
	b.ReportMetric(rss[len(rss)/2], "MiB-rss-delta")
}

// waitNote waits for a files_changed notification naming path.
func waitNote(b *testing.B, c *stdioClient, path string) {
	timeout := time.After(10 * time.Second)
	for {
		select {
		case m := <-c.notes:
			if m["method"] != "_coding-agent/files_changed" {
				continue
			}
			raw, _ := json.Marshal(m["params"])
			if strings.Contains(string(raw), path) {
				return
			}
		case <-timeout:
			b.Fatalf("no files_changed for %s", path)
		}
	}
}

// rssKiB reads the resident set size of pid from /proc.
func rssKiB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kib int
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kib)
			return kib
		}
	}
	return 0
}

// reportPercentiles reports p50 and p99 of times in milliseconds.
func reportPercentiles(b *testing.B, times []time.Duration) {
	if len(times) == 0 {
		return
	}
	slices.Sort(times)
	pct := func(p float64) float64 {
		return float64(times[min(len(times)-1, int(p*float64(len(times))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// BenchmarkBashTrueIn20kTree is a direct `bash -c true` call in a session
// whose root holds 20,000 files (1,000 directories): the cost of the
// watcher's snapshot and diff, and of the sandbox's search for `.git`
// entries, around a command, against the same call with no files.
func BenchmarkBashTrueIn20kTree(b *testing.B) {
	for _, bc := range []struct {
		files  int
		preset string
		pause  time.Duration // between calls, outside the timing
	}{
		{0, "full-access", 0}, {20000, "full-access", 0},
		{0, "workspace-write", 0}, {20000, "workspace-write", 0},
		// As in a session, where calls come seconds apart: the sandbox
		// has its helpers ready.
		{20000, "workspace-write", 200 * time.Millisecond},
	} {
		files := bc.files
		name := fmt.Sprintf("files=%d/%s", files, bc.preset)
		if bc.pause > 0 {
			name += "/paused"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			for i := range files {
				sub := filepath.Join(dir, fmt.Sprintf("d%03d", i/20))
				os.MkdirAll(sub, 0o755)
				os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%02d.go", i%20)), []byte("package x\n"), 0o644)
			}
			// A checkout made a while ago, as workspaces are: the
			// sandbox trusts what it read of directories not modified
			// in the last seconds.
			old := time.Now().Add(-time.Hour)
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					os.Chtimes(p, old, old)
				}
				return nil
			})
			c := startServer(b, dir)
			c.call(b, "initialize", map[string]any{"protocolVersion": 1})
			sid := c.call(b, "session/new", map[string]any{"cwd": dir, "mcpServers": []any{}, "_meta": map[string]any{"coding-agent": map[string]any{"preset": bc.preset}}})["sessionId"]
			params := map[string]any{"sessionId": sid, "name": "bash", "arguments": map[string]any{"command": "true"}}
			c.call(b, "_coding-agent/tools/call", params)
			var times []time.Duration
			for b.Loop() {
				if bc.pause > 0 {
					b.StopTimer()
					time.Sleep(bc.pause)
					b.StartTimer()
				}
				start := time.Now()
				c.call(b, "_coding-agent/tools/call", params)
				times = append(times, time.Since(start))
			}
			reportPercentiles(b, times)
		})
	}
}
