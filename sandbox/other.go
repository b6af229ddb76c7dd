//go:build !linux && !darwin

package sandbox

import (
	"context"
	"fmt"
	"runtime"
)

// MaybeRunHelper does nothing where there is no sandbox.
func MaybeRunHelper() {}

func (s *Sandbox) probe(ctx context.Context) Status {
	return Status{Kind: KindNone, Reason: fmt.Sprintf("no sandbox is implemented for GOOS=%s", runtime.GOOS),
		Missing: []string{"sandbox backend for " + runtime.GOOS}}
}

func (s *Sandbox) command(ctx context.Context, st Status, pl *plan, script string, env []string) (backend, error) {
	return nil, fmt.Errorf("sandbox: not supported on GOOS=%s", runtime.GOOS)
}

// spares is empty: no helper is started ahead of time here.
type spares struct{}

func (s *Sandbox) closeSpare() {}

func (s *Sandbox) prewarm(ctx context.Context, st Status) error { return nil }
