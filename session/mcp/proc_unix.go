//go:build unix

package mcp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// supervisorArg is argv[1] of the re-executed supervisor.
const supervisorArg = "__coding-agent-mcp-supervisor"

// MaybeRunSupervisor runs the MCP server supervisor and exits when the
// process was re-executed as one; otherwise it returns at once. Call it
// first in main, and in TestMain of test binaries that start stdio MCP
// servers.
func MaybeRunSupervisor() {
	if len(os.Args) >= 4 && os.Args[1] == supervisorArg {
		os.Exit(superviseMain(os.Args[2:]))
	}
}

// lifelineFD is the supervisor's end of a pipe whose other end only the
// agent holds: it reads EOF when the agent closes it or dies.
const lifelineFD = 3

// startProcess starts the supervisor of a stdio server: the supervisor
// runs the server in a process group of its own, with stdin, stdout and
// stderr on the returned pipes.
func startProcess(path string, args, env []string, dir, exe string, grace time.Duration) (*process, error) {
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (*os.File, *os.File, error) {
		r, w, err := os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err1 := pipe()
	outR, outW, err2 := pipe()
	errR, errW, err3 := pipe()
	lifeR, lifeW, err4 := pipe()
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		closeAll()
		return nil, err
	}
	cmd := exec.Command(exe, append([]string{supervisorArg, strconv.FormatInt(int64(grace/time.Millisecond), 10), path}, args...)...)
	cmd.Args[0] = "coding-agent-mcp"
	cmd.Env = env
	cmd.Dir = dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.ExtraFiles = []*os.File{lifeR}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, err
	}
	// The child's ends are the child's alone now.
	inR.Close()
	outW.Close()
	errW.Close()
	lifeR.Close()
	p := &process{cmd: cmd, stdin: inW, stdout: outR, stderr: errR, lifeline: lifeW, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// stop asks the supervisor to end the server (closing the lifeline:
// SIGTERM to the group, grace, SIGKILL) and waits for it; a supervisor that
// does not exit within grace plus a margin is killed.
func (p *process) stop(grace time.Duration) {
	p.stdin.Close()
	p.lifeline.Close()
	t := time.NewTimer(grace + 2*time.Second)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
	}
}

// superviseMain is the supervisor: args are the grace in milliseconds, the
// server's path and its arguments. Its environment, directory, stdin,
// stdout and stderr are the server's. It exits with the server's status.
func superviseMain(args []string) int {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	ms, err := strconv.Atoi(args[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "coding-agent-mcp: bad grace %q\n", args[0])
		return 126
	}
	grace := time.Duration(ms) * time.Millisecond
	syscall.CloseOnExec(lifelineFD)
	becomeSubreaper()
	gone := make(chan struct{})
	go func() {
		lifeline := os.NewFile(lifelineFD, "lifeline")
		io.Copy(io.Discard, lifeline)
		close(gone)
	}()
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		return 127
	}
	// Only the server holds its stdin and stdout: its exit is EOF for the
	// agent.
	if null, err := syscall.Open("/dev/null", syscall.O_RDWR, 0); err == nil {
		// x/sys/unix: syscall.Dup2 does not exist on linux/arm64.
		unix.Dup2(null, 0)
		unix.Dup2(null, 1)
		syscall.Close(null)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	pgid := cmd.Process.Pid
	select {
	case <-exited:
	case <-gone:
	case <-sigs:
	}
	select {
	case <-exited:
	default:
		syscall.Kill(-pgid, syscall.SIGTERM)
		t := time.NewTimer(grace)
		select {
		case <-exited:
		case <-t.C:
		}
		t.Stop()
	}
	// Whatever is left of the group, and (Linux) every descendant that
	// left it, does not outlive the server.
	syscall.Kill(-pgid, syscall.SIGKILL)
	<-exited
	killOrphans()
	code := cmd.ProcessState.ExitCode()
	if code < 0 {
		code = 128 + 9
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	}
	return code
}
