//go:build linux

package sandbox

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sparePid returns the pid of the helper s keeps ready, or 0.
func sparePid(s *Sandbox) int {
	s.spareMu.Lock()
	defer s.spareMu.Unlock()
	if s.spares.spare == nil {
		return 0
	}
	return s.spares.spare.cmd.Process.Pid
}

// gone polls /proc until pid has exited (a zombie counts: it is dead,
// whether or not its new parent reaps it), with a deadline: there is no
// event to wait for.
func gone(pid int) bool {
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil || strings.Contains(string(st), ") Z ") {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSpareHelper checks that a command runs in the helper started ahead
// of it, that the next one is started after it, and that Close stops it.
func TestSpareHelper(t *testing.T) {
	testSandbox(t)
	ctx := context.Background()
	s := New(Options{})
	if err := s.Prewarm(ctx); err != nil {
		t.Fatal(err)
	}
	spare := sparePid(s)
	if spare == 0 {
		t.Fatal("Prewarm left no spare helper")
	}
	f := newFixture(t, true)
	c, err := s.Command(ctx, Policy{Preset: WorkspaceWrite, WritableRoots: []string{f.ws}}, "echo hi; echo err >&2; exit 7", f.ws, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	out, code, err := c.Output()
	if err != nil || code != 7 || string(out) != "hi\nerr\n" {
		t.Fatalf("Output = %q, %d, %v; want \"hi\\nerr\\n\", 7, nil", out, code, err)
	}
	if c.Pid() != spare {
		t.Errorf("the command ran in helper %d, not in the spare %d", c.Pid(), spare)
	}
	if err := s.Prewarm(ctx); err != nil {
		t.Fatal(err)
	}
	next := sparePid(s)
	if next == 0 || next == spare {
		t.Fatalf("no new spare after the command (spare %d, before %d)", next, spare)
	}
	if !gone(spare) {
		t.Errorf("the used helper %d is still there", spare)
	}
	s.Close()
	if !gone(next) {
		t.Errorf("the spare %d survived Close", next)
	}
	// After Close commands still run, each in a helper of its own.
	c, err = s.Command(ctx, Policy{Preset: ReadOnly, WritableRoots: []string{f.ws}}, "cat file.txt", f.ws, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	if out, code, err := c.Output(); err != nil || code != 0 || string(out) != "hello\n" {
		t.Fatalf("after Close: %q, %d, %v", out, code, err)
	}
	if p := sparePid(s); p != 0 {
		t.Errorf("a spare %d was started after Close", p)
	}
}

// TestHelperKilled: a helper killed from outside ends the command with an
// error, not with an exit code, and takes the command's processes along.
func TestHelperKilled(t *testing.T) {
	s := testSandbox(t)
	f := newFixture(t, true)
	n := sleepBase + 40
	c, err := s.Command(context.Background(), Policy{Preset: WorkspaceWrite, WritableRoots: []string{f.ws}},
		"echo up; exec sleep "+strconv.Itoa(n), f.ws, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := c.Start(w, w); err != nil {
		t.Fatal(err)
	}
	w.Close()
	line := make([]byte, 3)
	if _, err := r.Read(line); err != nil || string(line) != "up\n" {
		t.Fatalf("first output %q, %v", line, err)
	}
	syscall.Kill(c.Pid(), syscall.SIGKILL)
	code, err := c.Wait()
	if code != -1 || err == nil || !strings.Contains(err.Error(), "SIGKILL") {
		t.Errorf("Wait = %d, %v; want -1 and an error naming SIGKILL", code, err)
	}
	if left := livePids(n); len(left) > 0 {
		sleepers(n)
		t.Errorf("processes left after the helper was killed: %v", left)
	}
}

// helperPids lists the sandbox helpers whose parent is ppid.
func helperPids(ppid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.HasPrefix(string(b), "coding-agent-sandbox\x00") {
			continue
		}
		st, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(st), ')')
		if f := strings.Fields(string(st[i+1:])); len(f) > 1 && f[1] == strconv.Itoa(ppid) {
			out = append(out, pid)
		}
	}
	return out
}
