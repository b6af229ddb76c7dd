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
func (t toolSandbox) Command(ctx context.Context, req tools.SandboxRequest) (tools.SandboxedCommand, error) {
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
