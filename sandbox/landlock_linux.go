//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// landlockABI returns the kernel's Landlock ABI version, 0 if Landlock is
// unavailable (not built, or not in the LSM list).
func landlockABI() int {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0
	}
	return int(v)
}

// Access rights.
const (
	llRead = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_READ_DIR
	// llFileRights are the rights that apply to a file (not a directory)
	// rule; the kernel rejects the others on a file.
	llFileRights = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	llAll = ^uint64(0)
)

// llHandledFS is the set of file-system rights ABI abi knows; everything
// handled and not granted by a rule is denied.
func llHandledFS(abi int) uint64 {
	m := uint64(unix.LANDLOCK_ACCESS_FS_MAKE_SYM<<1 - 1) // ABI 1: EXECUTE .. MAKE_SYM
	if abi >= 2 {
		m |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		m |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		m |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	if abi >= 9 {
		// connect() to a pathname unix socket: denied outside the
		// writable places, which closes host sockets for good.
		m |= unix.LANDLOCK_ACCESS_FS_RESOLVE_UNIX
	}
	return m
}

// llRule grants access beneath path (or to the file path).
type llRule struct {
	path   string
	access uint64
	file   bool
}

// landlockRestrictThread applies a ruleset to the calling OS thread only;
// the caller has locked the thread and forks the command from it. denyTCP
// also denies TCP bind and connect (ABI >= 4), for the degraded mode
// without a network namespace. Rules on missing paths are skipped.
func landlockRestrictThread(rules []llRule, denyTCP bool) error {
	abi := landlockABI()
	if abi < 1 {
		return errors.New("landlock is not available")
	}
	handled := llHandledFS(abi)
	attr := struct{ fs, net, scoped uint64 }{fs: handled}
	size := unsafe.Sizeof(attr.fs)
	if abi >= 4 {
		size = unsafe.Offsetof(attr.scoped)
		if denyTCP {
			attr.net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
		}
	}
	if abi >= 6 {
		size = unsafe.Sizeof(attr)
		// Signals and abstract unix sockets only within the sandbox.
		attr.scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if e != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", e)
	}
	defer unix.Close(int(fd))
	for _, r := range rules {
		acc := r.access & handled
		if r.file {
			acc &= llFileRights
		}
		pfd, err := unix.Open(r.path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return fmt.Errorf("landlock rule %s: %w", r.path, err)
		}
		pb := unix.LandlockPathBeneathAttr{Allowed_access: acc, Parent_fd: int32(pfd)}
		_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&pb)), 0, 0, 0)
		unix.Close(pfd)
		if e != 0 {
			return fmt.Errorf("landlock_add_rule %s: %w", r.path, e)
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); e != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", e)
	}
	return nil
}
