//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coding-agent/coding-agent/session/models/modeltest"
)

// acpxRun runs acpx (npm, unmodified) with our binary as its agent, against
// a scripted model, in a home of its own. It returns stdout, stderr and
// the exit error.
func acpxRun(t *testing.T, ws string, script modeltest.Script, args ...string) (string, string, error) {
	t.Helper()
	acpx := acpxBin(t)
	srv := modeltest.NewAnthropicServer(t, script)
	agent := os.Args[0] + " serve --data-dir " + t.TempDir() + " --log-level error"
	home := t.TempDir()
	cmd := exec.Command(acpx, append([]string{"--agent", agent, "--cwd", ws, "--timeout", "60"}, args...)...)
	cmd.Env = append(os.Environ(), asMainEnv+"=1", "HOME="+home, "CODING_AGENT_MODEL=anthropic/claude-sonnet-4-5",
		"ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL="+srv.BaseURL, "OPENAI_API_KEY=", "OPENAI_BASE_URL=")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if left := waitGone(home, 30*time.Second); len(left) > 0 {
		t.Errorf("processes left after acpx exec: %v", left)
	}
	return stdout.String(), stderr.String(), err
}

// acpxBin is acpx as .ci/run installs it in test/acpx; without it the test
// skips, except under CI, where it fails.
func acpxBin(t *testing.T) string {
	t.Helper()
	acpx, err := filepath.Abs("../../test/acpx/node_modules/.bin/acpx")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(acpx); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("acpx is missing: .ci/run must install test/acpx: %v", err)
		}
		t.Skip("acpx is not installed: run `npm install` in test/acpx")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is required for the acpx tests")
	}
	return acpx
}

func writeScript(path string) modeltest.Script {
	return modeltest.Script{
		{Steps: []modeltest.Step{modeltest.Text("Writing it."), modeltest.Tool("toolu_1", "write", `{"path":"`+path+`",`, `"content":"from acpx\n"}`)}},
		{Steps: []modeltest.Step{modeltest.Text("Done.")}},
	}
}

// TestAcpxApprovals: a turn whose write needs approval, through acpx
// with --approve-all (written) and --deny-all (not written), in
// --format json --json-strict mode: every stdout line is JSON, stderr is
// empty.
func TestAcpxApprovals(t *testing.T) {
	for _, test := range []struct {
		flag    string
		written bool
		code    int // acpx's exit status: 5 is its PERMISSION_DENIED
	}{{"--approve-all", true, 0}, {"--deny-all", false, 5}} {
		t.Run(test.flag, func(t *testing.T) {
			ws := t.TempDir()
			out, stderr, err := acpxRun(t, ws, writeScript("out.txt"), test.flag, "--format", "json", "--json-strict", "exec", "write out.txt")
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != test.code {
				t.Fatalf("acpx exit %d, want %d\nstdout %s\nstderr %s", code, test.code, out, stderr)
			}
			if stderr != "" {
				t.Errorf("--json-strict: stderr not empty: %q", stderr)
			}
			sc := bufio.NewScanner(strings.NewReader(out))
			sc.Buffer(nil, 16<<20)
			var toolCalls, permissions int
			for sc.Scan() {
				line := sc.Text()
				if strings.TrimSpace(line) == "" {
					continue
				}
				if !json.Valid([]byte(line)) {
					t.Errorf("stdout line is not JSON: %q", line)
					continue
				}
				if strings.Contains(line, `"sessionUpdate":"tool_call"`) {
					toolCalls++
				}
				if strings.Contains(line, "session/request_permission") {
					permissions++
				}
			}
			b, rerr := os.ReadFile(filepath.Join(ws, "out.txt"))
			if written := rerr == nil; written != test.written || (written && string(b) != "from acpx\n") {
				t.Errorf("out.txt written %v (%q), want %v", written, b, test.written)
			}
			if toolCalls != 1 {
				t.Errorf("%d tool_call updates seen by acpx, want 1\n%s", toolCalls, out)
			}
			if strings.Count(out, `"text":"write out.txt"`) > 1 {
				t.Errorf("the prompt came back more than once:\n%s", out)
			}
		})
	}
}

// TestAcpxSessions: acpx's persistent sessions against our agent — new,
// a prompt, list, history — see the turn once, with its title.
func TestAcpxSessions(t *testing.T) {
	ws := t.TempDir()
	acpx := acpxBin(t)
	srv := modeltest.NewAnthropicServer(t, modeltest.Script{{Steps: []modeltest.Step{modeltest.Text("Hello from the agent.")}}})
	home, data := t.TempDir(), t.TempDir()
	agent := os.Args[0] + " serve --data-dir " + data + " --log-level error"
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(acpx, append([]string{"--agent", agent, "--cwd", ws, "--timeout", "60", "--ttl", "1"}, args...)...)
		cmd.Env = append(os.Environ(), asMainEnv+"=1", "HOME="+home, "CODING_AGENT_MODEL=anthropic/claude-sonnet-4-5",
			"ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL="+srv.BaseURL, "OPENAI_API_KEY=", "OPENAI_BASE_URL=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("acpx %q: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("sessions", "new")
	if out := run("prompt", "say hello"); !strings.Contains(out, "Hello from the agent.") {
		t.Errorf("prompt: %s", out)
	}
	if out := run("sessions", "list"); !strings.Contains(out, "say hello") && !strings.Contains(out, "sess_") {
		t.Errorf("sessions list shows no session: %s", out)
	}
	hist := run("sessions", "history")
	if n := strings.Count(hist, "say hello"); n != 1 {
		t.Errorf("history shows the prompt %d times, want once:\n%s", n, hist)
	}
	// acpx keeps a queue owner (and our agent under it) until its idle
	// TTL (1 s here) runs out: once it has, nothing of the test is left.
	if left := waitGone(home, 30*time.Second); len(left) > 0 {
		t.Errorf("processes left after acpx's TTL: %v", left)
	}
}

// waitGone waits until no process has HOME=home in its environment, or the
// deadline passes; then it kills what is left and returns their pids.
func waitGone(home string, limit time.Duration) []int {
	marker := []byte("HOME=" + home + "\x00")
	find := func() []int {
		var pids []int
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
			if err == nil && bytes.Contains(env, marker) {
				pids = append(pids, pid)
			}
		}
		return pids
	}
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		left := find()
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			return left
		}
		<-tick.C
	}
}
