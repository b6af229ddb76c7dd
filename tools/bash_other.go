//go:build !unix

package tools

import (
	"os"
	"os/exec"
	"time"
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

// osPipe is an output pipe from os.Pipe, stopped with a read deadline.
type osPipe struct{ *os.File }

func newOutputPipe() (outputReader, *os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	return osPipe{r}, w, nil
}

func (p osPipe) stop() { p.SetReadDeadline(time.Now()) }
