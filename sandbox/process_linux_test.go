//go:build linux

package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// childAgent is the agent process of TestAgentKilled: it starts a
// sandboxed command that leaves a detached daemon and a placeholder, says
// "ready" and waits to be killed with SIGKILL.
func childAgent() int {
	ws := os.Getenv("SANDBOX_TEST_AGENT")
	n, _ := strconv.Atoi(os.Getenv("SANDBOX_TEST_SLEEP"))
	exe, _ := os.Executable()
	script := fmt.Sprintf("setsid sleep %d >/dev/null 2>&1 & echo started; exec sleep %d", n, n+1)
	r, w, err := os.Pipe()
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	wait := func() {}
	if os.Getenv("SANDBOX_TEST_PLAIN") != "" {
		cmd := exec.Command("/bin/bash", "-c", script)
		cmd.Dir = ws
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Stdout = w
		err = cmd.Start()
		wait = func() { cmd.Wait() }
	} else {
		s := New(Options{KeepVisible: []string{filepath.Dir(exe)}})
		cmd, cerr := s.Command(context.Background(), Policy{Preset: WorkspaceWrite, WritableRoots: []string{ws},
			Protected: []string{ws + "/.agentdata"}}, script, ws, os.Environ())
		if cerr != nil {
			fmt.Println("error:", cerr)
			return 1
		}
		err = cmd.Start(w, w)
		wait = func() { cmd.Wait() }
	}
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	w.Close()
	line, _ := bufio.NewReader(r).ReadString('\n')
	fmt.Println("ready", strings.TrimSpace(line))
	wait()
	return 0
}

// TestAgentKilled kills the agent with SIGKILL while a sandboxed command
// runs, and checks on the host that no process of the command is left and
// that the workspace holds no stray file (placeholder). Without the
// sandbox the detached daemon survives, which shows that the check works.
func TestAgentKilled(t *testing.T) {
	testSandbox(t)
	for i, mode := range []string{"sandbox", "plain"} {
		t.Run(mode, func(t *testing.T) {
			f := newFixture(t, false)
			before := names(t, f.ws)
			n := sleepBase + 10 + 2*i
			exe, _ := os.Executable()
			c := exec.Command(exe)
			c.Env = append(os.Environ(), "SANDBOX_TEST_AGENT="+f.ws, "SANDBOX_TEST_SLEEP="+strconv.Itoa(n))
			if mode == "plain" {
				c.Env = append(c.Env, "SANDBOX_TEST_PLAIN=1")
			}
			out, err := c.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			line, _ := bufio.NewReader(out).ReadString('\n')
			if line != "ready started\n" {
				c.Process.Kill()
				c.Wait()
				t.Fatalf("child agent: %q", line)
			}
			if mode == "sandbox" && !slices.Contains(names(t, f.ws), ".agentdata") {
				t.Error("no placeholder for the missing protected .agentdata while the command runs")
			}
			// The command's helper (and spares, if any were started).
			helpers := helperPids(c.Process.Pid)
			if mode == "sandbox" && len(helpers) == 0 {
				t.Error("no sandbox helper found under the child agent")
			}
			c.Process.Kill()
			c.Wait()
			for _, pid := range helpers {
				if !gone(pid) {
					t.Errorf("helper %d survived the agent", pid)
				}
			}
			// The kernel tears the namespace down asynchronously: poll
			// /proc with a deadline.
			deadline := time.Now().Add(5 * time.Second)
			var left []int
			var stray []string
			for {
				left = livePids(n, n+1)
				stray = diff(names(t, f.ws), before)
				// The baseline waits for both sleeps to show up (they
				// may not have been exec'd yet; both are killed below),
				// the sandbox for them to go.
				done := len(left) == 0 && len(stray) == 0
				if mode == "plain" {
					done = len(left) == 2
				}
				if done || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond) // polling /proc: no event to wait for
			}
			sleepers(n)
			sleepers(n + 1)
			if mode == "sandbox" {
				if len(left) > 0 {
					t.Errorf("processes left after the agent was killed: %v", left)
				}
				if len(stray) > 0 {
					t.Errorf("stray files left in the workspace: %v", stray)
				}
			} else if len(left) == 0 {
				t.Error("baseline: the detached daemon did not survive without the sandbox; the check cannot fail")
			}
		})
	}
}

func livePids(ns ...int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		for _, n := range ns {
			if strings.Contains(string(b), "sleep\x00"+strconv.Itoa(n)+"\x00") {
				st, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
				if !strings.Contains(string(st), ") Z ") { // a zombie is dead already
					pid, _ := strconv.Atoi(e.Name())
					out = append(out, pid)
				}
			}
		}
	}
	return out
}

func names(t testing.TB, dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func diff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// TestCancelKillsTermIgnoringChild cancels a command whose child ignores
// SIGTERM: the whole tree must be gone within the grace period.
func TestCancelKillsTermIgnoringChild(t *testing.T) {
	testSandbox(t)
	for i, mode := range []string{"sandbox", "plain"} {
		t.Run(mode, func(t *testing.T) {
			f := newFixture(t, true)
			n := sleepBase + 20 + i
			script := fmt.Sprintf("bash -c \"trap '' TERM; sleep %d; true\" & setsid bash -c \"trap '' TERM; sleep %d\" >/dev/null 2>&1 & wait", n, n)
			r := run(t, mode, f, WorkspaceWrite, script, 300*time.Millisecond)
			left := sleepers(n)
			if mode == "plain" {
				if len(left) == 0 {
					t.Error("baseline: TERM-ignoring children died without the sandbox; the check cannot fail")
				}
				return
			}
			if len(left) > 0 {
				t.Errorf("processes left after cancel: %v", left)
			}
			if r.elapsed > 300*time.Millisecond+2*time.Second+time.Second {
				t.Errorf("cancel took %v, more than the timeout plus the grace", r.elapsed)
			}
		})
	}
}

// TestAllowed checks what must keep working inside the sandbox.
func TestAllowed(t *testing.T) {
	s := testSandbox(t)
	cases := []struct {
		name, script string
		preset       Preset
		check        func(f *fixture, r result) bool
	}{
		{"write in cwd", "echo ok > new.txt && mkdir -p d/e && echo ok > d/e/f && mv d d2 && rm -r d2 && echo ok >> file.txt", WorkspaceWrite,
			func(f *fixture, r result) bool {
				return read(f.ws+"/new.txt") == "ok\n" && read(f.ws+"/file.txt") == "hello\nok\n" && !exists(f.ws+"/d2")
			}},
		{"private /tmp and TMPDIR", `echo ok > /tmp/x && cat /tmp/x && echo ok > "$TMPDIR/y" && cat "$TMPDIR/y" && echo ok > /var/tmp/z && echo ok > /dev/shm/w`, ReadOnly,
			func(f *fixture, r result) bool { return r.code == 0 && r.out == "ok\nok\n" }},
		{"/dev/null", "echo x > /dev/null && echo ok", ReadOnly, func(f *fixture, r result) bool { return r.out == "ok\n" }},
		{"read everywhere", "head -c1 /etc/hostname >/dev/null && cat file.txt && git status --short && git log -1 2>&1 | head -0", ReadOnly,
			func(f *fixture, r result) bool { return r.code == 0 && strings.HasPrefix(r.out, "hello\n") }},
		{"stdin is /dev/null", "readlink /proc/self/fd/0", ReadOnly, func(f *fixture, r result) bool { return r.out == "/dev/null\n" }},
		{"exit code", "exit 7", ReadOnly, func(f *fixture, r result) bool { return r.code == 7 }},
		// Neither the agent's pidfd nor the helper's config reaches bash.
		// ls runs in a child that opened its redirection itself: bash then
		// holds no pipe of its own while ls lists its descriptors.
		{"no inherited descriptors", "ls /proc/$$/fd > /tmp/fds && tr '\\n' ' ' < /tmp/fds", ReadOnly, func(f *fixture, r result) bool { return r.out == "0 1 2 " }},
		{"killed by a signal", "kill -9 $$", ReadOnly, func(f *fixture, r result) bool { return r.code == 128+9 }},
		{"git in a nested repository reads", "cd sub && git status --short", ReadOnly, func(f *fixture, r result) bool { return r.code == 0 }},
	}
	_ = s
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, true)
			r := run(t, "sandbox", f, c.preset, c.script, 20*time.Second)
			if !c.check(f, r) {
				t.Errorf("exit %d:\n%s", r.code, r.out)
			}
		})
	}
}

// TestToolchains runs go build, go test (with a loopback server inside
// the sandbox), npm test and, when installed, python3 -m pytest, in the
// workspace.
func TestToolchains(t *testing.T) {
	testSandbox(t)
	t.Run("go", func(t *testing.T) {
		if _, err := exec.LookPath("go"); err != nil {
			t.Skip("go is not installed")
		}
		f := newFixture(t, true)
		write(t, f.ws+"/go.mod", "module example.com/tiny\n\ngo 1.21\n")
		write(t, f.ws+"/main.go", "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"built\") }\n")
		write(t, f.ws+"/main_test.go", `package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "pong") }))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "pong" {
		t.Fatal(string(b))
	}
}
`)
		// The build cache outside the workspace is configured as an extra
		// writable root, as a user would; a cold cache would rebuild the
		// standard library (minutes on two cores).
		out, err := exec.Command("go", "env", "GOCACHE").Output()
		if err != nil {
			t.Fatal(err)
		}
		gocache := strings.TrimSpace(string(out))
		s := New(Options{ExtraWritable: []string{gocache}})
		cmd, err := s.Command(context.Background(), Policy{Preset: WorkspaceWrite, WritableRoots: []string{f.ws}},
			"export GOTOOLCHAIN=local GOFLAGS=-mod=mod; go env GOCACHE; go build -o tiny . && ./tiny && go test -count=1 . 2>&1", f.ws,
			append(os.Environ(), "GOCACHE="+gocache))
		if err != nil {
			t.Fatal(err)
		}
		b, code, err := cmd.Output()
		r := result{out: string(b), code: code}
		if err != nil {
			r.code, r.out = -1, r.out+err.Error()
		}
		if !strings.HasPrefix(r.out, gocache+"\n") {
			t.Errorf("GOCACHE in a writable root was not kept:\n%s", r.out)
		}
		if r.code != 0 || !strings.Contains(r.out, "built") || !strings.Contains(r.out, "ok") {
			t.Fatalf("exit %d:\n%s", r.code, r.out)
		}
	})
	t.Run("npm", func(t *testing.T) {
		if _, err := exec.LookPath("npm"); err != nil {
			t.Skip("npm is not installed")
		}
		f := newFixture(t, true)
		write(t, f.ws+"/package.json", `{"name":"tiny","version":"1.0.0","scripts":{"test":"node -e \"require('fs').writeFileSync('npm-ran','yes')\""}}`)
		r := run(t, "sandbox", f, WorkspaceWrite, "npm test 2>&1", 60*time.Second)
		if r.code != 0 || read(f.ws+"/npm-ran") != "yes" {
			t.Fatalf("exit %d:\n%s", r.code, r.out)
		}
	})
	t.Run("pytest", func(t *testing.T) {
		// The python3 on PATH, or the system's (Debian's python3-pytest,
		// which CI installs, is for /usr/bin/python3).
		py := ""
		for _, c := range []string{"python3", "/usr/bin/python3"} {
			if p, err := exec.LookPath(c); err == nil && exec.Command(p, "-c", "import pytest").Run() == nil {
				py = p
				break
			}
		}
		if py == "" {
			t.Skip("pytest is not installed for python3 or /usr/bin/python3")
		}
		f := newFixture(t, true)
		write(t, f.ws+"/test_tiny.py", "def test_ok():\n    assert 1 + 1 == 2\n")
		r := run(t, "sandbox", f, WorkspaceWrite, py+" -m pytest -q 2>&1 && ls -d .pytest_cache", 60*time.Second)
		if r.code != 0 {
			t.Fatalf("exit %d:\n%s", r.code, r.out)
		}
	})
}

func write(t testing.TB, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWorkspaceUnderTmp covers a workspace below /tmp, which the sandbox
// makes private: the workspace is bound back, its protection holds, and
// the rest of the host's /tmp stays untouched.
func TestWorkspaceUnderTmp(t *testing.T) {
	s := testSandbox(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if out, err := sh(dir, "mkdir ws outside && echo orig > outside/existing && cd ws && git init -q . && echo hi > f"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	cmd, err := s.Command(context.Background(), Policy{Preset: WorkspaceWrite, WritableRoots: []string{ws}},
		"cat f && echo ok > new && echo x >> ../outside/existing; echo evil >> .git/config; ls ../outside", ws, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	out, _, _ := cmd.Output()
	if read(ws+"/new") != "ok\n" || read(dir+"/outside/existing") != "orig\n" || strings.Contains(read(ws+"/.git/config"), "evil") {
		t.Errorf("output:\n%s", out)
	}
	if !strings.HasPrefix(string(out), "hi\n") {
		t.Errorf("workspace content not visible:\n%s", out)
	}
}

// TestProtectedSymlinkRefused: a protected path that is a symlink makes
// Command refuse with an error naming it.
func TestProtectedSymlinkRefused(t *testing.T) {
	s := testSandbox(t)
	f := newFixture(t, false)
	if err := os.Symlink(f.out, f.ws+"/.git"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Command(context.Background(), Policy{Preset: WorkspaceWrite, WritableRoots: []string{f.ws}}, "true", f.ws, nil)
	if err == nil || !strings.Contains(err.Error(), f.ws+"/.git") || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("err = %v", err)
	}
	link := f.dir + "/datalink"
	os.Symlink(f.data, link)
	os.Remove(f.ws + "/.git")
	_, err = s.Command(context.Background(), Policy{Preset: WorkspaceWrite, WritableRoots: []string{f.ws}, Protected: []string{link}}, "true", f.ws, nil)
	if err == nil || !strings.Contains(err.Error(), link) {
		t.Fatalf("err = %v", err)
	}
}

// TestCommandErrors checks that bad policies are refused with an error
// naming what is wrong, and that nothing runs.
func TestCommandErrors(t *testing.T) {
	s := testSandbox(t)
	f := newFixture(t, true)
	cases := []struct {
		name string
		p    Policy
		dir  string
		want string
	}{
		{"relative dir", Policy{Preset: ReadOnly}, "ws", "dir"},
		{"missing dir", Policy{Preset: ReadOnly}, f.dir + "/nope", "dir"},
		{"full-access", Policy{Preset: "full-access"}, f.ws, "full-access"},
		{"empty preset", Policy{}, f.ws, "preset"},
		{"no roots", Policy{Preset: WorkspaceWrite}, f.ws, "writable root"},
		{"relative root", Policy{Preset: WorkspaceWrite, WritableRoots: []string{"ws"}}, f.ws, "writable root 0"},
		{"relative protected", Policy{Preset: WorkspaceWrite, WritableRoots: []string{f.ws}, Protected: []string{"data"}}, f.ws, "protected path 0"},
		{"root protected", Policy{Preset: WorkspaceWrite, WritableRoots: []string{f.ws}, Protected: []string{f.ws}}, f.ws, "protected"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.Command(context.Background(), c.p, "touch /tmp/never", c.dir, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to mention %q", err, c.want)
			}
		})
	}
}

// TestProbeCachedAndBounded: the probe result is cached per Sandbox, and a
// probe that cannot finish in time reports the timeout.
func TestProbe(t *testing.T) {
	s := testSandbox(t)
	a := s.Probe(context.Background())
	b := s.Probe(context.Background())
	if !reflect.DeepEqual(a, b) {
		t.Errorf("probe not cached: %+v vs %+v", a, b)
	}
	if a.Kind != KindLinux || a.LandlockABI < 1 || !a.Seccomp {
		t.Errorf("status = %+v", a)
	}
	if a.Took > 2*time.Second {
		t.Errorf("probe took %v, more than its bound", a.Took)
	}
	// A helper that never answers (this binary without MaybeRunHelper
	// would run its tests): use an executable that hangs.
	hang := filepath.Join(t.TempDir(), "hang")
	write(t, hang, "#!/bin/sh\nexec sleep 30\n")
	os.Chmod(hang, 0o755)
	slow := New(Options{Executable: hang, ProbeTimeout: 200 * time.Millisecond})
	t0 := time.Now()
	st := slow.Probe(context.Background())
	if st.Available && !st.Degraded {
		t.Errorf("a hanging helper must not give a full sandbox: %+v", st)
	}
	if time.Since(t0) > 2*time.Second {
		t.Errorf("probe took %v", time.Since(t0))
	}
	if !strings.Contains(st.Reason, "timed out") {
		t.Errorf("reason = %q", st.Reason)
	}
}

// TestDegradedTempRemovalIsConfined: the degraded mode removes its own
// private temp and nothing else (a marker next to it survives), and the
// helper refuses to remove a directory it did not create.
func TestDegradedTempRemovalIsConfined(t *testing.T) {
	marker := filepath.Join(os.TempDir(), "coding-agent-sbxtest-marker-"+strconv.Itoa(os.Getpid()))
	write(t, marker, "keep")
	defer os.Remove(marker)
	s := New(Options{Mode: "landlock-only"})
	if st := s.Probe(context.Background()); !st.Available {
		t.Fatalf("degraded probe: %+v", st)
	}
	if read(marker) != "keep" {
		t.Fatal("the degraded probe removed a file next to its temp directory")
	}
	for _, p := range []string{"/tmp", os.TempDir(), "/", "relative/" + tempPrefix + "x", filepath.Dir(marker)} {
		if ownTemp(p) {
			t.Errorf("ownTemp(%q) = true", p)
		}
	}
	own, err := os.MkdirTemp("", tempPrefix)
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(own)
	if !ownTemp(own) {
		t.Errorf("ownTemp(%q) = false", own)
	}
}
