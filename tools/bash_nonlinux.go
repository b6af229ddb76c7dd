//go:build !linux

package tools

import (
	"os"
)

// waitNoReap reports false: without waitid(WNOWAIT) the caller reaps the
// process with Wait and kills its group right after.
func waitNoReap(pid int) bool { return false }

// growPipe keeps the platform's pipe size.
func growPipe(w *os.File) {}
