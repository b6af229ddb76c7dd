package mcp

import (
	"os"
	"os/exec"
	"time"
)

// MaybeRunSupervisor does nothing on Windows: servers run without a
// supervisor and are killed on close.
func MaybeRunSupervisor() {}

// startProcess starts the server itself on Windows, without a supervisor:
// it is killed when the set closes, but not when the agent is killed.
func startProcess(path string, args, env []string, dir, exe string, grace time.Duration) (*process, error) {
	cmd := exec.Command(path, args...)
	cmd.Env, cmd.Dir = env, dir
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		for _, f := range []*os.File{inR, inW, outR, outW, errR, errW} {
			f.Close()
		}
		return nil, err
	}
	inR.Close()
	outW.Close()
	errW.Close()
	p := &process{cmd: cmd, stdin: inW, stdout: outR, stderr: errR, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

func (p *process) stop(grace time.Duration) {
	p.stdin.Close()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		p.cmd.Process.Kill()
		<-p.exited
	}
}
