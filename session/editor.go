package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/coding-agent/coding-agent/editorsync"
	"github.com/coding-agent/coding-agent/tools"
)

// Editor buffer sync (PROTOCOL.md §8): a session with Options.OnFilesChanged
// watches its roots and the directories of the documents the editor opens,
// reports every change on disk, attributes it to the tool call that made
// it, guards dirty buffers against edit/write, and gives bash calls diffs
// of the files they changed.

// startSync starts the session's watcher when the host wants change
// reports.
func (s *Session) startSync() error {
	if s.opts.OnFilesChanged == nil {
		return nil
	}
	sy, err := editorsync.New(editorsync.Options{
		Roots:    s.roots,
		OnChange: s.opts.OnFilesChanged,
		Logger:   s.env.Logger.With("session", s.id),
	})
	if err != nil {
		return fmt.Errorf("watching the session roots: %w", err)
	}
	s.sync = sy
	return nil
}

// Documents returns the session's open editor documents, nil when the
// session does not sync with an editor.
func (s *Session) Documents() *editorsync.Documents {
	if s.sync == nil {
		return nil
	}
	return s.sync.Documents()
}

// buffers is what the tools see of the editor's buffers.
func (s *Session) buffers() tools.Buffers {
	if s.sync != nil {
		return s.sync
	}
	if s.opts.Buffers != nil {
		return s.opts.Buffers
	}
	return nil
}

// watchCall brackets a tool call for attribution. For a tool that runs
// commands (kind execute: bash), which change files without reporting
// them, it also records the files the call changes, so that they can be
// shown as diffs. The returned function ends the call and returns those
// diffs.
func (s *Session) watchCall(ctx context.Context, id string, t tools.Tool) func() []editorsync.FileDiff {
	if s.sync == nil {
		return func() []editorsync.FileDiff { return nil }
	}
	track := t.Kind() == tools.KindExecute
	s.sync.BeginCall(id, t.Name())
	if track {
		s.sync.TrackCall(id)
	}
	return func() []editorsync.FileDiff {
		// Once the watcher has read every event queued before this point,
		// the call's own changes are attributed to it; ending it without a
		// grace period keeps a change made right after it external.
		s.sync.Barrier(ctx)
		s.sync.FinishCall(id)
		if !track {
			return nil
		}
		return s.sync.CallDiffs(id, editorsync.DiffLimits{})
	}
}

// addDiffs puts the files a bash command changed on its final update as
// diff content and locations, and lists them in rawOutput's details.
func addDiffs(u *ToolCallFinished, res *tools.Result, diffs []editorsync.FileDiff) {
	if len(diffs) == 0 {
		return
	}
	var changed []map[string]any
	for _, d := range diffs {
		entry := map[string]any{"path": d.Path}
		switch {
		case d.NewText == nil:
			entry["kind"] = "deleted"
		case d.OldText == nil && !d.OldUnknown:
			entry["kind"] = "created"
		default:
			entry["kind"] = "modified"
		}
		if d.Binary || d.TooLarge || d.OldUnknown {
			entry["diff"] = false
		}
		changed = append(changed, entry)
		u.Locations = append(u.Locations, Location{Path: d.Path, Line: max(d.Line, 1)})
		if d.Binary || d.TooLarge || d.OldUnknown || d.NewText == nil {
			// ACP v1 cannot express a deletion or a change without the
			// old text as a diff; the path is in locations and details.
			continue
		}
		u.Diffs = append(u.Diffs, Diff{Path: d.Path, OldText: d.OldText, NewText: *d.NewText})
	}
	if res.Details == nil {
		res.Details = map[string]any{}
	}
	res.Details["changedFiles"] = changed
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
