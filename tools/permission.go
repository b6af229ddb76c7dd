package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/coding-agent/coding-agent/sandbox"
	"github.com/coding-agent/coding-agent/sandbox/fspath"
)

// protectedReason returns why a mutation of the file at abs (as named) and
// canon (its canonical path) touches protected storage, or "" if it does
// not. Protected storage is denied under every preset, approval or not:
// git's storage as the sandbox defines it ([sandbox.GitStorage]: anything
// named .git at any depth, a bare repository, the gitdir a .git file
// points to, .git/modules), and the agent's data directory.
func protectedReason(abs, canon, dataDir string) string {
	for _, p := range []string{abs, canon} {
		if g, ok := sandbox.GitStorage(p); ok {
			return fmt.Sprintf("%s is inside git's storage %s, which tools never modify under any preset (.git, repositories and the gitdirs that .git files name are git's alone)", abs, g)
		}
	}
	if dataDir != "" {
		d, err := ResolvePath("/", dataDir)
		if err == nil {
			roots := []string{d}
			if cd, err := CanonicalPath(d); err == nil {
				roots = append(roots, cd)
			}
			for _, r := range roots {
				if fspath.Within(r, abs) || fspath.Within(r, canon) {
					return fmt.Sprintf("%s is inside the agent's data directory %s, which tools never modify under any preset", abs, dataDir)
				}
			}
		}
	}
	return ""
}

// mutation is one file change that a tool is about to make, as the
// permission check sees it.
type mutation struct {
	tool   string
	call   Call
	abs    string // the path as named, absolute
	canon  string // its canonical path, the file actually written
	change FileChange
	diff   string
	// justification is the model's reason for the change, if it gave one.
	justification string
}

// policy is the permission side of [Options] for the tools of one cwd.
type policy struct {
	cwd      string
	preset   Preset
	roots    []string
	approver Approver
}

func newPolicy(cwd string, opts Options) (policy, error) {
	preset, err := ParsePreset(string(opts.Preset))
	if err != nil {
		return policy{}, err
	}
	return policy{cwd: cwd, preset: preset, roots: opts.WritableRoots, approver: opts.Approver}, nil
}

// allowed returns "" if the preset alone allows writing canon, and
// otherwise the policy-written reason shown with an approval request.
func (p policy) allowed(canon string) string {
	switch p.preset {
	case FullAccess:
		return ""
	case WorkspaceWrite:
		for _, r := range append([]string{p.cwd}, p.roots...) {
			for _, root := range canonicalRoot(r) {
				if fspath.Within(root, canon) {
					return ""
				}
			}
		}
		return "Writing outside the workspace is not allowed under workspace-write"
	default:
		return "Writing files is not allowed under read-only"
	}
}

// canonicalRoot returns the forms of a writable root to compare a
// canonical path with: the root's canonical path (and, should it not
// resolve, its clean form).
func canonicalRoot(r string) []string {
	if !filepath.IsAbs(r) {
		return nil
	}
	r = filepath.Clean(r)
	c, err := CanonicalPath(r)
	if err != nil {
		return []string{r}
	}
	return []string{c}
}

// authorize lets m through when the preset allows it, or when the approver
// explicitly allows this one change. Anything else, including a missing
// approver, an approver error and cancellation, is a *PermissionError and
// nothing must be written.
func (p policy) authorize(ctx context.Context, m mutation) error {
	reason := p.allowed(m.canon)
	if reason == "" {
		return nil
	}
	if p.approver == nil {
		return &PermissionError{Path: m.abs, Reason: fmt.Sprintf(
			"%s: %s, and there is no approval context to ask (standalone call); nothing was written",
			m.abs, reason)}
	}
	change := m.change
	req := ApprovalRequest{
		Kind:          RequestFileChange,
		Tool:          m.tool,
		CallID:        m.call.ID,
		Args:          json.RawMessage(m.call.Args),
		Change:        &change,
		Diff:          m.diff,
		Justification: m.justification,
		Reason:        reason,
	}
	err := p.approver.Approve(ctx, req)
	if err == nil && ctx.Err() == nil {
		return nil
	}
	if err == nil {
		err = ctx.Err()
	}
	pe := &PermissionError{Path: m.abs, Reason: fmt.Sprintf(
		"%s: %s; the change was not approved (%v); nothing was written", m.abs, reason, err)}
	if ctx.Err() != nil {
		return &cancelledPermission{pe: pe, ctxErr: ctx.Err()}
	}
	return pe
}

// cancelledPermission is a denial caused by cancellation: it is both a
// *PermissionError and the context's error, so that callers can tell.
type cancelledPermission struct {
	pe     *PermissionError
	ctxErr error
}

func (e *cancelledPermission) Error() string   { return e.pe.Error() }
func (e *cancelledPermission) Unwrap() []error { return []error{e.pe, e.ctxErr} }
