//go:build unix

package tools

import (
	"io/fs"
	"os"
	"syscall"
)

// keepOwner gives f the owner of the file it replaces when the process may
// (root, or the same owner); otherwise the new file belongs to the caller,
// as with any editor that saves by renaming.
func keepOwner(f *os.File, old fs.FileInfo) {
	st, ok := old.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	if int(st.Uid) == os.Geteuid() && int(st.Gid) == os.Getegid() {
		return
	}
	_ = f.Chown(int(st.Uid), int(st.Gid))
}
