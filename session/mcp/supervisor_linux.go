package mcp

import (
	"golang.org/x/sys/unix"

	"github.com/coding-agent/coding-agent/sandbox"
)

// becomeSubreaper makes the supervisor inherit every orphaned descendant
// of the server, so that none escapes by leaving the process group.
func becomeSubreaper() { unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }

// killOrphans kills and reaps the supervisor's remaining children until
// none is left.
func killOrphans() {
	for {
		for _, pid := range sandbox.Children() {
			unix.Kill(pid, unix.SIGKILL)
		}
		var ws unix.WaitStatus
		if _, err := unix.Wait4(-1, &ws, 0, nil); err == unix.ECHILD {
			if len(sandbox.Children()) == 0 {
				return
			}
		}
	}
}
