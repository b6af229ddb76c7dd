package session

import (
	"context"

	"github.com/coding-agent/coding-agent/sandbox"
	"github.com/coding-agent/coding-agent/tools"
)

// ToolSandbox adapts a sandbox to the interface the bash tool consumes.
func ToolSandbox(s *sandbox.Sandbox) tools.Sandbox { return toolSandbox{s} }

type toolSandbox struct{ s *sandbox.Sandbox }

// Command prepares req under the equivalent sandbox policy.
//
// The bash tool owns stopping its commands, sandboxed or not: SIGTERM to
// the process group, its KillGrace, then SIGKILL. The sandbox gets a
// context it cannot see cancelled, so that it does not stop the command on
// its own as well (with its own grace, which sandbox.Command applies to
// callers that do not stop commands themselves).
func (t toolSandbox) Command(ctx context.Context, req tools.SandboxRequest) (tools.SandboxedCommand, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ctx = context.WithoutCancel(ctx)
	p := sandbox.Policy{
		Preset:        req.Preset,
		WritableRoots: req.WritableRoots,
		Protected:     req.Protected,
	}
	cmd, err := t.s.Command(ctx, p, req.Command, req.Dir, req.Env)
	if err != nil {
		return nil, err
	}
	return cmd, nil
}
