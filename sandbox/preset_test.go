package sandbox

import (
	"strings"
	"testing"
)

func TestParsePreset(t *testing.T) {
	for in, want := range map[string]Preset{"": ReadOnly, "read-only": ReadOnly, "workspace-write": WorkspaceWrite, "full-access": FullAccess} {
		if got, err := ParsePreset(in); err != nil || got != want {
			t.Errorf("ParsePreset(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParsePreset("yolo"); err == nil || !strings.Contains(err.Error(), `"yolo"`) {
		t.Errorf("ParsePreset(yolo) = %v, want an error naming it", err)
	}
}

// TestFullAccessIsNeverSandboxed: the one preset type includes
// full-access, which the sandbox must refuse rather than run a command
// under some policy.
func TestFullAccessIsNeverSandboxed(t *testing.T) {
	sb := New(Options{})
	defer sb.Close()
	if _, err := sb.plan(Policy{Preset: FullAccess}, t.TempDir()); err == nil || !strings.Contains(err.Error(), "cannot be sandboxed") {
		t.Errorf("plan(full-access) = %v, want it refused", err)
	}
}
