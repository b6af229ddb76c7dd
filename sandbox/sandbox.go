// Package sandbox runs `bash -c COMMAND` inside an OS sandbox.
//
// On Linux the program re-executes itself as a helper ([MaybeRunHelper])
// that becomes PID 1 of new user (when useful), mount, PID, network, IPC and
// UTS namespaces, makes /tmp, /var/tmp, /dev/shm and /run private, masks the
// host's unix sockets, mounts protected storage (.git, the agent's data
// directory) read-only, and then, on one locked thread, sets no_new_privs,
// applies Landlock (read everywhere, write only to the writable roots and
// the private temp) and a minimal seccomp filter, drops every capability and
// runs bash. When bash exits or the command is cancelled, every process of
// the PID namespace dies.
//
// On macOS the command runs under sandbox-exec with a generated Seatbelt
// profile of the same policy.
//
// A [Sandbox] probes once what the kernel allows ([Sandbox.Probe]); a
// command never silently runs unsandboxed: when the sandbox cannot be set
// up, [Sandbox.Command] returns an error naming what is missing.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/coding-agent/coding-agent/sandbox/fspath"
)

// Preset is a permission preset: the one type of coding-agent for it
// (package tools names it too, as an alias, and the ACP adapter sends its
// string). The sandbox enforces ReadOnly and WorkspaceWrite; FullAccess is
// never sandboxed, and [Sandbox.Command] refuses it.
type Preset string

// The presets, from the most to the least restrictive.
const (
	// ReadOnly allows writes only to the command's private temp.
	ReadOnly Preset = "read-only"
	// WorkspaceWrite allows writes to the writable roots and the private
	// temp.
	WorkspaceWrite Preset = "workspace-write"
	// FullAccess runs commands outside the sandbox.
	FullAccess Preset = "full-access"
)

// Presets lists the valid presets in order.
func Presets() []Preset { return []Preset{ReadOnly, WorkspaceWrite, FullAccess} }

// ParsePreset checks a preset name. The empty string means [ReadOnly].
func ParsePreset(s string) (Preset, error) {
	if s == "" {
		return ReadOnly, nil
	}
	for _, p := range Presets() {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown preset %q (valid: read-only, workspace-write, full-access)", s)
}

// Kinds of sandbox reported by [Sandbox.Probe].
const (
	KindLinux        = "linux-userns-landlock"
	KindLandlockOnly = "landlock-only"
	KindSeatbelt     = "seatbelt"
	KindNone         = "none"
)

// Policy is what one command may do.
type Policy struct {
	// Preset is ReadOnly or WorkspaceWrite.
	Preset Preset
	// WritableRoots are the directories writable under WorkspaceWrite
	// (the session cwd first, then additional directories). Under
	// ReadOnly they stay visible but read-only.
	WritableRoots []string
	// Protected are paths kept read-only under every preset, such as the
	// agent's data directory. A missing protected path inside a writable
	// root cannot be created. Every `.git` (directory or gitdir file) in
	// the writable roots, and the gitdir a `.git` file points to, are
	// protected without being listed.
	Protected []string
}

// Options configure a [Sandbox].
type Options struct {
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// EnvAllow lists environment variable names (or shell patterns such
	// as "MY_*", matched case-insensitively) that are kept even though
	// their names look like secrets.
	EnvAllow []string
	// ExtraWritable are directories writable under WorkspaceWrite in
	// addition to the policy's roots, typically toolchain caches outside
	// the workspace (~/.cache/go-build, ~/.npm). Variables that point a
	// cache into one of them are kept; otherwise caches are redirected
	// into the private temp.
	ExtraWritable []string
	// KeepVisible are host directories below /tmp, /var/tmp, /run or
	// /dev/shm that stay visible (read-only) inside the sandbox on Linux,
	// where those directories are otherwise private and empty.
	KeepVisible []string
	// Mode selects the Linux backend: "" or "auto" uses namespaces when
	// the probe finds them and falls back to the degraded Landlock-only
	// mode, announced loudly; "full" refuses to run without namespaces;
	// "landlock-only" forces the degraded mode.
	Mode string
	// Executable is the program re-executed as the helper; empty means
	// /proc/self/exe. Its main (or TestMain) must call [MaybeRunHelper]
	// first.
	Executable string
	// ProbeTimeout bounds the probe; zero means 2 s.
	ProbeTimeout time.Duration
}

// Status is the result of the probe.
type Status struct {
	// Available reports whether sandboxed commands can run.
	Available bool `json:"available"`
	// Kind is KindLinux, KindLandlockOnly, KindSeatbelt or KindNone.
	Kind string `json:"kind"`
	// Degraded reports a sandbox weaker than the full one; Reason says
	// what is lost.
	Degraded bool `json:"degraded"`
	// Reason explains a degraded or unavailable sandbox.
	Reason string `json:"reason,omitempty"`
	// Missing names the kernel features that are missing.
	Missing []string `json:"missing,omitempty"`
	// LandlockABI is the kernel's Landlock ABI version, 0 if none.
	LandlockABI int `json:"landlockABI"`
	// Namespaces is "userns" (a user namespace is used), "root-no-userns"
	// (root without a user namespace) or "" (no namespaces).
	Namespaces string `json:"namespaces,omitempty"`
	// Seccomp reports whether seccomp filters are available.
	Seccomp bool `json:"seccomp"`
	// Took is how long the probe took.
	Took time.Duration `json:"tookNs"`
}

// Sandbox prepares sandboxed commands. It is safe for concurrent use.
type Sandbox struct {
	opts Options
	log  *slog.Logger

	probeOnce sync.Once
	status    Status

	// git finds the `.git` entries of the writable roots.
	git *gitScanner

	// spares are helpers started ahead of the next command (Linux).
	spareMu sync.Mutex
	spares  spares
}

// New returns a Sandbox. It does not probe; the first [Sandbox.Probe] or
// [Sandbox.Command] does.
func New(opts Options) *Sandbox {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.ProbeTimeout <= 0 {
		opts.ProbeTimeout = 2 * time.Second
	}
	return &Sandbox{opts: opts, log: log, git: newGitScanner()}
}

// Probe finds out once what the kernel allows, within the probe timeout,
// and returns the cached result afterwards. A degraded sandbox is logged
// as a warning.
func (s *Sandbox) Probe(ctx context.Context) Status {
	s.probeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.ProbeTimeout)
		defer cancel()
		t0 := time.Now()
		s.status = s.probe(ctx)
		s.status.Took = time.Since(t0)
		switch {
		case !s.status.Available:
			s.log.Error("sandbox unavailable: sandboxed commands will fail", "reason", s.status.Reason, "missing", s.status.Missing)
		case s.status.Degraded:
			s.log.Warn("SANDBOX DEGRADED", "kind", s.status.Kind, "reason", s.status.Reason)
		default:
			s.log.Info("sandbox ready", "kind", s.status.Kind, "landlockABI", s.status.LandlockABI, "namespaces", s.status.Namespaces, "took", s.status.Took)
		}
	})
	return s.status
}

// Command prepares `bash -c script` in dir under policy p, with env (the
// unfiltered environment; it is filtered here). The caller starts the
// command with [Cmd.Start], waits for it with [Cmd.Wait] and then calls
// [Cmd.Close]. Cancelling ctx sends SIGTERM to every process of the
// sandbox; SIGKILL follows after 2 s.
func (s *Sandbox) Command(ctx context.Context, p Policy, script, dir string, env []string) (*Cmd, error) {
	st := s.Probe(ctx)
	if !st.Available {
		return nil, fmt.Errorf("sandbox unavailable (%s): refusing to run the command unsandboxed", st.Reason)
	}
	pl, err := s.plan(p, dir)
	if err != nil {
		return nil, err
	}
	b, err := s.command(ctx, st, pl, script, env)
	if err != nil {
		return nil, err
	}
	return &Cmd{ctx: ctx, b: b, stop: make(chan struct{}), grace: cancelGrace}, nil
}

// Prewarm makes sure the next commands find their helpers started
// (Linux), waiting until they are; commands keep helpers ready after that
// on their own.
// It is optional: it only moves the helper's start out of the way.
func (s *Sandbox) Prewarm(ctx context.Context) error {
	st := s.Probe(ctx)
	if !st.Available {
		return fmt.Errorf("sandbox unavailable (%s)", st.Reason)
	}
	return s.prewarm(ctx, st)
}

// Close stops the helper the sandbox keeps ready for the next command, if
// any. Commands already started are not affected.
func (s *Sandbox) Close() { s.closeSpare() }

// cancelGrace is how long a cancelled command has between SIGTERM and
// SIGKILL.
const cancelGrace = 2 * time.Second

// Cmd is a sandboxed command prepared by [Sandbox.Command]. Its methods
// are meant to be called in order by one goroutine: Start, Pid, Ended
// (optional), Wait, Close.
type Cmd struct {
	ctx     context.Context
	b       backend
	stop    chan struct{}
	grace   time.Duration // between SIGTERM and SIGKILL; negative: SIGKILL at once
	started bool
	closed  bool
}

// backend is one platform's sandboxed process.
type backend interface {
	start(stdout, stderr *os.File) error
	pid() int
	signal(sig os.Signal)
	// ended blocks until the command has ended; its process group ID
	// stays reserved until wait.
	ended()
	// wait returns the command's exit code, or -1 and an error saying
	// how the sandbox itself ended without one.
	wait() (int, error)
	close()
}

// Start starts the command with stdin on /dev/null and its output on
// stdout and stderr (they may be the same file); the caller may close its
// copies once Start returns.
func (c *Cmd) Start(stdout, stderr *os.File) error {
	if c.started {
		return errors.New("sandbox: command already started")
	}
	if err := c.ctx.Err(); err != nil {
		return fmt.Errorf("sandbox: command not started: %w", err)
	}
	if err := c.b.start(stdout, stderr); err != nil {
		return err
	}
	c.started = true
	go c.watch()
	return nil
}

// watch turns cancellation of the command's context into SIGTERM, then
// SIGKILL after the grace period, until the command ends.
func (c *Cmd) watch() {
	select {
	case <-c.stop:
		return
	case <-c.ctx.Done():
	}
	if c.grace < 0 {
		c.b.signal(syscall.SIGKILL)
		return
	}
	c.b.signal(syscall.SIGTERM)
	t := time.NewTimer(c.grace)
	defer t.Stop()
	select {
	case <-c.stop:
	case <-t.C:
		c.b.signal(syscall.SIGKILL)
	}
}

// Pid is the leader of the command's process group: a signal to the group
// reaches every process of the sandbox.
func (c *Cmd) Pid() int { return c.b.pid() }

// Ended blocks until the command has ended (every process of it on
// Linux). The process group ID stays reserved until Wait, so that a
// signal to the group cannot reach an unrelated process.
func (c *Cmd) Ended() { c.b.ended() }

// Wait waits for the command and returns bash's exit code (128+N when bash
// was killed by signal N). When the sandbox ended without one, the code is
// -1 and the error says why (for example a helper killed by SIGKILL).
func (c *Cmd) Wait() (int, error) {
	if !c.started {
		return -1, errors.New("sandbox: command not started")
	}
	code, err := c.b.wait()
	close(c.stop)
	return code, err
}

// Close releases what the sandbox set up for the command. Call it once,
// after Wait, or instead of Start.
func (c *Cmd) Close() {
	if c.closed {
		return
	}
	c.closed = true
	c.b.close()
}

// Output runs the command and returns its combined output and exit code.
func (c *Cmd) Output() ([]byte, int, error) {
	defer c.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return nil, -1, err
	}
	if err := c.Start(w, w); err != nil {
		r.Close()
		w.Close()
		return nil, -1, err
	}
	w.Close()
	out, _ := io.ReadAll(r)
	r.Close()
	code, err := c.Wait()
	return out, code, err
}

// plan is a validated, canonical policy: everything a backend needs.
type plan struct {
	preset Preset
	dir    string
	// roots are the writable roots (WorkspaceWrite), canonical.
	roots []string
	// visible are the read-only roots (policy roots under ReadOnly, and
	// dir when it is not in a root), canonical.
	visible []string
	// protected are existing protected paths, canonical, no symlinks.
	protected []string
	// missing are protected paths inside a writable root that do not
	// exist: the first missing component of each.
	missing []string
	// pins are directories between a writable root and a protected path
	// inside it, shallow first.
	pins []string
	// gitNames are the `.git` entries that existed in the writable roots
	// before the command; a new one is quarantined after it.
	gitNames []string
}

var errNotAbs = errors.New("must be an absolute path")

func (s *Sandbox) plan(p Policy, dir string) (*plan, error) {
	pl := &plan{preset: p.Preset}
	switch p.Preset {
	case ReadOnly, WorkspaceWrite:
	case "":
		return nil, errors.New("sandbox policy: preset is empty (want read-only or workspace-write)")
	default:
		return nil, fmt.Errorf("sandbox policy: preset %q cannot be sandboxed (want read-only or workspace-write)", p.Preset)
	}
	var err error
	if pl.dir, err = canonDir("dir", dir); err != nil {
		return nil, err
	}
	var roots []string
	for i, r := range p.WritableRoots {
		c, err := canonDir(fmt.Sprintf("writable root %d", i), r)
		if err != nil {
			return nil, err
		}
		roots = append(roots, c)
	}
	if p.Preset == WorkspaceWrite {
		if len(roots) == 0 {
			return nil, errors.New("sandbox policy: workspace-write needs at least one writable root")
		}
		for i, r := range s.opts.ExtraWritable {
			c, err := canonDir(fmt.Sprintf("extra writable root %d", i), r)
			if err != nil {
				return nil, err
			}
			roots = append(roots, c)
		}
		pl.roots = dedupe(roots)
		// A root in git's storage would make git's config and hooks
		// writable: refused, whatever else the roots hold.
		for _, r := range pl.roots {
			if g, ok := GitStorage(r); ok {
				return nil, fmt.Errorf("sandbox policy: writable root %s is inside git's storage %s; refusing to run (git's config and hooks would become writable)", r, g)
			}
		}
	} else {
		pl.visible = dedupe(roots)
	}
	if !fspath.WithinAny(pl.dir, pl.roots) {
		pl.visible = dedupe(append(pl.visible, pl.dir))
	}
	if err := pl.protect(p.Protected, s.git.find); err != nil {
		return nil, err
	}
	return pl, nil
}

// canonDir checks that path is an absolute existing directory and returns
// it with symlinks resolved, so that mounts and Landlock rules name the
// real directory.
func canonDir(field, path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("sandbox policy: %s %q %w", field, path, errNotAbs)
	}
	c, err := fspath.Canonical(path)
	if err != nil {
		return "", fmt.Errorf("sandbox policy: %s: %w", field, err)
	}
	fi, err := os.Stat(c)
	if err != nil {
		return "", fmt.Errorf("sandbox policy: %s: %w", field, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("sandbox policy: %s %q is not a directory", field, path)
	}
	return c, nil
}
