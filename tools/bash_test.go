//go:build linux

package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// newTestBash returns a bash tool on a fresh directory; opts.Preset
// defaults to full-access here so that tests run without a sandbox unless
// they say otherwise.
func newTestBash(t *testing.T, opts Options) (*Bash, string) {
	t.Helper()
	dir := t.TempDir()
	if opts.Preset == "" {
		opts.Preset = FullAccess
	}
	b, err := NewBash(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return b, dir
}

func bashArgsJSON(t *testing.T, args map[string]any) json.RawMessage {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func runBash(t *testing.T, b *Bash, args map[string]any) (Result, error) {
	t.Helper()
	return b.Execute(context.Background(), Call{ID: "call-1", Args: bashArgsJSON(t, args)})
}

func resultText(r Result) string {
	var s strings.Builder
	for _, c := range r.Content {
		s.WriteString(c.Text)
	}
	return s.String()
}

// processGone reports whether pid no longer runs: absent from /proc or a
// zombie waiting for a parent that does not reap.
func processGone(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the parenthesized command name.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X')
}

// waitGone polls /proc until pid is gone or a deadline passes.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func readPIDs(t *testing.T, path string) []int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("pid file %s: %v", path, err)
		}
		pids = append(pids, pid)
	}
	if len(pids) == 0 {
		t.Fatalf("pid file %s is empty", path)
	}
	return pids
}

func TestBashValidation(t *testing.T) {
	b, _ := newTestBash(t, Options{})
	tests := []struct {
		name  string
		args  string
		field string
	}{
		{"missing command", `{}`, "/command"},
		{"empty command", `{"command":""}`, "/command"},
		{"blank command", `{"command":"   "}`, "/command"},
		{"command not a string", `{"command":1}`, "/command"},
		{"timeout too small", `{"command":"true","timeout":0.001}`, "/timeout"},
		{"timeout zero", `{"command":"true","timeout":0}`, "/timeout"},
		{"timeout negative", `{"command":"true","timeout":-1}`, "/timeout"},
		{"timeout not a number", `{"command":"true","timeout":"5"}`, "/timeout"},
		{"unknown sandbox_permissions", `{"command":"true","sandbox_permissions":"root"}`, "/sandbox_permissions"},
		{"empty justification", `{"command":"true","justification":""}`, "/justification"},
		{"justification too long", `{"command":"true","justification":"` + strings.Repeat("é", 241) + `"}`, "/justification"},
		{"escalation without justification", `{"command":"true","sandbox_permissions":"require_escalated"}`, "/justification"},
		{"escalation with blank justification", `{"command":"true","sandbox_permissions":"require_escalated","justification":"  "}`, "/justification"},
		{"unknown property", `{"command":"true","cwd":"/"}`, "/cwd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := b.Execute(context.Background(), Call{Args: json.RawMessage(tt.args)})
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v, want *ValidationError", err)
			}
			if ve.Field != tt.field {
				t.Errorf("Field = %q, want %q (%v)", ve.Field, tt.field, err)
			}
		})
	}
	// The limits' edges are valid.
	for _, args := range []string{
		`{"command":"true","timeout":0.01}`,
		`{"command":"true","justification":"` + strings.Repeat("é", 240) + `"}`,
		`{"command":"true","sandbox_permissions":"use_default"}`,
	} {
		if _, err := b.Execute(context.Background(), Call{Args: json.RawMessage(args)}); err != nil {
			t.Errorf("%s: %v", args, err)
		}
	}
}

func TestNewBashRejectsBadCwd(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cwd := range []string{"relative", file, filepath.Join(t.TempDir(), "missing")} {
		if _, err := NewBash(cwd, Options{}); err == nil {
			t.Errorf("NewBash(%q) succeeded", cwd)
		}
	}
}

func TestBashExitStatus(t *testing.T) {
	b, _ := newTestBash(t, Options{})
	tests := []struct {
		command  string
		isError  bool
		text     string // substring
		exitCode any
	}{
		{"echo hello", false, "hello\n", 0},
		{"true", false, "(no output)", 0},
		{"echo oops; exit 3", true, "oops\n\nCommand exited with code 3", 3},
		{"exit 1", true, "(no output)\n\nCommand exited with code 1", 1},
		{"echo before; kill -KILL $$", true, "before\n\nCommand was killed by signal SIGKILL", nil},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			res, err := runBash(t, b, map[string]any{"command": tt.command})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError != tt.isError {
				t.Errorf("IsError = %v, want %v", res.IsError, tt.isError)
			}
			if got := resultText(res); !strings.Contains(got, tt.text) {
				t.Errorf("text = %q, want it to contain %q", got, tt.text)
			}
			if got := res.Details["exitCode"]; got != tt.exitCode {
				t.Errorf("exitCode = %v, want %v", got, tt.exitCode)
			}
			if res.Details["sandboxed"] != false || res.Details["escalated"] != false {
				t.Errorf("details = %v, want sandboxed and escalated false", res.Details)
			}
		})
	}
}

func TestBashEnvironment(t *testing.T) {
	t.Run("combined output keeps the order", func(t *testing.T) {
		b, _ := newTestBash(t, Options{})
		res, err := runBash(t, b, map[string]any{"command": "echo a; echo b >&2; echo c; echo d >&2"})
		if err != nil {
			t.Fatal(err)
		}
		if got := resultText(res); got != "a\nb\nc\nd\n" {
			t.Errorf("output = %q, want a b c d in order", got)
		}
	})
	t.Run("stdin is /dev/null", func(t *testing.T) {
		b, _ := newTestBash(t, Options{})
		res, err := runBash(t, b, map[string]any{"command": "readlink /proc/self/fd/0; cat; echo end"})
		if err != nil {
			t.Fatal(err)
		}
		if got := resultText(res); got != "/dev/null\nend\n" {
			t.Errorf("output = %q", got)
		}
	})
	t.Run("cwd", func(t *testing.T) {
		b, dir := newTestBash(t, Options{})
		res, err := runBash(t, b, map[string]any{"command": "pwd -P"})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := filepath.EvalSymlinks(dir)
		if got := strings.TrimSpace(resultText(res)); got != want {
			t.Errorf("pwd = %q, want %q", got, want)
		}
	})
	t.Run("Options.Env replaces the environment", func(t *testing.T) {
		t.Setenv("CODING_AGENT_TEST_HOST", "host")
		b, _ := newTestBash(t, Options{Env: []string{"PATH=" + os.Getenv("PATH"), "ONLY=this"}})
		res, err := runBash(t, b, map[string]any{"command": `echo "$ONLY-${CODING_AGENT_TEST_HOST:-unset}"`})
		if err != nil {
			t.Fatal(err)
		}
		if got := resultText(res); got != "this-unset\n" {
			t.Errorf("output = %q", got)
		}
	})
	t.Run("nil Env is the host environment", func(t *testing.T) {
		t.Setenv("CODING_AGENT_TEST_HOST", "host")
		b, _ := newTestBash(t, Options{})
		res, err := runBash(t, b, map[string]any{"command": `echo "$CODING_AGENT_TEST_HOST"`})
		if err != nil {
			t.Fatal(err)
		}
		if got := resultText(res); got != "host\n" {
			t.Errorf("output = %q", got)
		}
	})
	t.Run("own process group", func(t *testing.T) {
		b, _ := newTestBash(t, Options{})
		res, err := runBash(t, b, map[string]any{"command": "ps -o pgid= -p $$; echo $$"})
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(resultText(res))
		if len(f) != 2 || f[0] != f[1] {
			t.Errorf("pgid, pid = %v: the command does not lead its own group", f)
		}
		if f[0] == strconv.Itoa(syscall.Getpgrp()) {
			t.Errorf("the command shares the test's process group %s", f[0])
		}
	})
}

func TestBashTimeout(t *testing.T) {
	b, dir := newTestBash(t, Options{})
	res, err := runBash(t, b, map[string]any{
		"command": "echo $$ > pid; echo started; sleep 100",
		"timeout": 0.2,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError {
		t.Error("a timeout is not an error result")
	}
	text := resultText(res)
	if !strings.Contains(text, "started\n") || !strings.Contains(text, "Command timed out after 0.2s") {
		t.Errorf("text = %q, want the output and the timeout", text)
	}
	if res.Details["timedOut"] != true {
		t.Errorf("details.timedOut = %v", res.Details["timedOut"])
	}
	for _, pid := range readPIDs(t, filepath.Join(dir, "pid")) {
		waitGone(t, pid)
	}
}

// startCancellable runs command and cancels it once its output contains
// "ready". It returns the error of Execute.
func startCancellable(t *testing.T, b *Bash, command string) (Result, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	call := Call{ID: "c", Args: bashArgsJSON(t, map[string]any{"command": command}), Progress: func(p Progress) {
		if strings.Contains(p.Tail, "ready") {
			cancel()
		}
	}}
	return b.Execute(ctx, call)
}

func TestBashCancelKillsTheGroup(t *testing.T) {
	b, dir := newTestBash(t, Options{})
	_, err := startCancellable(t, b, "sleep 100 & echo $! > pids; (sleep 100; true) & echo $! >> pids; echo $$ >> pids; echo ready; wait")
	if err == nil {
		t.Fatal("Execute returned no error after cancellation")
	}
	if ErrorKind(err) != "cancelled" || !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v (kind %s), want a cancellation", err, ErrorKind(err))
	}
	if !strings.Contains(err.Error(), "ready") {
		t.Errorf("err = %q, want the output so far", err)
	}
	for _, pid := range readPIDs(t, filepath.Join(dir, "pids")) {
		waitGone(t, pid)
	}
}

func TestBashTermIgnoringChildIsKilled(t *testing.T) {
	b, dir := newTestBash(t, Options{})
	b.Grace = 200 * time.Millisecond
	// The shell and its child both ignore SIGTERM; only SIGKILL ends them.
	res, err := runBash(t, b, map[string]any{
		"command": "trap '' TERM; sleep 100 & echo $! > pids; echo $$ >> pids; wait",
		"timeout": 0.1,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(resultText(res), "timed out") {
		t.Errorf("text = %q", resultText(res))
	}
	if got := res.Details["exitCode"]; got != nil {
		t.Errorf("exitCode = %v, want nil (killed by SIGKILL)", got)
	}
	for _, pid := range readPIDs(t, filepath.Join(dir, "pids")) {
		waitGone(t, pid)
	}
}

func TestBashGraceIsCapped(t *testing.T) {
	b, _ := newTestBash(t, Options{})
	for _, tc := range []struct{ set, want time.Duration }{
		{0, 0},
		{-time.Second, 0},
		{300 * time.Millisecond, 300 * time.Millisecond},
		{DefaultGrace, DefaultGrace},
		{time.Hour, DefaultGrace},
	} {
		b.Grace = tc.set
		if got := b.grace(); got != tc.want {
			t.Errorf("Grace %v: grace() = %v, want %v", tc.set, got, tc.want)
		}
	}
	if DefaultGrace > 2*time.Second {
		t.Errorf("DefaultGrace = %v, over the 2 s of PROTOCOL.md §5", DefaultGrace)
	}
}

func TestBashBackgroundJobsDieWithTheCommand(t *testing.T) {
	b, dir := newTestBash(t, Options{})
	res, err := runBash(t, b, map[string]any{"command": "nohup sleep 100 >/dev/null 2>&1 & echo $! > pids; echo done"})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(res); got != "done\n" {
		t.Errorf("output = %q", got)
	}
	for _, pid := range readPIDs(t, filepath.Join(dir, "pids")) {
		waitGone(t, pid)
	}
}

// TestBashSetsidChild: a child that starts its own session leaves the
// process group. Without the sandbox nothing confines it: it escapes and
// holds the output pipe. The call must still end (after the drain delay),
// and the group members must die. The escaped process is killed here so
// that the test leaves nothing behind; the sandbox's PID namespace is what
// kills it in production (PROTOCOL.md §7).
func TestBashSetsidChild(t *testing.T) {
	b, dir := newTestBash(t, Options{})
	escapedFile := filepath.Join(dir, "escaped")
	t.Cleanup(func() {
		data, err := os.ReadFile(escapedFile)
		if err != nil {
			return
		}
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
				syscall.Kill(pid, syscall.SIGKILL)
				waitGone(t, pid)
			}
		}
	})
	res, err := runBash(t, b, map[string]any{"command": `
setsid bash -c 'echo $$ > escaped; exec sleep 1000' &
sleep 1000 & echo $! > group
while [ ! -s escaped ]; do sleep 0.01; done
echo ready`})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(res); got != "ready\n" {
		t.Errorf("output = %q", got)
	}
	for _, pid := range readPIDs(t, filepath.Join(dir, "group")) {
		waitGone(t, pid)
	}
}

func TestBashTruncationRetainsTheFullOutput(t *testing.T) {
	data := t.TempDir()
	b, _ := newTestBash(t, Options{DataDir: data})
	res, err := b.Execute(context.Background(), Call{ID: "call-seq", Args: bashArgsJSON(t, map[string]any{"command": "seq 1 100000"})})
	if err != nil {
		t.Fatal(err)
	}
	full := numberedLines(1, 100000)
	path, _ := res.Details["fullOutputPath"].(string)
	if path == "" || !filepath.IsAbs(path) {
		t.Fatalf("fullOutputPath = %q, want an absolute path", path)
	}
	if filepath.Dir(path) != OutputDir(data) {
		t.Errorf("retained file %s is not under %s", path, OutputDir(data))
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != full {
		t.Errorf("retained file has %d bytes, want exactly the %d bytes of the output", len(got), len(full))
	}
	text := resultText(res)
	note, tail, _ := strings.Cut(text, "\n")
	wantNote := fmt.Sprintf("[Output truncated: showing the last 2000 lines (%d of %d bytes). Full output: %s]",
		len(numberedLines(98001, 100000)), len(full), path)
	if note != wantNote {
		t.Errorf("annotation = %q, want %q", note, wantNote)
	}
	if tail != numberedLines(98001, 100000) {
		t.Errorf("tail is not the last 2000 lines: starts %q", tail[:20])
	}
	if res.Details["truncated"] != true || res.Details["totalBytes"] != int64(len(full)) || res.Details["totalLines"] != int64(100000) {
		t.Errorf("details = %v", res.Details)
	}
	list, err := NewOutputStore(OutputDir(data)).List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Path != path || list[0].ToolCallID != "call-seq" || list[0].Bytes != int64(len(full)) {
		t.Errorf("store lists %+v", list)
	}
}

func TestBashShortOutputRetainsNothing(t *testing.T) {
	data := t.TempDir()
	b, _ := newTestBash(t, Options{DataDir: data})
	// Exactly at the line limit: nothing is cut.
	res, err := runBash(t, b, map[string]any{"command": "seq 1 2000"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Details["truncated"] != false || res.Details["fullOutputPath"] != nil {
		t.Errorf("details = %v", res.Details)
	}
	if resultText(res) != numberedLines(1, 2000) {
		t.Error("output changed")
	}
	if _, err := os.Stat(OutputDir(data)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("output directory created for a short output: %v", err)
	}
}

func TestBashTruncationWithoutStore(t *testing.T) {
	b, _ := newTestBash(t, Options{})
	res, err := runBash(t, b, map[string]any{"command": "seq 1 3000"})
	if err != nil {
		t.Fatal(err)
	}
	text := resultText(res)
	if !strings.HasPrefix(text, "[Output truncated: showing the last 2000 lines") || !strings.Contains(text, "full output was not retained") {
		t.Errorf("annotation = %q", text[:min(len(text), 200)])
	}
	if _, ok := res.Details["fullOutputPath"]; ok {
		t.Errorf("fullOutputPath set without a store: %v", res.Details)
	}
}

func TestBashOptionsOutputsWins(t *testing.T) {
	store := NewOutputStore(t.TempDir())
	b, _ := newTestBash(t, Options{DataDir: t.TempDir(), Outputs: store})
	res, err := runBash(t, b, map[string]any{"command": "seq 1 3000"})
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := res.Details["fullOutputPath"].(string); filepath.Dir(p) != store.Dir() {
		t.Errorf("fullOutputPath = %q, want it in %s", p, store.Dir())
	}
}

func TestBashUTF8NotCut(t *testing.T) {
	b, _ := newTestBash(t, Options{})
	// 40,000 3-byte runes: 51,200 is 2 modulo 3, so the byte window
	// starts on the last byte of a rune, which must be skipped.
	res, err := runBash(t, b, map[string]any{"command": `for i in $(seq 1 40000); do printf '€'; done`})
	if err != nil {
		t.Fatal(err)
	}
	_, tail, _ := strings.Cut(resultText(res), "\n")
	if !strings.HasPrefix(tail, "€") || strings.Trim(tail, "€") != "" {
		t.Errorf("tail starts %q", tail[:min(8, len(tail))])
	}
	if len(tail) != MaxBytes-2 {
		t.Errorf("tail has %d bytes, want %d", len(tail), MaxBytes-2)
	}
}

// TestBashMemoryBounded streams 100 MB through the tool and checks that
// what it allocated does not depend on the output size.
func TestBashMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 100 MB")
	}
	b, _ := newTestBash(t, Options{DataDir: t.TempDir()})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := runBash(t, b, map[string]any{"command": "yes | head -c 100000000"})
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if res.Details["totalBytes"] != int64(100000000) {
		t.Fatalf("totalBytes = %v", res.Details["totalBytes"])
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("allocated %d bytes for a 100 MB output, want under 4 MiB", alloc)
	}
}

func TestBashProgressThrottled(t *testing.T) {
	b, _ := newTestBash(t, Options{})
	var (
		mu    sync.Mutex
		times []time.Time
		tails []string
		bytes []int64
	)
	call := Call{Args: bashArgsJSON(t, map[string]any{"command": "for i in $(seq 1 60); do echo line$i; sleep 0.01; done"}),
		Progress: func(p Progress) {
			mu.Lock()
			defer mu.Unlock()
			times = append(times, time.Now())
			tails = append(tails, p.Tail)
			bytes = append(bytes, p.Bytes)
		}}
	res, err := b.Execute(context.Background(), call)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(times) < 2 {
		t.Fatalf("%d progress calls during a ~0.6 s command, want several", len(times))
	}
	for i := 1; i < len(times); i++ {
		// At most 10 a second (PROTOCOL.md §5), whatever the constant says.
		if gap := times[i].Sub(times[i-1]); gap < 100*time.Millisecond {
			t.Errorf("progress calls %d and %d are %v apart, want at least 100ms", i-1, i, gap)
		}
	}
	for i, tail := range tails {
		if !strings.HasPrefix(tail, "line1\n") || !strings.HasPrefix(resultText(res), tail) || int64(len(tail)) != bytes[i] {
			t.Errorf("progress %d: tail %q (%d bytes) is not a prefix of the output so far", i, tail, bytes[i])
		}
	}
	if !slices.IsSorted(bytes) {
		t.Errorf("progress byte counts go backwards: %v", bytes)
	}
}

func TestBashPresetsWithoutSandboxRefuse(t *testing.T) {
	for _, preset := range []Preset{ReadOnly, WorkspaceWrite, ""} {
		t.Run(string(preset), func(t *testing.T) {
			dir := t.TempDir()
			b, err := NewBash(dir, Options{Preset: preset})
			if err != nil {
				t.Fatal(err)
			}
			marker := filepath.Join(dir, "marker")
			_, err = runBash(t, b, map[string]any{"command": "touch " + marker})
			if !errors.Is(err, ErrNoSandbox) {
				t.Fatalf("err = %v, want ErrNoSandbox", err)
			}
			want := "bash needs the OS sandbox under " + string(b.opts.Preset)
			if !strings.Contains(err.Error(), want) {
				t.Errorf("err = %q, want it to contain %q", err, want)
			}
			if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the command ran: %v", err)
			}
		})
	}
}

func TestBashEscalation(t *testing.T) {
	args := func(marker string) map[string]any {
		return map[string]any{"command": "touch " + marker + "; echo ran", "sandbox_permissions": "require_escalated",
			"justification": "needs the network"}
	}
	t.Run("allowed runs unsandboxed with the host environment", func(t *testing.T) {
		t.Setenv("CODING_AGENT_TEST_HOST", "host")
		var got []ApprovalRequest
		sb := &fakeSandbox{t: t}
		b, dir := newTestBash(t, Options{Preset: WorkspaceWrite, Sandbox: sb,
			Approver: ApprovalFunc(func(ctx context.Context, req ApprovalRequest) error {
				got = append(got, req)
				return nil
			})})
		marker := filepath.Join(dir, "marker")
		a := args(marker)
		a["command"] = a["command"].(string) + `; echo "$CODING_AGENT_TEST_HOST"`
		res, err := b.Execute(context.Background(), Call{ID: "esc-1", Args: bashArgsJSON(t, a)})
		if err != nil {
			t.Fatal(err)
		}
		if resultText(res) != "ran\nhost\n" || res.Details["escalated"] != true || res.Details["sandboxed"] != false {
			t.Errorf("result %q details %v", resultText(res), res.Details)
		}
		if _, err := os.Stat(marker); err != nil {
			t.Errorf("marker: %v", err)
		}
		if sb.calls != 0 {
			t.Error("an approved escalation went through the sandbox")
		}
		if len(got) != 1 {
			t.Fatalf("approver asked %d times, want once", len(got))
		}
		r := got[0]
		if r.Kind != RequestEscalation || r.Tool != "bash" || r.CallID != "esc-1" || r.Command != a["command"] ||
			r.Justification != "needs the network" || r.Reason == "" || len(r.Args) == 0 {
			t.Errorf("approval request = %+v", r)
		}
	})
	for _, tc := range []struct {
		name     string
		approver Approver
	}{
		{"rejected", ApprovalFunc(func(context.Context, ApprovalRequest) error { return errors.New("rejected by the user") })},
		{"no approval context", nil},
	} {
		t.Run(tc.name+" does not run", func(t *testing.T) {
			calls := 0
			approver := tc.approver
			if approver != nil {
				inner := approver
				approver = ApprovalFunc(func(ctx context.Context, req ApprovalRequest) error {
					calls++
					return inner.Approve(ctx, req)
				})
			}
			b, dir := newTestBash(t, Options{Preset: ReadOnly, Approver: approver})
			marker := filepath.Join(dir, "marker")
			_, err := runBash(t, b, args(marker))
			var pe *PermissionError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *PermissionError", err)
			}
			if !strings.Contains(err.Error(), "did not run") {
				t.Errorf("err = %q", err)
			}
			if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the command ran: %v", err)
			}
			if tc.approver != nil && calls != 1 {
				t.Errorf("approver asked %d times, want exactly once (no retry)", calls)
			}
		})
	}
	t.Run("full-access runs without asking", func(t *testing.T) {
		b, dir := newTestBash(t, Options{Preset: FullAccess,
			Approver: ApprovalFunc(func(context.Context, ApprovalRequest) error {
				t.Error("approver asked under full-access")
				return errors.New("no")
			})})
		marker := filepath.Join(dir, "marker")
		res, err := runBash(t, b, args(marker))
		if err != nil {
			t.Fatal(err)
		}
		if res.Details["escalated"] != false {
			t.Errorf("details = %v", res.Details)
		}
		if _, err := os.Stat(marker); err != nil {
			t.Errorf("marker: %v", err)
		}
	})
}

// fakeSandbox is a Sandbox that runs the command with an emptied
// environment and a marker variable, so that a test can tell the sandbox
// path was taken. It records its requests and cleanups.
type fakeSandbox struct {
	t        *testing.T
	err      error
	setsid   bool
	calls    int
	cleanups int
	req      SandboxRequest
}

func (s *fakeSandbox) Command(ctx context.Context, req SandboxRequest) (SandboxedCommand, error) {
	s.calls++
	s.req = req
	if s.err != nil {
		return nil, s.err
	}
	cmd := exec.Command("env", "-i", "PATH="+os.Getenv("PATH"), "IN_FAKE_SANDBOX=1", "bash", "-c", req.Command)
	cmd.Dir = req.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: s.setsid}
	return fakeCommand{&hostCommand{cmd: cmd}, s}, nil
}

// fakeCommand counts the cleanups of a fakeSandbox's commands.
type fakeCommand struct {
	*hostCommand
	s *fakeSandbox
}

func (c fakeCommand) Close() { c.s.cleanups++ }

func TestBashSandboxPath(t *testing.T) {
	for _, setsid := range []bool{false, true} {
		t.Run(fmt.Sprintf("setsid=%v", setsid), func(t *testing.T) {
			sb := &fakeSandbox{t: t, setsid: setsid}
			data := t.TempDir()
			extra := t.TempDir()
			t.Setenv("CODING_AGENT_TEST_HOST", "host")
			b, dir := newTestBash(t, Options{Preset: WorkspaceWrite, Sandbox: sb, DataDir: data, WritableRoots: []string{extra}})
			res, err := runBash(t, b, map[string]any{"command": `echo "$IN_FAKE_SANDBOX-${CODING_AGENT_TEST_HOST:-filtered}"; ps -o pgid= -p $$; echo $$`})
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Fields(resultText(res))
			if len(lines) != 3 || lines[0] != "1-filtered" {
				t.Fatalf("output = %q: the sandbox's command did not run", resultText(res))
			}
			if lines[1] != lines[2] {
				t.Errorf("pgid %s != pid %s: not its own process group", lines[1], lines[2])
			}
			if res.Details["sandboxed"] != true || res.Details["escalated"] != false {
				t.Errorf("details = %v", res.Details)
			}
			if sb.calls != 1 || sb.cleanups != 1 {
				t.Errorf("sandbox called %d times, cleaned up %d times; want 1 and 1", sb.calls, sb.cleanups)
			}
			want := SandboxRequest{Command: sb.req.Command, Dir: dir, Preset: WorkspaceWrite,
				WritableRoots: []string{dir, extra}, Protected: []string{data}}
			got := sb.req
			if got.Dir != want.Dir || got.Preset != want.Preset || !slices.Equal(got.WritableRoots, want.WritableRoots) ||
				!slices.Equal(got.Protected, want.Protected) {
				t.Errorf("request = %+v, want %+v", got, want)
			}
			if !slices.Contains(got.Env, "CODING_AGENT_TEST_HOST=host") {
				t.Error("the sandbox did not get the unfiltered environment to filter")
			}
		})
	}
	t.Run("sandbox failure runs nothing", func(t *testing.T) {
		sb := &fakeSandbox{t: t, err: errors.New("landlock: not supported")}
		b, dir := newTestBash(t, Options{Preset: ReadOnly, Sandbox: sb})
		marker := filepath.Join(dir, "marker")
		_, err := runBash(t, b, map[string]any{"command": "touch " + marker})
		if err == nil || !strings.Contains(err.Error(), "landlock: not supported") {
			t.Fatalf("err = %v", err)
		}
		if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the command ran: %v", err)
		}
	})
	t.Run("cleanup after a cancelled command", func(t *testing.T) {
		sb := &fakeSandbox{t: t}
		b, _ := newTestBash(t, Options{Preset: ReadOnly, Sandbox: sb})
		if _, err := startCancellable(t, b, "echo ready; sleep 100"); ErrorKind(err) != "cancelled" {
			t.Fatalf("err = %v", err)
		}
		if sb.cleanups != 1 {
			t.Errorf("cleanups = %d, want 1", sb.cleanups)
		}
	})
}

func TestBashCancelledBeforeStart(t *testing.T) {
	b, dir := newTestBash(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	marker := filepath.Join(dir, "marker")
	_, err := b.Execute(ctx, Call{Args: bashArgsJSON(t, map[string]any{"command": "touch " + marker})})
	if ErrorKind(err) != "cancelled" {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command ran: %v", err)
	}
}

func TestBashDescribesItself(t *testing.T) {
	b, _ := newTestBash(t, Options{})
	if b.Name() != "bash" || b.Title() != "Bash" {
		t.Errorf("name %q title %q", b.Name(), b.Title())
	}
	var schema map[string]any
	if err := json.Unmarshal(b.Schema(), &schema); err != nil {
		t.Fatal(err)
	}
	for _, word := range []string{"tail", "timeout", "sandbox", "require_escalated", "justification", "/dev/null"} {
		if !bytes.Contains([]byte(b.Description()), []byte(word)) {
			t.Errorf("description does not mention %q", word)
		}
	}
}

func TestBashCancelWithCauseIsStillACancellation(t *testing.T) {
	b, _ := newTestBash(t, Options{})
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	call := Call{Args: bashArgsJSON(t, map[string]any{"command": "echo ready; sleep 100"}), Progress: func(p Progress) {
		if strings.Contains(p.Tail, "ready") {
			cancel(errors.New("session closed"))
		}
	}}
	_, err := b.Execute(ctx, call)
	if ErrorKind(err) != "cancelled" || !strings.Contains(err.Error(), "session closed") {
		t.Errorf("err = %v (kind %s), want a cancellation naming the cause", err, ErrorKind(err))
	}
}

func TestBashRetainFailureIsReported(t *testing.T) {
	// The data directory is a file: the output directory cannot be made.
	data := filepath.Join(t.TempDir(), "data")
	if err := os.WriteFile(data, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	b, _ := newTestBash(t, Options{DataDir: data})
	res, err := runBash(t, b, map[string]any{"command": "seq 1 3000"})
	if err != nil {
		t.Fatal(err)
	}
	note, tail, _ := strings.Cut(resultText(res), "\n")
	if !strings.Contains(note, "full output was not retained") || !strings.Contains(note, OutputDir(data)) {
		t.Errorf("annotation = %q, want it to say why nothing was retained", note)
	}
	if tail != numberedLines(1001, 3000) {
		t.Error("the tail is wrong when retaining fails")
	}
	if _, ok := res.Details["fullOutputPath"]; ok {
		t.Errorf("fullOutputPath set: %v", res.Details)
	}
}
