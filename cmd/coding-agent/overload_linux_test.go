package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestClientThatStopsReading drives the real binary with a client that
// writes 20,000 requests and reads nothing until it cannot write any more.
// The agent must bound what it holds (calls in flight, answers waiting to be
// written): its peak RSS stays under 100 MB. Once the client reads, every
// request gets exactly one answer, a result or "server overloaded"
// (-32001), and the connection serves the next request normally.
func TestClientThatStopsReading(t *testing.T) {
	const n = 20000
	const limit = 100 << 20
	// The agent as users run it: built without the race detector, whose
	// shadow memory (and slowness) the test binary may carry.
	bin := filepath.Join(t.TempDir(), "coding-agent")
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if out, err := exec.Command(goBin, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "serve", "--data-dir", t.TempDir(), "--log-level", "error")
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	out := bufio.NewReaderSize(outR, 1<<20)
	type answer struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	readMsg := func() answer {
		line, err := out.ReadBytes('\n')
		if err != nil {
			t.Fatalf("reading the agent's output: %v", err)
		}
		var m answer
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("invalid JSON from the agent: %v: %q", err, line)
		}
		return m
	}
	if _, err := inW.WriteString(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n"); err != nil {
		t.Fatal(err)
	}
	if m := readMsg(); string(m.ID) != "1" || m.Result == nil {
		t.Fatalf("initialize: %+v", m)
	}

	// The writer stops when a write makes no progress for a while: the
	// agent has stopped reading. That is the state to be in; the client
	// then starts reading, and the writer goes on.
	blocked := make(chan int, 1)
	resume := make(chan struct{})
	written := make(chan error, 1)
	go func() {
		req := func(id int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"_coding-agent/tools/list","params":{}}`+"\n", id)
		}
		waiting := true
		for id := 2; id < 2+n; id++ {
			if waiting {
				inW.SetWriteDeadline(time.Now().Add(2 * time.Second))
			}
			msg := req(id)
			for msg != "" {
				k, err := inW.WriteString(msg)
				msg = msg[k:]
				if errors.Is(err, os.ErrDeadlineExceeded) && waiting {
					blocked <- id
					<-resume
					waiting = false
					inW.SetWriteDeadline(time.Time{})
					continue
				}
				if err != nil {
					written <- err
					return
				}
			}
		}
		written <- nil
	}()
	stopped := 0
	select {
	case stopped = <-blocked:
		t.Logf("the agent stopped reading after %d requests", stopped-2)
	case err := <-written:
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("the agent read all %d requests before the client read anything", n)
	}
	close(resume)

	answers := map[int]int{}
	busy := 0
	for len(answers) < n {
		m := readMsg()
		id, err := strconv.Atoi(string(m.ID))
		if err != nil || id < 2 || id >= 2+n {
			t.Fatalf("an answer with id %s, not one of the requests", m.ID)
		}
		answers[id]++
		if answers[id] > 1 {
			t.Fatalf("request %d answered twice", id)
		}
		if m.Error != nil {
			if m.Error.Code != -32001 {
				t.Fatalf("request %d: unexpected error %d", id, m.Error.Code)
			}
			busy++
		} else if m.Result == nil {
			t.Fatalf("request %d: neither result nor error", id)
		}
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	// Recovered: the next request is served normally.
	if _, err := inW.WriteString(`{"jsonrpc":"2.0","id":"last","method":"_coding-agent/tools/list","params":{}}` + "\n"); err != nil {
		t.Fatal(err)
	}
	if m := readMsg(); string(m.ID) != `"last"` || m.Result == nil {
		t.Fatalf("request after the flood: %+v", m)
	}
	hwm := vmHWM(t, cmd.Process.Pid)
	t.Logf("%d requests: %d answered with a result, %d with -32001; agent peak RSS (VmHWM) %.1f MiB", n, n-busy, busy, float64(hwm)/(1<<20))
	if hwm > limit {
		t.Errorf("agent peak RSS %d MiB, want under %d MiB", hwm>>20, limit>>20)
	}
	inW.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("agent exit: %v", err)
	}
}

// vmHWM returns the peak resident set size of process pid, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}
