//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seccompArch is the audit architecture of the running binary; any other
// architecture (i386 through int 0x80 on x86-64, for instance) is killed,
// because syscall numbers differ and would bypass the checks below.
func seccompArch() (uint32, error) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, nil
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, nil
	}
	return 0, fmt.Errorf("seccomp filter not written for GOARCH %s", runtime.GOARCH)
}

// seccompProgram builds the filter. The minimal filter (full mode, with a
// network namespace) denies socket(AF_VSOCK), which the network namespace
// does not isolate, and io_uring, which can create sockets and open files
// without the system calls a filter sees. The strict filter (degraded mode,
// no network namespace) allows only AF_UNIX sockets. Both send the calls
// that create names to the git guard (gitguard_linux.go): those of
// gitTrapped, and open/openat when the flags have O_CREAT, except when
// the sixth argument register holds cookie (gitguard_linux.go: the
// restricted thread that started bash serves those calls and performs them
// itself, under the same filter). cookie is random per command and never
// leaves the helper; the command cannot read its own filter (that needs
// CAP_SYS_ADMIN) nor the helper's memory (not dumpable).
func seccompProgram(strict bool, cookie uint64) ([]unix.SockFilter, error) {
	arch, err := seccompArch()
	if err != nil {
		return nil, err
	}
	const (
		ld   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge  = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		jset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
		// Offsets in struct seccomp_data.
		offNR   = 0
		offArch = 4
		offArg0 = 16 // low 32 bits on little-endian
		offArg1 = 24
		offArg2 = 32
		offArg5 = 56 // low half; the high half at 60
	)
	allow := uint32(unix.SECCOMP_RET_ALLOW)
	eperm := uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	p := []unix.SockFilter{
		{Code: ld, K: offArch},
		{Code: jeq, K: arch, Jt: 1},
		{Code: ret, K: unix.SECCOMP_RET_KILL_PROCESS},
		{Code: ld, K: offNR},
	}
	if arch == unix.AUDIT_ARCH_X86_64 {
		// x32 system calls share the architecture with bit 30 set.
		p = append(p,
			unix.SockFilter{Code: jge, K: 0x40000000, Jf: 1},
			unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)})
	}
	// socket(domain, ...): check the domain, then reload the number.
	p = append(p, unix.SockFilter{Code: jeq, K: unix.SYS_SOCKET, Jf: 4}, unix.SockFilter{Code: ld, K: offArg0})
	if strict {
		p = append(p,
			unix.SockFilter{Code: jeq, K: unix.AF_UNIX, Jt: 0, Jf: 1},
			unix.SockFilter{Code: ret, K: allow},
			unix.SockFilter{Code: ret, K: eperm})
	} else {
		p = append(p,
			unix.SockFilter{Code: jeq, K: unix.AF_VSOCK, Jt: 0, Jf: 1},
			unix.SockFilter{Code: ret, K: eperm},
			unix.SockFilter{Code: ret, K: allow})
	}
	denied := []uint32{unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER}
	for _, nr := range denied {
		p = append(p, unix.SockFilter{Code: jeq, K: nr, Jf: 1}, unix.SockFilter{Code: ret, K: eperm})
	}
	// The guard's own calls: the cookie in the sixth argument.
	p = append(p,
		unix.SockFilter{Code: ld, K: offArg5},
		unix.SockFilter{Code: jeq, K: uint32(cookie), Jf: 3},
		unix.SockFilter{Code: ld, K: offArg5 + 4},
		unix.SockFilter{Code: jeq, K: uint32(cookie >> 32), Jf: 1},
		unix.SockFilter{Code: ret, K: allow},
		unix.SockFilter{Code: ld, K: offNR})
	notify := uint32(unix.SECCOMP_RET_USER_NOTIF)
	for _, nr := range gitTrapped() {
		p = append(p, unix.SockFilter{Code: jeq, K: nr, Jf: 1}, unix.SockFilter{Code: ret, K: notify})
	}
	// open/openat: only with O_CREAT in the flags (an int: the low half).
	opens := []struct{ nr, off uint32 }{{unix.SYS_OPENAT, offArg2}}
	if runtime.GOARCH == "amd64" {
		opens = append(opens, struct{ nr, off uint32 }{amd64Open, offArg1})
	}
	for _, o := range opens {
		p = append(p,
			unix.SockFilter{Code: jeq, K: o.nr, Jf: 4},
			unix.SockFilter{Code: ld, K: o.off},
			unix.SockFilter{Code: jset, K: unix.O_CREAT, Jf: 1},
			unix.SockFilter{Code: ret, K: notify},
			unix.SockFilter{Code: ret, K: allow})
	}
	return append(p, unix.SockFilter{Code: ret, K: allow}), nil
}

// seccompAvailable reports whether the kernel supports seccomp filters.
func seccompAvailable() bool {
	_, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0)
	return err == nil || !errors.Is(err, unix.EINVAL)
}

// seccompRestrictThread loads the filter on the calling thread only (no
// TSYNC); no_new_privs must be set. It returns the listener descriptor of
// the filter's user notifications (close-on-exec), for the git guard. The
// calling thread must make no trapped call before the listener is served.
func seccompRestrictThread(strict bool, cookie uint64) (int, error) {
	prog, err := seccompProgram(strict, cookie)
	if err != nil {
		return -1, err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return -1, fmt.Errorf("no_new_privs: %w", err)
	}
	// WAIT_KILLABLE_RECV (Linux 5.19): once the helper has received a
	// call, only SIGKILL interrupts the caller, so a signal cannot make
	// the caller restart a call the helper has already performed.
	flags := uintptr(unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
	fd, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
	if e == unix.EINVAL {
		flags = unix.SECCOMP_FILTER_FLAG_NEW_LISTENER
		fd, _, e = unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
	}
	if e != 0 {
		return -1, fmt.Errorf("seccomp: %w", e)
	}
	return int(fd), nil
}
