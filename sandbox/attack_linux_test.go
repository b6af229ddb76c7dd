//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// hostEnv is what the attack suite sets up on the host once: directories,
// servers that count connections, the template workspace.
type hostEnv struct {
	base     string // not below a directory the sandbox makes private
	exe      string // this test binary, used as a tool inside the sandbox
	template string
	etcFile  string // a harmless file we create in /etc (root only)
	varTmp   string // a path in the host's /var/tmp
	devShm   string // a path in the host's /dev/shm

	tcp4, tcp6, udp                 string
	unixBase, unixTmp, unixRun, abs string
	hits                            atomic.Int64 // connections and datagrams, any server
	closers                         []func()
}

var (
	hostOnce sync.Once
	host     *hostEnv
	hostErr  error
	sbxOnce  sync.Once
	sbx      *Sandbox
	degOnce  sync.Once
	deg      *Sandbox
	seq      atomic.Int64
)

func testHost(t testing.TB) *hostEnv {
	t.Helper()
	hostOnce.Do(func() { host, hostErr = setupHost() })
	if hostErr != nil {
		t.Fatalf("host setup: %v", hostErr)
	}
	return host
}

func testSandbox(t testing.TB) *Sandbox {
	h := testHost(t)
	sbxOnce.Do(func() {
		sbx = New(Options{KeepVisible: []string{filepath.Dir(h.exe)}})
	})
	st := sbx.Probe(context.Background())
	if !st.Available || st.Degraded {
		t.Fatalf("the full sandbox is required for this test on this machine: %+v", st)
	}
	return sbx
}

// degradedSandbox is forced into the Landlock-only mode that is used when
// namespaces are unavailable.
func degradedSandbox(t testing.TB) *Sandbox {
	h := testHost(t)
	degOnce.Do(func() { deg = New(Options{Mode: "landlock-only", KeepVisible: []string{filepath.Dir(h.exe)}}) })
	st := deg.Probe(context.Background())
	if !st.Available || !st.Degraded || st.Kind != KindLandlockOnly {
		t.Fatalf("degraded sandbox: %+v", st)
	}
	return deg
}

func setupHost() (*hostEnv, error) {
	h := &hostEnv{}
	var err error
	if h.exe, err = os.Executable(); err != nil {
		return nil, err
	}
	base := os.Getenv("SANDBOX_TEST_BASE")
	if base == "" {
		parent := "/var/lib"
		if os.Getuid() != 0 {
			if parent, err = os.UserHomeDir(); err != nil {
				return nil, err
			}
		}
		if base, err = os.MkdirTemp(parent, "coding-agent-sbxtest-"); err != nil {
			return nil, err
		}
		h.closers = append(h.closers, func() { os.RemoveAll(base) })
	}
	h.base = base
	h.template = filepath.Join(base, "template")
	script := `set -e; mkdir -p ws/sub ws/src; cd ws; git init -q . ; echo hello > file.txt; echo x > src/a.go
		(cd sub && git init -q .); echo orig > sub/file.txt`
	if out, err := sh(h.template, script); err != nil {
		return nil, fmt.Errorf("template: %v %s", err, out)
	}
	pid := strconv.Itoa(os.Getpid())
	if os.Getuid() == 0 {
		h.etcFile = "/etc/coding-agent-sbxtest-" + pid
		if err := os.WriteFile(h.etcFile, []byte("orig\n"), 0o644); err != nil {
			return nil, err
		}
		h.closers = append(h.closers, func() { os.Remove(h.etcFile) })
	}
	h.varTmp = "/var/tmp/coding-agent-sbxtest-" + pid
	h.devShm = "/dev/shm/coding-agent-sbxtest-" + pid
	h.closers = append(h.closers, func() { os.Remove(h.varTmp); os.Remove(h.devShm) })

	listen := func(network, addr string) (string, error) {
		l, err := net.Listen(network, addr)
		if err != nil {
			return "", err
		}
		h.closers = append(h.closers, func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				h.hits.Add(1)
				c.Write([]byte("HELLO"))
				c.Close()
			}
		}()
		return l.Addr().String(), nil
	}
	if h.tcp4, err = listen("tcp4", "127.0.0.1:0"); err != nil {
		return nil, err
	}
	h.tcp6, _ = listen("tcp6", "[::1]:0") // optional: no IPv6 loopback
	h.unixBase = filepath.Join(base, "host.sock")
	if _, err = listen("unix", h.unixBase); err != nil {
		return nil, err
	}
	os.Chmod(h.unixBase, 0o777)
	tmpDir, err := os.MkdirTemp("", "coding-agent-sbxtest-sock-")
	if err != nil {
		return nil, err
	}
	os.Chmod(tmpDir, 0o755)
	h.closers = append(h.closers, func() { os.RemoveAll(tmpDir) })
	h.unixTmp = filepath.Join(tmpDir, "host.sock")
	if _, err = listen("unix", h.unixTmp); err != nil {
		return nil, err
	}
	os.Chmod(h.unixTmp, 0o777)
	if os.Getuid() == 0 { // like /run/docker.sock, /run/postgresql
		h.unixRun = "/run/coding-agent-sbxtest-" + pid + ".sock"
		if _, err = listen("unix", h.unixRun); err != nil {
			return nil, err
		}
		h.closers = append(h.closers, func() { os.Remove(h.unixRun) })
	}
	h.abs = "@coding-agent-sbxtest-" + pid
	if _, err = listen("unix", h.abs); err != nil {
		return nil, err
	}
	u, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h.udp = u.LocalAddr().String()
	h.closers = append(h.closers, func() { u.Close() })
	go func() {
		b := make([]byte, 64)
		for {
			_, from, err := u.ReadFrom(b)
			if err != nil {
				return
			}
			h.hits.Add(1)
			u.WriteTo([]byte("HELLO"), from)
		}
	}()
	return h, nil
}

// reset restores the shared host files that attacks target, so that one
// case's baseline breach does not look like another case's.
func (h *hostEnv) reset() {
	if h.etcFile != "" {
		os.WriteFile(h.etcFile, []byte("orig\n"), 0o644)
	}
	os.Remove(h.varTmp)
	os.Remove(h.devShm)
}

func cleanupTestGlobals() {
	if host != nil {
		for i := len(host.closers) - 1; i >= 0; i-- {
			host.closers[i]()
		}
	}
	removeTestAccount()
}

func sh(dir, script string) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	c := exec.Command("/bin/bash", "-c", script)
	c.Dir = dir
	return c.CombinedOutput()
}

// fixture is one fresh workspace: dir/ws (a git repository with a nested
// repository sub/), dir/outside, dir/home, dir/data (the agent's data
// directory).
type fixture struct {
	dir, ws, out, home, data string
}

func newFixture(t testing.TB, git bool) *fixture {
	t.Helper()
	h := testHost(t)
	dir := filepath.Join(h.base, "f"+strconv.FormatInt(seq.Add(1), 10))
	f := &fixture{dir: dir, ws: dir + "/ws", out: dir + "/outside", home: dir + "/home", data: dir + "/data"}
	script := "cp -a " + h.template + "/ws ws && mkdir -p outside home data tmp && echo orig > outside/existing && echo orig > data/config"
	if !git {
		script = "mkdir -p ws outside home data tmp && echo orig > outside/existing && echo orig > data/config"
	}
	if out, err := sh(dir, script); err != nil {
		t.Fatalf("fixture: %v %s", err, out)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return f
}

type result struct {
	code    int
	out     string
	elapsed time.Duration
}

// run runs script in f.ws, sandboxed ("sandbox") or not ("plain"), the way
// the bash tool does: own process group, stdin /dev/null, one pipe for
// output, SIGTERM on cancel then SIGKILL.
func run(t testing.TB, mode string, f *fixture, preset Preset, script string, timeout time.Duration) result {
	t.Helper()
	h := testHost(t)
	h.reset()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	env := append(os.Environ(), "HOME="+f.home, "EXE="+h.exe)
	var r result
	t0 := time.Now()
	switch mode {
	case "sandbox", "degraded":
		p := Policy{Preset: preset, WritableRoots: []string{f.ws}, Protected: []string{f.data, f.ws + "/.agentdata"}}
		s := testSandbox(t)
		if mode == "degraded" {
			s = degradedSandbox(t)
		}
		cmd, err := s.Command(ctx, p, script, f.ws, env)
		if err != nil {
			t.Fatalf("Command: %v", err)
		}
		out, code, err := cmd.Output()
		r = result{out: string(out), code: code, elapsed: time.Since(t0)}
		if err != nil {
			r.out += err.Error()
		}
	case "plain":
		cmd := exec.CommandContext(ctx, "/bin/bash", "-c", script)
		cmd.Dir = f.ws
		cmd.Env = append(env, "TMPDIR="+f.dir+"/tmp")
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
		cmd.WaitDelay = 2 * time.Second
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		out, err := cmd.CombinedOutput()
		r = result{out: string(out), elapsed: time.Since(t0)}
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			r.code = ee.ExitCode()
		case err != nil:
			r.code = -1
			r.out += err.Error()
		}
	}
	return r
}

// sleepers kills the `sleep N` processes on the host (the test started
// them) and returns their pids.
func sleepers(n int) []int {
	arg := "sleep\x00" + strconv.Itoa(n) + "\x00"
	return killProcs("cmdline", func(b []byte) bool { return strings.Contains(string(b), arg) })
}

var sleepBase = 800000 + os.Getpid()%100000

// detachMark is an environment entry that marks the processes of the
// detached-processes attack run in f: the sandboxed, plain and degraded
// runs go on at the same time and must not see each other's.
func detachMark(f *fixture) string { return "SBX_TEST_DETACHED=" + f.dir }

// killMarked kills the processes whose environment holds mark and returns
// their pids.
func killMarked(mark string) []int {
	return killProcs("environ", func(b []byte) bool { return slices.Contains(strings.Split(string(b), "\x00"), mark) })
}

// killProcs kills the processes (other than this one) whose /proc/PID/file
// matches and returns their pids.
func killProcs(file string, match func([]byte) bool) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/" + file); err == nil && match(b) {
			pids = append(pids, pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return pids
}

// attack is one attempt to break a protection. held reports, from the
// host, whether the protection held. The same check run without the
// sandbox must report a breach, which shows that it can detect one.
type attack struct {
	name    string
	preset  Preset // default WorkspaceWrite
	noGit   bool   // the workspace is not a git repository
	timeout time.Duration
	// serial cases use shared host state (server counters, files in
	// /etc, /var/tmp, /dev/shm) and do not run in parallel.
	serial bool
	// skip returns a reason to skip the case here (empty: run it).
	skip   func(h *hostEnv) string
	script func(f *fixture, h *hostEnv) string
	held   func(f *fixture, h *hostEnv, r result, before int64) bool
}

func unchanged(p string) func(f *fixture, h *hostEnv, r result, _ int64) bool {
	return func(f *fixture, h *hostEnv, r result, _ int64) bool { return read(p) == "orig\n" }
}

func noHits(f *fixture, h *hostEnv, r result, before int64) bool { return h.hits.Load() == before }

func rootOnly(h *hostEnv) string {
	if os.Getuid() != 0 {
		return "needs root on the host"
	}
	return ""
}

func attacks() []attack {
	return []attack{
		{name: "tcp4 to host loopback", serial: true, script: func(f *fixture, h *hostEnv) string {
			return "SANDBOX_TEST_TOOL=dial $EXE tcp4 " + h.tcp4 + "; exec 3<>/dev/tcp/127.0.0.1/" + port(h.tcp4) + " && head -c5 <&3"
		}, held: noHits},
		{name: "tcp6 to host loopback", serial: true, skip: func(h *hostEnv) string {
			if h.tcp6 == "" {
				return "no IPv6 loopback"
			}
			return ""
		}, script: func(f *fixture, h *hostEnv) string { return "SANDBOX_TEST_TOOL=dial $EXE tcp6 " + h.tcp6 }, held: noHits},
		{name: "udp to host loopback", serial: true, script: func(f *fixture, h *hostEnv) string { return "SANDBOX_TEST_TOOL=udp $EXE " + h.udp }, held: noHits},
		{name: "host unix socket (not in a private dir)", serial: true, script: func(f *fixture, h *hostEnv) string {
			return "SANDBOX_TEST_TOOL=dial $EXE unix " + h.unixBase
		}, held: noHits},
		{name: "host unix socket in /tmp", serial: true, script: func(f *fixture, h *hostEnv) string {
			return "SANDBOX_TEST_TOOL=dial $EXE unix " + h.unixTmp
		}, held: noHits},
		{name: "host unix socket in /run", serial: true, skip: rootOnly, script: func(f *fixture, h *hostEnv) string {
			return "SANDBOX_TEST_TOOL=dial $EXE unix " + h.unixRun
		}, held: noHits},
		{name: "host abstract unix socket", serial: true, script: func(f *fixture, h *hostEnv) string {
			return "SANDBOX_TEST_TOOL=dial $EXE unix " + h.abs
		}, held: noHits},
		{name: "AF_VSOCK socket", script: func(f *fixture, h *hostEnv) string { return "SANDBOX_TEST_TOOL=vsock $EXE" },
			held: func(f *fixture, h *hostEnv, r result, _ int64) bool { return !strings.Contains(r.out, "OK") }},
		{name: "io_uring", script: func(f *fixture, h *hostEnv) string { return "SANDBOX_TEST_TOOL=iouring $EXE" },
			held: func(f *fixture, h *hostEnv, r result, _ int64) bool { return !strings.Contains(r.out, "OK") }},
		{name: "write $HOME", script: func(f *fixture, h *hostEnv) string { return "echo x > $HOME/x; echo x > ~/.bashrc" },
			held: func(f *fixture, h *hostEnv, r result, _ int64) bool {
				return !exists(f.home+"/x") && !exists(f.home+"/.bashrc")
			}},
		{name: "write /etc", serial: true, skip: rootOnly, script: func(f *fixture, h *hostEnv) string { return "echo x >> " + h.etcFile },
			held: func(f *fixture, h *hostEnv, r result, _ int64) bool { return read(h.etcFile) == "orig\n" }},
		{name: "write /var/tmp", serial: true, script: func(f *fixture, h *hostEnv) string { return "echo x > " + h.varTmp },
			held: func(f *fixture, h *hostEnv, r result, _ int64) bool { return !exists(h.varTmp) }},
		{name: "write /dev/shm", serial: true, script: func(f *fixture, h *hostEnv) string { return "echo x > " + h.devShm },
			held: func(f *fixture, h *hostEnv, r result, _ int64) bool { return !exists(h.devShm) }},
		{name: "write the cwd's parent", script: func(f *fixture, h *hostEnv) string { return "echo x > ../parent-x; echo x >> ../outside/existing" },
			held: func(f *fixture, h *hostEnv, r result, _ int64) bool {
				return !exists(f.dir+"/parent-x") && read(f.out+"/existing") == "orig\n"
			}},
		{name: ".git/config", script: func(f *fixture, h *hostEnv) string { return "echo '[core] fsmonitor=evil' >> .git/config" },
			held: func(f *fixture, h *hostEnv, r result, _ int64) bool {
				return !strings.Contains(read(f.ws+"/.git/config"), "evil")
			}},
		{name: ".git/hooks/x", script: func(f *fixture, h *hostEnv) string { return "echo evil > .git/hooks/x" },
			held: func(f *fixture, h *hostEnv, r result, _ int64) bool { return !exists(f.ws + "/.git/hooks/x") }},
		{name: "rm -rf .git", script: func(f *fixture, h *hostEnv) string { return "rm -rf .git" },
			held: func(f *fixture, h *hostEnv, r result, _ int64) bool { return exists(f.ws + "/.git/HEAD") }},
		{name: "mv .git x then recreate", script: func(f *fixture, h *hostEnv) string {
			return "mv .git x; mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit"
		}, held: func(f *fixture, h *hostEnv, r result, _ int64) bool {
			return exists(f.ws+"/.git/HEAD") && !exists(f.ws+"/x") && !exists(f.ws+"/.git/hooks/pre-commit")
		}},
		{name: "git init in a subdirectory", script: func(f *fixture, h *hostEnv) string {
			return "mkdir -p newsub && cd newsub && git init -q . && git config core.fsmonitor evil"
		}, held: func(f *fixture, h *hostEnv, r result, _ int64) bool { return !exists(f.ws + "/newsub/.git") }},
		// The check runs after the command; a .git the command created
		// would be renamed by the backstop quarantine, so its quarantined
		// name counts as a breach too (TestGitGuard checks while it runs).
		{name: "create .git at any depth, not only quarantined afterwards", script: func(f *fixture, h *hostEnv) string {
			return "cd src && mkdir -p g m r/p && git init -q g; mkdir -p m/.GIT; echo 'gitdir: ..' > m/.git; mv r/p r/.git; ln -s .. m/.Git"
		}, held: func(f *fixture, h *hostEnv, r result, _ int64) bool {
			for _, p := range []string{"g/.git", "m/.GIT", "m/.git", "r/.git", "m/.Git"} {
				if exists(f.ws+"/src/"+p) || exists(f.ws+"/src/"+p+quarantineSuffix) {
					return false
				}
			}
			return true
		}},
		{name: "git init at the root of a non-repository", noGit: true, script: func(f *fixture, h *hostEnv) string {
			return "git init -q .; mkdir .git; echo 'gitdir: /x' > .git"
		}, held: func(f *fixture, h *hostEnv, r result, _ int64) bool { return !exists(f.ws + "/.git") }},
		{name: "nested sub/.git/config", script: func(f *fixture, h *hostEnv) string { return "echo evil >> sub/.git/config" },
			held: func(f *fixture, h *hostEnv, r result, _ int64) bool {
				return !strings.Contains(read(f.ws+"/sub/.git/config"), "evil")
			}},
		{name: "rename the parent of a nested .git", script: func(f *fixture, h *hostEnv) string {
			return "mv sub sub2; mkdir -p sub/.git && echo evil > sub/.git/config"
		}, held: func(f *fixture, h *hostEnv, r result, _ int64) bool {
			return exists(f.ws+"/sub/.git/HEAD") && !exists(f.ws+"/sub2") && !strings.Contains(read(f.ws+"/sub/.git/config"), "evil")
		}},
		{name: "write the agent data dir", script: func(f *fixture, h *hostEnv) string { return "echo evil >> " + f.data + "/config" },
			held: unchanged(""), // replaced below
		},
		{name: "create a missing protected path in the workspace", script: func(f *fixture, h *hostEnv) string {
			return "mkdir -p .agentdata && echo evil > .agentdata/config"
		}, held: func(f *fixture, h *hostEnv, r result, _ int64) bool { return !exists(f.ws + "/.agentdata") }},
		{name: "symlink to an outside file", script: func(f *fixture, h *hostEnv) string {
			return "ln -s " + f.out + "/existing lnk; echo x >> lnk; ln -s .git/config gl; echo evil >> gl"
		}, held: func(f *fixture, h *hostEnv, r result, _ int64) bool {
			return read(f.out+"/existing") == "orig\n" && !strings.Contains(read(f.ws+"/.git/config"), "evil")
		}},
		{name: "hardlink to an outside file", script: func(f *fixture, h *hostEnv) string {
			return "ln " + f.out + "/existing hl; echo x >> hl; ln .git/config hl2; echo evil >> hl2"
		}, held: func(f *fixture, h *hostEnv, r result, _ int64) bool {
			return read(f.out+"/existing") == "orig\n" && !strings.Contains(read(f.ws+"/.git/config"), "evil")
		}},
		{name: "/proc/self/root", script: func(f *fixture, h *hostEnv) string {
			return "echo evil >> /proc/self/root" + f.ws + "/.git/config; echo x >> /proc/self/root" + f.out + "/existing; echo evil >> /proc/self/cwd/.git/config"
		}, held: func(f *fixture, h *hostEnv, r result, _ int64) bool {
			return read(f.out+"/existing") == "orig\n" && !strings.Contains(read(f.ws+"/.git/config"), "evil")
		}},
		{name: "umount and remount", script: func(f *fixture, h *hostEnv) string {
			return "umount -l .git; mount -o remount,rw .git; mount -o remount,rw /; echo evil >> .git/config; echo x >> " + f.out + "/existing"
		}, held: func(f *fixture, h *hostEnv, r result, _ int64) bool {
			return read(f.out+"/existing") == "orig\n" && !strings.Contains(read(f.ws+"/.git/config"), "evil")
		}},
		{name: "nested unshare", script: func(f *fixture, h *hostEnv) string {
			return "unshare -Urm bash -c 'umount -l .git; echo evil >> .git/config; echo x >> " + f.out + "/existing'"
		}, held: func(f *fixture, h *hostEnv, r result, _ int64) bool {
			return read(f.out+"/existing") == "orig\n" && !strings.Contains(read(f.ws+"/.git/config"), "evil")
		}},
		{name: "ptrace the agent", serial: true, script: func(f *fixture, h *hostEnv) string {
			return "SANDBOX_TEST_TOOL=seize $EXE " + strconv.Itoa(os.Getpid())
		}, held: func(f *fixture, h *hostEnv, r result, _ int64) bool { return !strings.Contains(r.out, "OK") }},
		{name: "secrets in the environment", script: func(f *fixture, h *hostEnv) string {
			return "env; cat /proc/" + strconv.Itoa(os.Getpid()) + "/environ /proc/1/environ /proc/$PPID/environ 2>&1 | tr '\\0' '\\n'"
		}, held: func(f *fixture, h *hostEnv, r result, _ int64) bool { return !strings.Contains(r.out, testSecret) }},
		{name: "capabilities", skip: rootOnly, script: func(f *fixture, h *hostEnv) string { return "grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status" },
			held: func(f *fixture, h *hostEnv, r result, _ int64) bool {
				return strings.Count(r.out, "0000000000000000") == 3
			}},
		// The processes are found by a variable in their environment, which
		// they have from their fork on: looking for `sleep N` would miss
		// one that has not exec'd sleep yet (and leave it running).
		{name: "setsid daemon and double fork", script: func(f *fixture, h *hostEnv) string {
			return fmt.Sprintf("export %s; setsid sleep %d >/dev/null 2>&1 & (sleep %d >/dev/null 2>&1 &) ; nohup sleep %d >/dev/null 2>&1 & disown; true",
				detachMark(f), sleepBase+1, sleepBase+2, sleepBase+3)
		}, held: func(f *fixture, h *hostEnv, r result, _ int64) bool {
			return len(killMarked(detachMark(f))) == 0
		}},
		{name: "read-only preset: workspace", preset: ReadOnly, script: func(f *fixture, h *hostEnv) string {
			return "echo x > new.txt; echo x >> file.txt; rm -f file.txt; echo x > $TMPDIR/../escape"
		}, held: func(f *fixture, h *hostEnv, r result, _ int64) bool {
			return !exists(f.ws+"/new.txt") && read(f.ws+"/file.txt") == "hello\n"
		}},
	}
}

func port(addr string) string { _, p, _ := net.SplitHostPort(addr); return p }

func TestAttacks(t *testing.T) {
	h := testHost(t)
	testSandbox(t)
	for _, a := range attacks() {
		if a.name == "write the agent data dir" {
			a.held = func(f *fixture, h *hostEnv, r result, _ int64) bool { return read(f.data+"/config") == "orig\n" }
		}
		if a.preset == "" {
			a.preset = WorkspaceWrite
		}
		if a.timeout == 0 {
			a.timeout = 20 * time.Second
		}
		t.Run(a.name, func(t *testing.T) {
			if a.skip != nil {
				if why := a.skip(h); why != "" {
					t.Skip(why)
				}
			}
			if !a.serial {
				t.Parallel()
			}
			for _, mode := range []string{"sandbox", "plain"} {
				f := newFixture(t, !a.noGit)
				before := h.hits.Load()
				r := run(t, mode, f, a.preset, a.script(f, h), a.timeout)
				held := a.held(f, h, r, before)
				switch {
				case mode == "sandbox" && !held:
					t.Errorf("BREACH in the sandbox (exit %d):\n%s", r.code, r.out)
				case mode == "plain" && held:
					if os.Getuid() != 0 && (a.name == "capabilities" || a.name == "ptrace the agent") {
						continue // a non-root baseline holds these by itself
					}
					t.Errorf("baseline without the sandbox did not detect a breach: the check cannot fail (exit %d):\n%s", r.code, r.out)
				}
				if mode == "sandbox" && t.Failed() {
					return
				}
			}
		})
	}
}

// degradedGaps are the attacks that the degraded mode does not stop, as
// its probe announces: without a mount namespace, host pathname unix
// sockets stay reachable (Landlock ABI < 9).
var degradedGaps = []string{"host unix socket (not in a private dir)", "host unix socket in /tmp", "host unix socket in /run"}

// TestAttacksDegraded runs the attack suite in the Landlock-only mode. The
// known gaps must still be gaps (if one closes, update the announcement).
func TestAttacksDegraded(t *testing.T) {
	h := testHost(t)
	degradedSandbox(t)
	for _, a := range attacks() {
		if a.name == "write the agent data dir" {
			a.held = func(f *fixture, h *hostEnv, r result, _ int64) bool { return read(f.data+"/config") == "orig\n" }
		}
		if a.preset == "" {
			a.preset = WorkspaceWrite
		}
		t.Run(a.name, func(t *testing.T) {
			if a.skip != nil {
				if why := a.skip(h); why != "" {
					t.Skip(why)
				}
			}
			if !a.serial {
				t.Parallel()
			}
			f := newFixture(t, !a.noGit)
			before := h.hits.Load()
			r := run(t, "degraded", f, a.preset, a.script(f, h), 20*time.Second)
			held := a.held(f, h, r, before)
			gap := slices.Contains(degradedGaps, a.name)
			switch {
			case !held && !gap:
				t.Errorf("BREACH in the degraded sandbox (exit %d):\n%s", r.code, r.out)
			case held && gap:
				t.Errorf("a documented gap of the degraded mode is closed now; update degradedGaps and the probe's reason")
			}
		})
	}
}

// TestGitdirFileProtected: a `.git` file (a worktree) points at a gitdir
// in another writable root; the gitdir and its common dir stay read-only.
func TestGitdirFileProtected(t *testing.T) {
	testSandbox(t)
	for _, mode := range []string{"sandbox", "plain"} {
		t.Run(mode, func(t *testing.T) {
			f := newFixture(t, true)
			repo := f.dir + "/repo"
			if out, err := sh(repo, "git init -q . && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m x && git worktree add -q "+f.ws+"/wt 2>&1"); err != nil {
				t.Fatalf("%v %s", err, out)
			}
			gitdir := strings.TrimSpace(strings.TrimPrefix(read(f.ws+"/wt/.git"), "gitdir:"))
			script := "echo evil >> " + gitdir + "/HEAD; echo evil > " + repo + "/.git/hooks/pre-commit; echo evil >> wt/.git"
			var r result
			if mode == "sandbox" {
				ctx := context.Background()
				p := Policy{Preset: WorkspaceWrite, WritableRoots: []string{f.ws, repo}}
				cmd, err := testSandbox(t).Command(ctx, p, script, f.ws, os.Environ())
				if err != nil {
					t.Fatal(err)
				}
				out, _, _ := cmd.Output()
				r.out = string(out)
			} else {
				r = run(t, "plain", f, WorkspaceWrite, script, 10*time.Second)
			}
			held := !strings.Contains(read(gitdir+"/HEAD"), "evil") && !exists(repo+"/.git/hooks/pre-commit") && !strings.Contains(read(f.ws+"/wt/.git"), "evil")
			if mode == "sandbox" && !held {
				t.Errorf("BREACH:\n%s", r.out)
			}
			if mode == "plain" && held {
				t.Errorf("baseline detected no breach:\n%s", r.out)
			}
		})
	}
}
