//go:build !linux && !darwin

package sandbox

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
)

// MaybeRunHelper does nothing where there is no sandbox.
func MaybeRunHelper() {}

func (s *Sandbox) probe(ctx context.Context) Status {
	return Status{Kind: KindNone, Reason: fmt.Sprintf("no sandbox is implemented for GOOS=%s", runtime.GOOS),
		Missing: []string{"sandbox backend for " + runtime.GOOS}}
}

func (s *Sandbox) command(ctx context.Context, st Status, pl *plan, script string, env []string) (*exec.Cmd, func(), error) {
	return nil, nil, fmt.Errorf("sandbox: not supported on GOOS=%s", runtime.GOOS)
}
