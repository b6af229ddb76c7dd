//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// helperArg is argv[1] of the re-executed helper.
const helperArg = "__coding-agent-sandbox-helper"

// helperConfigFD is the descriptor on which the helper reads its config.
const helperConfigFD = 3

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
	GitNames   []string `json:"gitNames"`
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
	if len(os.Args) == 2 && os.Args[1] == helperArg {
		os.Exit(helperMain())
	}
}

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
	cmd, closeCfg, err := s.helperCmd(ctx, &cfg, userns)
	if err != nil {
		return err
	}
	defer closeCfg()
	// The probe has no grace: at its deadline the helper is killed.
	cmd.Cancel = func() error { return cmd.Process.Kill() }
	cmd.WaitDelay = 50 * time.Millisecond
	out, err := cmd.CombinedOutput()
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

func (s *Sandbox) command(ctx context.Context, st Status, pl *plan, script string, env []string) (*exec.Cmd, func(), error) {
	cfg := &helperConfig{
		Script: script, Dir: pl.dir, Preset: pl.preset, Roots: pl.roots, Visible: pl.visible,
		Keep: s.opts.KeepVisible, Protected: pl.protected, Missing: pl.missing, Pins: pl.pins,
		GitNames: pl.gitNames, Namespaces: st.Kind == KindLinux,
	}
	var cleanups []func()
	cleanupAll := func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	temp := PrivateTemp
	if cfg.Namespaces {
		cfg.Sockets = hostUnixSockets()
	} else {
		d, err := os.MkdirTemp("", tempPrefix)
		if err != nil {
			return nil, nil, fmt.Errorf("sandbox: private temp: %w", err)
		}
		cleanups = append(cleanups, func() { os.RemoveAll(d) })
		cfg.Temp, temp = d, d
	}
	cfg.Env = sandboxEnv(env, s.opts.EnvAllow, pl.roots, temp)
	cmd, closeCfg, err := s.helperCmd(ctx, cfg, st.Namespaces == "userns")
	if err != nil {
		cleanupAll()
		return nil, nil, err
	}
	cleanups = append(cleanups, closeCfg)
	cleanups = append(cleanups, func() {
		// The helper removes its placeholders and quarantines new .git
		// entries itself; this is the backstop for a helper that was
		// killed before its epilogue.
		removePlaceholders(pl.missing)
		if ps := cmd.ProcessState; ps == nil || !ps.Exited() {
			if moved, err := quarantineNewGit(pl.roots, concat(pl.gitNames, pl.protected, pl.missing)); len(moved) > 0 || err != nil {
				s.log.Warn("sandbox: quarantined .git created by a command", "paths", moved, "err", err)
			}
		}
	})
	return cmd, cleanupAll, nil
}

// helperCmd builds the re-exec command with cfg on fd 3. The returned
// function closes the parent's copy of the config.
func (s *Sandbox) helperCmd(ctx context.Context, cfg *helperConfig, userns bool) (*exec.Cmd, func(), error) {
	js, err := json.Marshal(cfg)
	if err != nil {
		return nil, nil, err
	}
	mfd, err := unix.MemfdCreate("coding-agent-sandbox-config", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: memfd: %w", err)
	}
	f := os.NewFile(uintptr(mfd), "sandbox-config")
	if _, err := f.Write(js); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("sandbox: write config: %w", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		f.Close()
		return nil, nil, err
	}
	exe := s.opts.Executable
	if exe == "" {
		exe = "/proc/self/exe"
	}
	cmd := exec.CommandContext(ctx, exe, helperArg)
	cmd.Args[0] = "coding-agent-sandbox"
	cmd.Env = cfg.Env
	cmd.Dir = "/"
	cmd.ExtraFiles = []*os.File{f}
	cmd.WaitDelay = 2 * time.Second
	// Cancel: SIGTERM, which the helper forwards to every process of the
	// sandbox; Go sends SIGKILL after WaitDelay, and the helper's death
	// kills the PID namespace.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	// The helper learns of the agent's death through a pidfd of the agent
	// on fd 4, not through Pdeathsig: in a new PID namespace Go's child
	// sees getppid() == 0 and signals itself at once, and Pdeathsig fires
	// when the forking thread, not the process, exits.
	pidfd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("sandbox: pidfd_open: %w", err)
	}
	agent := os.NewFile(uintptr(pidfd), "agent-pidfd")
	cmd.ExtraFiles = append(cmd.ExtraFiles, agent)
	attr := &syscall.SysProcAttr{}
	if cfg.Namespaces {
		attr.Cloneflags = syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET |
			syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS
		uid, gid := os.Getuid(), os.Getgid()
		if userns || uid != 0 {
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
	return cmd, func() { f.Close(); agent.Close() }, nil
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
