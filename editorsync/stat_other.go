//go:build !linux && !darwin

package editorsync

import "io/fs"

// sysStat returns the inode number and change time of fi. Platforms other
// than Linux and macOS (Windows) report neither through os.FileInfo: the
// cache key is then size, modification time and mode, and a rewrite that
// restores all three within the clock's resolution is not seen.
func sysStat(fi fs.FileInfo) (ino uint64, ctime int64) { return 0, 0 }
