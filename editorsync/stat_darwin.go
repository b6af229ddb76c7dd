package editorsync

import (
	"io/fs"
	"syscall"
)

// sysStat returns the inode number and change time of fi.
func sysStat(fi fs.FileInfo) (ino uint64, ctime int64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino, st.Ctimespec.Nano()
	}
	return 0, 0
}
