//go:build unix

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// reservePiece locks dir and checks that the piece name may be created in
// it; see ReserveCreate.
func reservePiece(ctx context.Context, dir, name string) (func(), error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: opening %s to check for a repository: %w", dir, err)
	}
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			unix.Close(fd)
			return nil, fmt.Errorf("sandbox: locking %s: %w", dir, err)
		}
		// Held by another creation of a piece in dir: a command's or a
		// tool's, which ends soon, or a command holding it on purpose,
		// which ends with the command.
		t := time.NewTimer(lockWait)
		select {
		case <-ctx.Done():
			t.Stop()
			unix.Close(fd)
			return nil, fmt.Errorf("sandbox: waiting for the lock of %s: %w", dir, ctx.Err())
		case <-t.C:
		}
	}
	if completesRepo(name, func(p string) bool { return hasEntry(fd, p) }) {
		unix.Close(fd) // releases the lock
		return nil, &RepositoryError{Dir: dir, Name: name}
	}
	return func() { unix.Close(fd) }, nil
}

// hasEntry reports whether dir holds an entry called name. An error other
// than "no such entry" counts as one: when in doubt, the piece is there.
func hasEntry(dir int, name string) bool {
	var st unix.Stat_t
	err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	return err == nil || !(errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR))
}
