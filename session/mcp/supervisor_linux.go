package mcp

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// becomeSubreaper makes the supervisor inherit every orphaned descendant
// of the server, so that none escapes by leaving the process group.
func becomeSubreaper() { unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }

// killOrphans kills and reaps the supervisor's remaining children until
// none is left.
func killOrphans() {
	for {
		for _, pid := range children() {
			unix.Kill(pid, unix.SIGKILL)
		}
		var ws unix.WaitStatus
		if _, err := unix.Wait4(-1, &ws, 0, nil); err == unix.ECHILD {
			if len(children()) == 0 {
				return
			}
		}
	}
}

// children lists the processes whose parent is this one.
func children() []int {
	self := strconv.Itoa(os.Getpid())
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 1 && f[1] == self {
			out = append(out, pid)
		}
	}
	return out
}
