package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/coding-agent/coding-agent/session/models/modeltest"
)

// The web UI's benchmarks (issue 14) run in Debian's chromium through
// test/web/bench.mjs, against `coding-agent web` and a scripted model:
//
//	go test ./bench -run '^$' -bench WebUI -benchtime 1x
//
// firstload: fresh profile → page loaded, ACP initialized (median of 7);
// stream: a command printing 100,000 lines, the longest task in the page;
// load500: a session of 500 tool calls, session/load → rendered (median of 5).
func BenchmarkWebUI(b *testing.B) {
	dir, err := filepath.Abs("../test/web")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "puppeteer-core")); err != nil {
		b.Skip("test/web/node_modules is missing: run `npm ci` in test/web")
	}
	var calls []modeltest.Step
	for i := range 500 {
		if i%2 == 0 {
			calls = append(calls, modeltest.Tool(fmt.Sprintf("r%d", i), "read", `{"path":"a.txt"}`))
		} else {
			calls = append(calls, modeltest.Tool(fmt.Sprintf("b%d", i), "bash", fmt.Sprintf(`{"command":"echo call %d"}`, i)))
		}
	}
	cases := []struct {
		name    string
		script  modeltest.Script
		metrics map[string]string // result field → metric unit
	}{
		{"firstload", nil, map[string]string{"loadMs": "load-ms", "readyMs": "ready-ms", "bytes": "page-bytes"}},
		{"stream", modeltest.Script{
			{Steps: []modeltest.Step{modeltest.Tool("s", "bash", `{"command":"i=0; while [ $i -lt 100000 ]; do i=$((i+1)); echo \"line $i of the output\"; done"}`)}},
			{Steps: []modeltest.Step{modeltest.Text("Printed.")}},
		}, map[string]string{"maxLongTaskMs": "max-longtask-ms", "longTasks": "longtasks", "totalMs": "turn-ms", "frames": "ws-frames"}},
		{"load500", modeltest.Script{
			{Steps: append([]modeltest.Step{modeltest.Text("Making 500 calls.")}, calls...)},
			{Steps: []modeltest.Step{modeltest.Text("Done.")}},
		}, map[string]string{"loadRenderMs": "load-render-ms", "pageToReadyMs": "page-ready-ms", "cards": "cards", "mainThreadMs": "main-thread-ms"}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				res := runWebBench(b, dir, c.name, c.script)
				for field, unit := range c.metrics {
					if v, ok := res[field].(float64); ok {
						b.ReportMetric(v, unit)
					}
				}
				b.Logf("%s: %v", c.name, res)
			}
		})
	}
}

func runWebBench(b *testing.B, dir, scenario string, script modeltest.Script) map[string]any {
	b.Helper()
	ws := b.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\nbeta\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	srv := modeltest.NewAnthropicServer(b, script)
	cmd := exec.Command(agentBinary(b), "web", "--addr", "127.0.0.1:0", "--cwd", ws, "--data-dir", b.TempDir(), "--log-level", "error")
	cmd.Env = append(os.Environ(), "ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL="+srv.BaseURL, "CODING_AGENT_MODEL=anthropic/claude-sonnet-4-5", "OPENAI_API_KEY=", "OPENAI_BASE_URL=")
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		_ = cmd.Wait()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	node := exec.Command("node", filepath.Join(dir, "bench.mjs"), scenario, strings.TrimSpace(line), ws)
	node.Env = append(os.Environ(), "SCREENSHOTS="+os.Getenv("SCREENSHOTS"))
	if node.Env[len(node.Env)-1] == "SCREENSHOTS=" {
		node.Env = append(node.Env, "SCREENSHOTS="+b.TempDir())
	}
	text, err := node.CombinedOutput()
	if err != nil {
		b.Fatalf("%s: %v\n%s", scenario, err, text)
	}
	for _, l := range strings.Split(string(text), "\n") {
		if r, ok := strings.CutPrefix(l, "RESULT "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(r), &m); err != nil {
				b.Fatal(err)
			}
			return m
		}
	}
	b.Fatalf("%s printed no result:\n%s", scenario, text)
	return nil
}
