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
// no network namespace) allows only AF_UNIX sockets.
func seccompProgram(strict bool) ([]unix.SockFilter, error) {
	arch, err := seccompArch()
	if err != nil {
		return nil, err
	}
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
		// Offsets in struct seccomp_data.
		offNR   = 0
		offArch = 4
		offArg0 = 16 // low 32 bits on little-endian
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
	return append(p, unix.SockFilter{Code: ret, K: allow}), nil
}

// seccompAvailable reports whether the kernel supports seccomp filters.
func seccompAvailable() bool {
	_, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0)
	return err == nil || !errors.Is(err, unix.EINVAL)
}

// seccompRestrictThread loads the filter on the calling thread only (no
// TSYNC); no_new_privs must be set.
func seccompRestrictThread(strict bool) error {
	prog, err := seccompProgram(strict)
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("seccomp: %w", e)
	}
	return nil
}
