//go:build linux

package sandbox

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The test binary plays several roles, chosen before the tests run:
//   - the sandbox helper (MaybeRunHelper);
//   - a small network/ptrace probe run inside the sandbox
//     (SANDBOX_TEST_TOOL), because bash cannot open every kind of socket;
//   - a child "agent" killed with SIGKILL mid-command (SANDBOX_TEST_AGENT).
//
// It also re-executes itself once with secrets in its exec-time
// environment, so that /proc/PID/environ of the agent holds them.

const testSecret = "s3cret-value-4711"

func TestMain(m *testing.M) {
	MaybeRunHelper()
	if tool := os.Getenv("SANDBOX_TEST_TOOL"); tool != "" {
		os.Exit(runTool(tool, os.Args[1:]))
	}
	if os.Getenv("SANDBOX_TEST_AGENT") != "" {
		os.Exit(childAgent())
	}
	if os.Getenv("SBX_TEST_TOKEN") == "" {
		exe, err := os.Executable()
		if err == nil {
			env := append(os.Environ(), "SBX_TEST_TOKEN="+testSecret, "MY_API_KEY="+testSecret,
				"AWS_SECRET_ACCESS_KEY="+testSecret, "ANTHROPIC_API_KEY="+testSecret)
			err = syscall.Exec(exe, os.Args, env)
		}
		fmt.Fprintln(os.Stderr, "re-exec with secrets:", err)
		os.Exit(2)
	}
	code := m.Run()
	cleanupTestGlobals()
	os.Exit(code)
}

// runTool implements SANDBOX_TEST_TOOL: it prints OK and exits 0 when the
// operation succeeded, prints the error and exits 1 otherwise.
func runTool(tool string, args []string) int {
	var err error
	switch tool {
	case "dial": // dial NETWORK ADDRESS: connect and read the greeting
		var c net.Conn
		c, err = net.DialTimeout(args[0], args[1], 2*time.Second)
		if err == nil {
			c.SetDeadline(time.Now().Add(2 * time.Second))
			b := make([]byte, 5)
			_, err = c.Read(b)
			c.Close()
		}
	case "udp": // udp ADDRESS: send a datagram and wait for the echo
		var c net.Conn
		c, err = net.Dial("udp4", args[0])
		if err == nil {
			c.SetDeadline(time.Now().Add(2 * time.Second))
			if _, err = c.Write([]byte("ping")); err == nil {
				b := make([]byte, 5)
				_, err = c.Read(b)
			}
			c.Close()
		}
	case "vsock":
		var fd int
		fd, err = unix.Socket(unix.AF_VSOCK, unix.SOCK_STREAM, 0)
		if err == nil {
			unix.Close(fd)
		}
	case "iouring":
		params := make([]byte, 120)
		r, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
		if e != 0 {
			err = e
		} else {
			unix.Close(int(r))
		}
	case "seize": // seize PID: attach as a tracer without stopping it
		runtime.LockOSThread()
		var pid int
		if pid, err = strconv.Atoi(args[0]); err == nil {
			err = unix.PtraceSeize(pid)
		}
	default:
		err = fmt.Errorf("unknown tool %q", tool)
	}
	if err != nil {
		fmt.Println("FAILED:", err)
		return 1
	}
	fmt.Println("OK")
	return 0
}
