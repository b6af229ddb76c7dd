package tools

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// waitNoReap blocks until the process pid has exited, without reaping it:
// while it is a zombie its process ID, and so its process group ID, cannot
// be reused, which makes the group kill that follows safe.
func waitNoReap(pid int) bool {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil
	}
}

// pipeSize is the output pipe's capacity: bigger than the 64 KiB default
// so that a fast writer needs fewer wake-ups of the reader.
const pipeSize = 1 << 20

// growPipe enlarges the pipe; failure (a lower /proc/sys/fs/pipe-max-size)
// only costs throughput.
func growPipe(w *os.File) {
	if sc, err := w.SyscallConn(); err == nil {
		sc.Control(func(fd uintptr) {
			_, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize)
		})
	}
}

// rawPipe returns a pipe whose ends are closed on exec.
func rawPipe() (r, w int, err error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return -1, -1, os.NewSyscallError("pipe2", err)
	}
	return p[0], p[1], nil
}
