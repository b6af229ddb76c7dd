//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// helperArg is argv[1] of the re-executed helper.
const helperArg = "__coding-agent-sandbox-helper"

// helperSocketFD is the helper's end of the socket to the parent: the
// request comes in on it, the status goes out.
const helperSocketFD = 3

// Exit codes of the helper when the sandbox could not be set up.
const (
	exitSetup = 125 // a sandbox step failed; nothing ran
	exitExec  = 126 // bash could not be started
)

// helperConfig is what the parent tells the helper; JSON on fd 3.
type helperConfig struct {
	Script     string   `json:"script"`
	Dir        string   `json:"dir"`
	Env        []string `json:"env"`
	Preset     Preset   `json:"preset"`
	Roots      []string `json:"roots"`
	Visible    []string `json:"visible"`
	Keep       []string `json:"keep"`
	Protected  []string `json:"protected"`
	Missing    []string `json:"missing"`
	Pins       []string `json:"pins"`
	Sockets    []string `json:"sockets"`
	Namespaces bool     `json:"namespaces"`
	// Temp is the private temp in degraded mode (a host directory); in
	// full mode it is a tmpfs at PrivateTemp.
	Temp string `json:"temp,omitempty"`
}

// MaybeRunHelper runs the sandbox helper and exits when the process was
// re-executed as one (argv[1] is the helper marker); otherwise it returns
// at once. Call it first in main, and in TestMain of test binaries that
// run sandboxed commands.
func MaybeRunHelper() {
	if len(os.Args) == 3 && os.Args[1] == helperArg {
		os.Exit(helperMain(os.Args[2] == helperNamespaces))
	}
}

// argv[2] of the helper: whether it was started in new namespaces.
const (
	helperNamespaces   = "namespaces"
	helperNoNamespaces = "no-namespaces"
)

func (s *Sandbox) probe(ctx context.Context) Status {
	st := Status{Kind: KindNone, LandlockABI: landlockABI(), Seccomp: seccompAvailable()}
	if st.LandlockABI == 0 {
		st.Missing = append(st.Missing, "landlock")
	}
	if !st.Seccomp {
		st.Missing = append(st.Missing, "seccomp")
	}
	if len(st.Missing) > 0 {
		st.Reason = "the kernel lacks " + strings.Join(st.Missing, " and ") +
			" (need Linux >= 5.13 with landlock in the LSM list and seccomp filters)"
		return st
	}
	if s.opts.Mode != "landlock-only" {
		var errs []string
		for _, userns := range nsChoices() {
			err := s.probeRun(ctx, userns)
			if err == nil {
				st.Available, st.Kind = true, KindLinux
				st.Namespaces = map[bool]string{true: "userns", false: "root-no-userns"}[userns]
				return st
			}
			errs = append(errs, err.Error())
		}
		st.Missing = append(st.Missing, "namespaces")
		st.Reason = "namespaces unavailable: " + strings.Join(errs, "; ")
		if s.opts.Mode == "full" {
			return st
		}
	}
	if err := s.probeRun(ctx, false); err != nil {
		st.Reason = strings.TrimPrefix(st.Reason+"; ", "; ") + "the Landlock-only helper failed too: " + err.Error()
		return st
	}
	st.Available, st.Kind, st.Degraded = true, KindLandlockOnly, true
	st.Reason = strings.TrimPrefix(st.Reason+"; ", "; ") + "DEGRADED: no network, PID or mount namespaces; " +
		"Landlock protects files (no new top-level entries in protected directories' parents), " +
		"seccomp allows only unix sockets (no loopback servers), host unix sockets stay reachable, " +
		"detached processes are killed by a subreaper"
	return st
}

// nsChoices lists the namespace setups to try: with a user namespace, and
// as root also without one.
func nsChoices() []bool {
	if os.Getuid() == 0 {
		return []bool{true, false}
	}
	return []bool{true}
}

// probeRun runs the real helper once with `true` under the read-only
// preset; namespaces selects full mode (userns: with a user namespace).
func (s *Sandbox) probeRun(ctx context.Context, userns bool) error {
	dir := "/"
	cfg := helperConfig{Script: "true", Dir: dir, Env: []string{"PATH=/usr/bin:/bin"}, Preset: ReadOnly,
		Namespaces: s.opts.Mode != "landlock-only" && (userns || os.Getuid() == 0)}
	if s.opts.Mode == "landlock-only" || (!userns && os.Getuid() != 0) {
		cfg.Namespaces = false
		temp, err := os.MkdirTemp("", tempPrefix)
		if err != nil {
			return fmt.Errorf("private temp: %w", err)
		}
		defer os.RemoveAll(temp)
		cfg.Temp = temp
	}
	p := &linuxProc{s: s, cfg: &cfg, kind: helperKind{namespaces: cfg.Namespaces, userns: userns && cfg.Namespaces}, noSpare: true}
	// The probe has no grace: at its deadline the helper is killed.
	c := &Cmd{ctx: ctx, b: p, stop: make(chan struct{}), grace: -1}
	out, code, err := c.Output()
	if err == nil && code != 0 {
		err = fmt.Errorf("exit status %d", code)
	}
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("probe timed out: %w", ctx.Err())
		}
		return fmt.Errorf("%s%s", explain(err), strings.TrimSpace(" "+string(out)))
	}
	return nil
}

// explain turns a clone error into advice.
func explain(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "user namespaces disabled (user.max_user_namespaces=0 or nesting limit)"
	case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.EACCES):
		return "namespace creation not permitted (kernel.unprivileged_userns_clone=0, an AppArmor userns restriction, or a container seccomp profile)"
	case errors.Is(err, syscall.EINVAL):
		return "the kernel lacks namespace support"
	}
	return err.Error()
}

func (s *Sandbox) command(ctx context.Context, st Status, pl *plan, script string, env []string) (backend, error) {
	cfg := &helperConfig{
		Script: script, Dir: pl.dir, Preset: pl.preset, Roots: pl.roots, Visible: pl.visible,
		Keep: s.opts.KeepVisible, Protected: pl.protected, Missing: pl.missing, Pins: pl.pins,
		Namespaces: st.Kind == KindLinux,
	}
	p := &linuxProc{s: s, cfg: cfg, pl: pl, kind: helperKind{namespaces: cfg.Namespaces, userns: st.Namespaces == "userns"}}
	temp := PrivateTemp
	if !cfg.Namespaces {
		d, err := os.MkdirTemp("", tempPrefix)
		if err != nil {
			return nil, fmt.Errorf("sandbox: private temp: %w", err)
		}
		p.temp = d
		cfg.Temp, temp = d, d
	}
	cfg.Env = sandboxEnv(env, s.opts.EnvAllow, pl.roots, temp)
	return p, nil
}

// spares are the helpers a Sandbox keeps started ahead of the next
// commands.
type spares struct {
	// wg joins the goroutines that start spares: fill and refiller.
	wg sync.WaitGroup
	// kick asks refiller for a spare of that kind, after refillDelay;
	// stop ends refiller (closeSpare). Made when refiller starts.
	kick chan helperKind
	stop chan struct{}

	ready []*helperProc
	// filling is closed when the helper being started (of fillKind) is
	// ready or failed to start; nil when none is being started.
	filling  chan struct{}
	fillKind helperKind
	closed   bool
}

// helperKind is how a helper was started; a spare helper serves only
// commands of its kind.
type helperKind struct{ namespaces, userns bool }

// helperProc is a started helper waiting for (or running) its command.
// The parent talks to it over a stream socket on the helper's fd 3. The
// helper sends a ready byte once set up; the parent sends one request (a
// byte carrying the command's stdout and stderr, then the JSON config up
// to EOF); the helper answers with one status line, bash's exit code,
// written once nothing of the command is left.
type helperProc struct {
	kind    helperKind
	cmd     *exec.Cmd
	sock    int  // the parent's end of the socket
	readied bool // its ready byte was read
	// mounts watches the agent's mount table from before the helper
	// copied it (a spare's), -1 if not watched.
	mounts int
}

// startHelper starts a helper of kind k that waits for its request.
func (s *Sandbox) startHelper(k helperKind) (*helperProc, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: socketpair: %w", err)
	}
	child := os.NewFile(uintptr(fds[1]), "sandbox-request")
	defer child.Close()
	// The helper learns of the agent's death through a pidfd of the agent
	// on fd 4, not through Pdeathsig: in a new PID namespace Go's child
	// sees getppid() == 0 and signals itself at once, and Pdeathsig fires
	// when the forking thread, not the process, exits.
	pidfd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		unix.Close(fds[0])
		return nil, fmt.Errorf("sandbox: pidfd_open: %w", err)
	}
	agent := os.NewFile(uintptr(pidfd), "agent-pidfd")
	defer agent.Close()
	exe := s.opts.Executable
	if exe == "" {
		exe = "/proc/self/exe"
	}
	arg := helperNoNamespaces
	if k.namespaces {
		arg = helperNamespaces
	}
	cmd := exec.Command(exe, helperArg, arg)
	cmd.Args[0] = "coding-agent-sandbox"
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.ExtraFiles = []*os.File{child, agent}
	// Its own process group: the bash tool signals the group, and the
	// helper passes a SIGTERM on to every process of the sandbox.
	attr := &syscall.SysProcAttr{Setpgid: true}
	if k.namespaces {
		attr.Cloneflags = syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET |
			syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS
		uid, gid := os.Getuid(), os.Getgid()
		if k.userns || uid != 0 {
			attr.Cloneflags |= syscall.CLONE_NEWUSER
			if uid == 0 {
				// Identity map of the whole range: ownership looks unchanged.
				attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
				attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
			} else {
				// Keep our own ids; a non-zero uid loses its capabilities
				// at execve, so the helper carries the ones it needs as
				// ambient capabilities and drops them before bash.
				attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
				attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
				attr.GidMappingsEnableSetgroups = false
				attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP}
			}
		}
	}
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		unix.Close(fds[0])
		return nil, err
	}
	return &helperProc{kind: k, cmd: cmd, sock: fds[0], mounts: -1}, nil
}

// watchMounts returns a descriptor that reports (POLLPRI) any mount or
// unmount in the agent's mount namespace after this call, or -1.
func watchMounts() int {
	fd, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			unix.Close(fd)
			return -1
		}
		if n == 0 {
			return fd
		}
	}
}

// stale reports whether the agent's mount table changed since the spare
// copied it: a host mount made since would be missing from the sandbox
// (unless propagated), and a write under it would land in the directory
// it hides.
func (h *helperProc) stale() bool {
	if h.mounts < 0 {
		return true
	}
	fds := []unix.PollFd{{Fd: int32(h.mounts), Events: unix.POLLPRI}}
	n, err := unix.Poll(fds, 0)
	return err != nil || (n > 0 && fds[0].Revents&(unix.POLLPRI|unix.POLLERR) != 0)
}

// release closes what the parent holds for a helper besides its socket.
func (h *helperProc) release() {
	if h.mounts >= 0 {
		unix.Close(h.mounts)
		h.mounts = -1
	}
}

// send hands the helper its command: stdout and stderr, then the config.
func (h *helperProc) send(cfg []byte, stdout, stderr *os.File) error {
	rights := unix.UnixRights(int(stdout.Fd()), int(stderr.Fd()))
	if err := unix.Sendmsg(h.sock, []byte{'R'}, rights, nil, 0); err != nil {
		return err
	}
	for len(cfg) > 0 {
		n, err := unix.Write(h.sock, cfg)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		cfg = cfg[n:]
	}
	return unix.Shutdown(h.sock, unix.SHUT_WR)
}

// helperReady is the byte a helper sends when it is ready for its
// command, before the status line.
const helperReady = 'r'

// awaitReady waits until the helper is ready for its command.
func (h *helperProc) awaitReady() error {
	b := make([]byte, 1)
	for {
		n, err := unix.Read(h.sock, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n != 1 || b[0] != helperReady {
			return errors.New("the helper exited before it was ready")
		}
		h.readied = true
		return nil
	}
}

// discard stops a helper that got no command: it exits when its socket
// closes.
func (h *helperProc) discard() {
	h.release()
	unix.Close(h.sock)
	go h.cmd.Wait()
}

// refillDelay is how long after a command the next spare helper starts.
const refillDelay = 50 * time.Millisecond

// spareCount is how many helpers a Sandbox keeps started: two, so that
// the second of two commands that follow each other at once (calls of one
// model message) finds one ready too.
const spareCount = 2

// takeSpare returns a spare helper of kind k, waiting for one being
// started (it is ready sooner than a helper started now), or nil.
func (s *Sandbox) takeSpare(k helperKind) *helperProc {
	s.spareMu.Lock()
	defer s.spareMu.Unlock()
	for {
		sp := &s.spares
		for i, h := range sp.ready {
			if h.kind != k {
				continue
			}
			sp.ready = slices.Delete(sp.ready, i, i+1)
			if h.stale() {
				h.discard()
				break // the slice changed: look again
			}
			h.release()
			return h
		}
		if slices.ContainsFunc(sp.ready, func(h *helperProc) bool { return h.kind == k }) {
			continue
		}
		if sp.filling == nil || sp.fillKind != k {
			return nil
		}
		ch := sp.filling
		s.spareMu.Unlock()
		<-ch
		s.spareMu.Lock()
	}
}

// refill starts spare helpers of kind k in the background, one after the
// other, until spareCount are ready: the next commands then skip the
// helper's start (its exec and the Go runtime's start, most of the
// sandbox's cost).
func (s *Sandbox) refill(k helperKind) {
	s.spareMu.Lock()
	defer s.spareMu.Unlock()
	sp := &s.spares
	if sp.closed || sp.filling != nil || len(sp.ready) >= spareCount {
		return
	}
	sp.filling, sp.fillKind = make(chan struct{}), k
	sp.wg.Add(1)
	go s.fill(k)
}

// refillLater asks for spares of kind k once refillDelay has passed: the
// next helper starts a little after a command, not while the command runs
// nor while its caller handles the result, since on a small machine it
// would take the CPU from them. The delay is only that: no order depends
// on it. One goroutine, refiller, owned by the Sandbox and joined by
// closeSpare, waits out the delays.
func (s *Sandbox) refillLater(k helperKind) {
	s.spareMu.Lock()
	defer s.spareMu.Unlock()
	sp := &s.spares
	if sp.closed {
		return
	}
	if sp.kick == nil {
		sp.kick, sp.stop = make(chan helperKind, 1), make(chan struct{})
		sp.wg.Add(1)
		go s.refiller(sp.kick, sp.stop)
	}
	select {
	case sp.kick <- k:
	default: // one is pending already
	}
}

func (s *Sandbox) refiller(kick <-chan helperKind, stop <-chan struct{}) {
	defer s.spares.wg.Done()
	t := time.NewTimer(refillDelay)
	t.Stop()
	defer t.Stop()
	for {
		var k helperKind
		select {
		case <-stop:
			return
		case k = <-kick:
		}
		t.Reset(refillDelay)
		select {
		case <-stop:
			return
		case <-t.C:
		}
		s.refill(k)
	}
}

// fill is refill's goroutine.
func (s *Sandbox) fill(k helperKind) {
	defer s.spares.wg.Done()
	for {
		// Watched from before the helper copies the mount table.
		mounts := watchMounts()
		h, err := s.startHelper(k)
		if err != nil {
			if mounts >= 0 {
				unix.Close(mounts)
			}
		} else {
			h.mounts = mounts
			if err = h.awaitReady(); err != nil {
				h.discard()
			}
		}
		s.spareMu.Lock()
		sp := &s.spares
		switch {
		case err != nil:
			s.log.Debug("sandbox: starting a spare helper failed", "err", err)
		case sp.closed:
			h.discard()
		default:
			// Spares of another kind are of no use any more.
			for _, old := range sp.ready {
				if old.kind != k {
					old.discard()
				}
			}
			sp.ready = slices.DeleteFunc(sp.ready, func(o *helperProc) bool { return o.kind != k })
			sp.ready = append(sp.ready, h)
		}
		// Wake the commands waiting for this helper.
		close(sp.filling)
		if err != nil || sp.closed || len(sp.ready) >= spareCount {
			sp.filling = nil
			s.spareMu.Unlock()
			return
		}
		sp.filling = make(chan struct{})
		s.spareMu.Unlock()
	}
}

// prewarm starts spare helpers for commands under st and waits until they
// are ready.
func (s *Sandbox) prewarm(ctx context.Context, st Status) error {
	k := helperKind{namespaces: st.Kind == KindLinux, userns: st.Namespaces == "userns"}
	s.refill(k)
	for {
		s.spareMu.Lock()
		sp := &s.spares
		ready := len(sp.ready)
		ch := sp.filling
		s.spareMu.Unlock()
		if ch == nil {
			if ready == 0 {
				return errors.New("sandbox: the helper could not be started ahead")
			}
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// closeSpare discards the spare helpers, stops starting new ones and
// waits until the goroutines that start them have returned.
func (s *Sandbox) closeSpare() {
	s.spareMu.Lock()
	sp := &s.spares
	if !sp.closed {
		sp.closed = true
		if sp.stop != nil {
			close(sp.stop)
		}
	}
	for _, h := range sp.ready {
		h.discard()
	}
	sp.ready = nil
	s.spareMu.Unlock()
	sp.wg.Wait()
}

// linuxProc is one sandboxed command on Linux.
type linuxProc struct {
	s    *Sandbox
	cfg  *helperConfig
	pl   *plan // nil for the probe
	kind helperKind
	temp string // degraded mode's private temp on the host
	// noSpare: do not use or start spare helpers (the probe).
	noSpare bool

	h        *helperProc
	statusC  chan struct{} // closed once the status line or EOF was read
	code     int
	statusOK bool
	endOnce  sync.Once
	reaped   chan struct{} // closed once the helper was reaped
	waitErr  error
}

func (p *linuxProc) start(stdout, stderr *os.File) error {
	if p.cfg.Namespaces {
		// Read now: the sockets the command must not reach.
		p.cfg.Sockets = hostUnixSockets()
	}
	js, err := json.Marshal(p.cfg)
	if err != nil {
		return err
	}
	var h *helperProc
	if !p.noSpare {
		h = p.s.takeSpare(p.kind)
	}
	if h != nil && h.send(js, stdout, stderr) != nil {
		h.discard() // the spare died meanwhile: start a fresh helper
		h = nil
	}
	if h == nil {
		if h, err = p.s.startHelper(p.kind); err != nil {
			return err
		}
		if err := h.send(js, stdout, stderr); err != nil {
			h.discard()
			return fmt.Errorf("sandbox: sending the command to the helper: %w", err)
		}
	}
	p.h = h
	p.statusC = make(chan struct{})
	p.reaped = make(chan struct{})
	go p.readStatus()
	return nil
}

// readStatus reads the helper's status line; EOF without one means the
// helper died before the command ended normally.
func (p *linuxProc) readStatus() {
	defer close(p.statusC)
	var buf []byte
	b := make([]byte, 32)
	for {
		n, err := unix.Read(p.h.sock, b)
		if err == unix.EINTR {
			continue
		}
		if n <= 0 || err != nil {
			break
		}
		buf = append(buf, b[:n]...)
		if !p.h.readied && len(buf) > 0 && buf[0] == helperReady {
			buf, p.h.readied = buf[1:], true
		}
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			if c, err := strconv.Atoi(string(buf[:i])); err == nil {
				p.code, p.statusOK = c, true
			}
			break
		}
	}
}

func (p *linuxProc) pid() int { return p.h.cmd.Process.Pid }

func (p *linuxProc) signal(sig os.Signal) { p.h.cmd.Process.Signal(sig) }

func (p *linuxProc) ended() {
	p.endOnce.Do(func() {
		<-p.statusC
		if !p.statusOK {
			// The helper is gone or going: wait until it has exited (and
			// with it the PID namespace), without reaping it.
			waitNoReap(p.pid())
		}
	})
}

func (p *linuxProc) wait() (int, error) {
	p.ended()
	go func() {
		p.waitErr = p.h.cmd.Wait()
		unix.Close(p.h.sock)
		close(p.reaped)
	}()
	if p.statusOK {
		// The next helper starts a little after the command, not while
		// it runs nor while its caller handles the result: on a small
		// machine it would take the CPU from them.
		if !p.noSpare {
			p.s.refillLater(p.kind)
		}
		return p.code, nil
	}
	<-p.reaped
	if ps := p.h.cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -1, fmt.Errorf("sandbox: the helper was killed by %s", unix.SignalName(ws.Signal()))
		}
		return -1, fmt.Errorf("sandbox: the helper exited with %d without a status", ps.ExitCode())
	}
	return -1, fmt.Errorf("sandbox: waiting for the helper: %w", p.waitErr)
}

func (p *linuxProc) close() {
	if p.h == nil {
		if p.temp != "" {
			os.RemoveAll(p.temp)
		}
		return
	}
	if p.statusOK {
		// The helper cleaned up after the command before its status; it
		// only has its namespaces to tear down.
		if p.temp != "" {
			go func() { <-p.reaped; os.RemoveAll(p.temp) }()
		}
		return
	}
	<-p.reaped
	if p.pl != nil {
		// The backstop for a helper killed before its epilogue.
		removePlaceholders(p.pl.missing)
		if moved, err := quarantineNewGit(p.pl.roots, concat(p.pl.gitNames, p.pl.protected, p.pl.missing)); len(moved) > 0 || err != nil {
			p.s.log.Warn("sandbox: quarantined .git created by a command", "paths", moved, "err", err)
		}
	}
	if p.temp != "" {
		os.RemoveAll(p.temp)
	}
}

// waitNoReap blocks until the process pid has exited, without reaping it.
func waitNoReap(pid int) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}

// tempPrefix starts the name of every private temp directory the sandbox
// creates on the host (degraded mode); the helper removes nothing else.
const tempPrefix = "coding-agent-sandbox-"

// agentPidfdFD is the helper's descriptor for a pidfd of the agent: it
// becomes readable when the agent exits, and the helper then kills the
// sandbox and cleans up.
const agentPidfdFD = 4

// hostUnixSockets lists the pathname unix sockets bound in the caller's
// network namespace, read before the helper enters its own.
func hostUnixSockets() []string {
	b, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		return nil
	}
	var out []string
	lines := strings.Split(string(b), "\n")
	for _, line := range lines[min(1, len(lines)):] {
		f := strings.Fields(line)
		if len(f) >= 8 && strings.HasPrefix(f[7], "/") {
			out = append(out, f[7])
		}
	}
	return dedupe(out)
}
