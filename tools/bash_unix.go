//go:build unix

package tools

import (
	"errors"
	"io"
	"os"
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

// outputPipe is the read end of a command's output pipe. It is read with
// plain system calls, blocking in poll(2) on the reading goroutine's
// thread when the pipe is empty, rather than through Go's network poller:
// with a fast writer the poller's wake-ups cost about as much CPU as the
// copying itself, and on a loaded machine that CPU is taken from the
// command.
type outputPipe struct {
	fd           int // non-blocking read end
	wakeR, wakeW int // self-pipe that interrupts poll
}

// errPipeStopped ends reading after outputPipe.stop.
var errPipeStopped = errors.New("output pipe: reading stopped")

// newOutputPipe returns the read end and, as an *os.File for exec, the
// blocking write end of a new pipe.
func newOutputPipe() (outputReader, *os.File, error) {
	r, w, err := rawPipe()
	if err != nil {
		return nil, nil, err
	}
	wakeR, wakeW, err := rawPipe()
	if err != nil {
		unix.Close(r)
		unix.Close(w)
		return nil, nil, err
	}
	// Only the read end's open file description becomes non-blocking;
	// the command writes to a blocking pipe as usual.
	if err := unix.SetNonblock(r, true); err != nil {
		for _, fd := range []int{r, w, wakeR, wakeW} {
			unix.Close(fd)
		}
		return nil, nil, err
	}
	return &outputPipe{fd: r, wakeR: wakeR, wakeW: wakeW}, os.NewFile(uintptr(w), "|1"), nil
}

func (p *outputPipe) Read(b []byte) (int, error) {
	for {
		n, err := unix.Read(p.fd, b)
		switch {
		case err == nil && n == 0:
			return 0, io.EOF
		case err == nil:
			return n, nil
		case errors.Is(err, unix.EINTR):
			continue
		case !errors.Is(err, unix.EAGAIN):
			return 0, err
		}
		fds := []unix.PollFd{{Fd: int32(p.fd), Events: unix.POLLIN}, {Fd: int32(p.wakeR), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil && !errors.Is(err, unix.EINTR) {
			return 0, err
		}
		if fds[1].Revents != 0 {
			return 0, errPipeStopped
		}
	}
}

func (p *outputPipe) stop() { unix.Write(p.wakeW, []byte{0}) }

// Close closes the pipe; call it after the last Read returned.
func (p *outputPipe) Close() error {
	err := unix.Close(p.fd)
	unix.Close(p.wakeR)
	unix.Close(p.wakeW)
	return err
}
