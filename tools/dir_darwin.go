package tools

import (
	"errors"

	"golang.org/x/sys/unix"
)

// openDirNoFollow opens dir with O_NOFOLLOW_ANY (macOS 11 and later): no
// component may be a symlink. Older systems reject the flag; there the
// path is walked one component at a time with O_NOFOLLOW.
func openDirNoFollow(dir string) (int, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW_ANY, 0)
	if errors.Is(err, unix.EINVAL) {
		return walkNoFollow(dir)
	}
	return fd, err
}
