//go:build !unix

package tools

import (
	"os"
	"os/exec"
)

// Without Unix process groups, only the command's own process is
// signalled: its children may survive it. The supported platforms are
// Linux and macOS.
var (
	sigTerm = os.Kill
	sigKill = os.Kill
)

func setProcessGroup(cmd *exec.Cmd) {}

func killGroup(pid int, sig os.Signal) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Signal(sig)
	}
}

func exitSignal(state interface{ Sys() any }) (string, bool) { return "", false }
