package tools

import (
	"errors"

	"golang.org/x/sys/unix"
)

// openDirNoFollow opens dir with openat2(RESOLVE_NO_SYMLINKS): the kernel
// refuses a symlink in any component, atomically. Where openat2 is missing
// (before Linux 5.6, or filtered by seccomp) the path is walked one
// component at a time with O_NOFOLLOW, which gives the same guarantee.
func openDirNoFollow(dir string) (int, error) {
	how := unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	for range 8 {
		fd, err := unix.Openat2(unix.AT_FDCWD, dir, &how)
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR):
			continue // a concurrent rename; try again
		case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.E2BIG):
			return walkNoFollow(dir)
		default:
			return -1, err
		}
	}
	return walkNoFollow(dir)
}
