//go:build linux

package sandbox

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sparePids returns the pids of the helpers s keeps ready.
func sparePids(s *Sandbox) []int {
	s.spareMu.Lock()
	defer s.spareMu.Unlock()
	var out []int
	for _, h := range s.spares.ready {
		out = append(out, h.cmd.Process.Pid)
	}
	return out
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

// waitFilled waits until s has stopped starting spare helpers.
func waitFilled(s *Sandbox) {
	for {
		s.spareMu.Lock()
		ch := s.spares.filling
		s.spareMu.Unlock()
		if ch == nil {
			return
		}
		<-ch
	}
}

// TestSpareHelper checks that a command runs in a helper started ahead of
// it, that spareCount helpers are kept ready, and that Close stops them.
func TestSpareHelper(t *testing.T) {
	testSandbox(t)
	ctx := context.Background()
	s := New(Options{})
	if err := s.Prewarm(ctx); err != nil {
		t.Fatal(err)
	}
	waitFilled(s)
	spares := sparePids(s)
	if len(spares) != spareCount {
		t.Fatalf("%d spare helpers ready, want %d", len(spares), spareCount)
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
	if c.Pid() != spares[0] {
		t.Errorf("the command ran in helper %d, not in the spare %d", c.Pid(), spares[0])
	}
	// The next spare starts refillDelay after the command; Prewarm starts
	// it now.
	if err := s.Prewarm(ctx); err != nil {
		t.Fatal(err)
	}
	waitFilled(s)
	next := sparePids(s)
	if len(next) != spareCount || slices.Contains(next, spares[0]) || !slices.Contains(next, spares[1]) {
		t.Fatalf("spares after the command: %v (before: %v)", next, spares)
	}
	if !gone(spares[0]) {
		t.Errorf("the used helper %d is still there", spares[0])
	}
	s.Close()
	for _, pid := range next {
		if !gone(pid) {
			t.Errorf("the spare %d survived Close", pid)
		}
	}
	// After Close commands still run, each in a helper of its own.
	c, err = s.Command(ctx, Policy{Preset: ReadOnly, WritableRoots: []string{f.ws}}, "cat file.txt", f.ws, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	if out, code, err := c.Output(); err != nil || code != 0 || string(out) != "hello\n" {
		t.Fatalf("after Close: %q, %d, %v", out, code, err)
	}
	waitFilled(s)
	if p := sparePids(s); len(p) != 0 {
		t.Errorf("spares %v were started after Close", p)
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

// TestSpareSeesLaterMounts: a mount made on the host after a spare helper
// started is seen by the command it runs, and the command's own mounts
// (its private /tmp) never reach the host.
func TestSpareSeesLaterMounts(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("mounting needs root")
	}
	testSandbox(t)
	ctx := context.Background()
	s := New(Options{})
	defer s.Close()
	if err := s.Prewarm(ctx); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, true)
	mnt := f.ws + "/mnt"
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	defer syscall.Unmount(mnt, syscall.MNT_DETACH)
	write(t, mnt+"/later", "mounted after the helper started\n")
	c, err := s.Command(ctx, Policy{Preset: WorkspaceWrite, WritableRoots: []string{f.ws}},
		"cat mnt/later && echo inside > mnt/written && mount -t tmpfs none /tmp 2>/dev/null; echo ok > /tmp/private", f.ws, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	out, code, err := c.Output()
	if err != nil || code != 0 || string(out) != "mounted after the helper started\n" {
		t.Fatalf("Output = %q, %d, %v: the host's later mount is not seen", out, code, err)
	}
	if read(mnt+"/written") != "inside\n" {
		t.Error("a write into the later mount did not reach the host")
	}
	if exists("/tmp/private") && read("/tmp/private") == "ok\n" {
		t.Error("the command's private /tmp reached the host")
	}
}

// TestCloseJoinsRefill: Close right after a command, while its refill is
// pending or a spare is starting, returns only once the goroutines that
// start spares have returned, and no spare is left. Without the join a
// spare started after Close would be found below.
func TestCloseJoinsRefill(t *testing.T) {
	testSandbox(t)
	ctx := context.Background()
	f := newFixture(t, true)
	for range 3 {
		s := New(Options{})
		c, err := s.Command(ctx, Policy{Preset: ReadOnly, WritableRoots: []string{f.ws}}, "true", f.ws, os.Environ())
		if err != nil {
			t.Fatal(err)
		}
		if _, code, err := c.Output(); err != nil || code != 0 {
			t.Fatalf("exit %d: %v", code, err)
		}
		// The command asked for a refill after refillDelay; start one now
		// too, so that Close meets a fill in progress as well.
		s.refill(c.b.(*linuxProc).kind)
		s.Close()
		s.spareMu.Lock()
		left, filling := len(s.spares.ready), s.spares.filling != nil
		s.spareMu.Unlock()
		if left != 0 || filling {
			t.Fatalf("after Close: %d spares ready, filling %v", left, filling)
		}
	}
}
