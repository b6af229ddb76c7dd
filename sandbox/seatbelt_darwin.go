//go:build darwin

package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/coding-agent/coding-agent/sandbox/fspath"
)

// sandboxExec is the only sandbox-exec used; PATH is never consulted.
const sandboxExec = "/usr/bin/sandbox-exec"

// MaybeRunHelper does nothing on macOS: sandbox-exec needs no helper.
func MaybeRunHelper() {}

func (s *Sandbox) probe(ctx context.Context) Status {
	st := Status{Kind: KindNone}
	if _, err := os.Stat(sandboxExec); err != nil {
		st.Missing = []string{"sandbox-exec"}
		st.Reason = "sandbox-exec not found: " + err.Error()
		return st
	}
	cmd := exec.CommandContext(ctx, sandboxExec, "-p", seatbeltBase, "-D", "TMP="+os.TempDir(), "--", "/usr/bin/true")
	if out, err := cmd.CombinedOutput(); err != nil {
		st.Reason = fmt.Sprintf("sandbox-exec does not work: %v %s", err, out)
		return st
	}
	st.Available, st.Kind = true, KindSeatbelt
	st.Degraded = true
	st.Reason = "macOS has no PID namespace: a process that leaves the command's process group (setsid) can outlive the command"
	return st
}

func (s *Sandbox) command(ctx context.Context, st Status, pl *plan, script string, env []string) (backend, error) {
	dir, err := os.MkdirTemp("", "coding-agent-sandbox-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: private temp: %w", err)
	}
	temp, err := fspath.Canonical(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("sandbox: private temp: %w", err)
	}
	profile, params, err := seatbeltProfile(pl, temp)
	if err != nil {
		os.RemoveAll(temp)
		return nil, err
	}
	args := append([]string{"-p", profile}, params...)
	args = append(args, "--", "/bin/bash", "-c", script)
	cmd := exec.Command(sandboxExec, args...)
	cmd.Env = sandboxEnv(env, s.opts.EnvAllow, pl.roots, temp)
	cmd.Dir = pl.dir
	// Its own process group, which signals reach.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return &execBackend{cmd: cmd, temp: temp}, nil
}

// spares is empty: no helper is started ahead of time here.
type spares struct{}

func (s *Sandbox) closeSpare() {}

func (s *Sandbox) prewarm(ctx context.Context, st Status) error { return nil }

// execBackend is sandbox-exec running bash.
type execBackend struct {
	cmd  *exec.Cmd
	temp string
	done bool
	err  error
}

func (b *execBackend) start(stdout, stderr *os.File) error {
	b.cmd.Stdout, b.cmd.Stderr = stdout, stderr
	return b.cmd.Start()
}

func (b *execBackend) pid() int { return b.cmd.Process.Pid }

func (b *execBackend) signal(sig os.Signal) { syscall.Kill(-b.cmd.Process.Pid, sig.(syscall.Signal)) }

// ended reaps the process: macOS has no waitid(WNOWAIT) that Go exposes.
func (b *execBackend) ended() {
	if !b.done {
		b.err = b.cmd.Wait()
		b.done = true
	}
}

func (b *execBackend) wait() (int, error) {
	b.ended()
	ps := b.cmd.ProcessState
	if ps == nil {
		return -1, b.err
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return ps.ExitCode(), nil
}

func (b *execBackend) close() { os.RemoveAll(b.temp) }
