//go:build unix

package tools

import (
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// setProcessGroup makes the command the leader of a new process group, so
// that a signal to the group reaches everything it starts. Fields a
// sandbox set are kept; a new session (Setsid) is already a new group, and
// setpgid would fail in a session leader.
func setProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if !cmd.SysProcAttr.Setsid {
		cmd.SysProcAttr.Setpgid = true
		cmd.SysProcAttr.Pgid = 0
	}
}

// killGroup sends sig to the process group pgid. A group that no longer
// exists is not an error.
func killGroup(pgid int, sig syscall.Signal) {
	if pgid <= 0 {
		return // never signal our own group or every process
	}
	_ = unix.Kill(-pgid, sig)
}

// exitSignal returns the name of the signal that killed the process.
func exitSignal(state interface{ Sys() any }) (string, bool) {
	ws, ok := state.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return "", false
	}
	if name := unix.SignalName(ws.Signal()); name != "" {
		return name, true
	}
	return ws.Signal().String(), true
}
