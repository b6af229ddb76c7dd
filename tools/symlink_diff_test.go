//go:build unix

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestApprovalShowsTheRealTarget: a model names "notes.txt" in the
// workspace, which is a symlink to a file outside it. The approval request
// (its diff header and its change) must name the file really written, so a
// person is not asked about one file while another changes; denied, the
// outside file is untouched.
func TestApprovalShowsTheRealTarget(t *testing.T) {
	for _, tool := range []string{"write", "edit"} {
		t.Run(tool, func(t *testing.T) {
			cwd, outside := t.TempDir(), t.TempDir()
			outside, _ = filepath.EvalSymlinks(outside)
			real := filepath.Join(outside, "authorized_keys")
			putFile(t, real, "old\n")
			if err := os.Symlink(real, filepath.Join(cwd, "notes.txt")); err != nil {
				t.Fatal(err)
			}
			rec := &recorder{answer: func(context.Context, ApprovalRequest) error { return errors.New("no") }}
			opts := Options{Preset: WorkspaceWrite, Approver: rec}
			var tl Tool
			var args map[string]any
			if tool == "write" {
				tl, args = newWrite(t, cwd, opts), map[string]any{"path": "notes.txt", "content": "ssh-ed25519 AAAA attacker\n"}
			} else {
				tl, args = newEdit(t, cwd, opts), map[string]any{"path": "notes.txt", "edits": []map[string]any{{"oldText": "old\n", "newText": "ssh-ed25519 AAAA attacker\n"}}}
			}
			b, _ := json.Marshal(args)
			if _, err := tl.Execute(context.Background(), Call{ID: "c1", Args: b}); err == nil {
				t.Fatal("a denied change succeeded")
			}
			if rec.count() != 1 {
				t.Fatalf("asked %d times", rec.count())
			}
			req := rec.reqs[0]
			if !strings.Contains(req.Diff, "--- "+real+"\n+++ "+real+"\n") {
				t.Errorf("the diff header does not name the real target %s:\n%s", real, req.Diff)
			}
			if strings.Contains(req.Diff, filepath.Join(cwd, "notes.txt")) {
				t.Errorf("the diff header names the symlink, not its target:\n%s", req.Diff)
			}
			if req.Change == nil || req.Change.Path != real {
				t.Errorf("change %+v, want path %s", req.Change, real)
			}
			if readBack(t, real) != "old\n" {
				t.Error("the outside file was changed")
			}
		})
	}
}
