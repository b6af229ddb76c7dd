//go:build unix && !linux

package tools

import (
	"os"
	"syscall"
)

// rawPipe returns a pipe whose ends are closed on exec. ForkLock keeps a
// concurrent fork from inheriting them before close-on-exec is set.
func rawPipe() (r, w int, err error) {
	var p [2]int
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	if err := syscall.Pipe(p[:]); err != nil {
		return -1, -1, os.NewSyscallError("pipe", err)
	}
	syscall.CloseOnExec(p[0])
	syscall.CloseOnExec(p[1])
	return p[0], p[1], nil
}
