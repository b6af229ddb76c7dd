package mcp

import (
	"os"
	"os/exec"
)

// process is a started stdio server (on Unix, its supervisor).
type process struct {
	cmd      *exec.Cmd
	stdin    *os.File // the agent's end of the server's stdin
	stdout   *os.File
	stderr   *os.File
	lifeline *os.File // Unix: closing it stops the server
	exited   chan struct{}
	waitErr  error // set before exited is closed
}
