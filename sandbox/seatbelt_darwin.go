//go:build darwin

package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
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

func (s *Sandbox) command(ctx context.Context, st Status, pl *plan, script string, env []string) (*exec.Cmd, func(), error) {
	dir, err := os.MkdirTemp("", "coding-agent-sandbox-")
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: private temp: %w", err)
	}
	temp, err := filepath.EvalSymlinks(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("sandbox: private temp: %w", err)
	}
	cleanup := func() { os.RemoveAll(temp) }
	profile, params, err := seatbeltProfile(pl, temp)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	args := append([]string{"-p", profile}, params...)
	args = append(args, "--", "/bin/bash", "-c", script)
	cmd := exec.CommandContext(ctx, sandboxExec, args...)
	cmd.Env = sandboxEnv(env, s.opts.EnvAllow, pl.roots, temp)
	cmd.Dir = pl.dir
	cmd.WaitDelay = 2 * time.Second
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	return cmd, cleanup, nil
}
