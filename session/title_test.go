package session

import (
	"strings"
	"testing"
)

func TestToolTitle(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, test := range []struct {
		name, tool, args, want string
	}{
		{"read relative", "read", `{"path":"a/b.go"}`, "Read a/b.go"},
		{"read inside cwd", "read", `{"path":"/work/p/a.go"}`, "Read a.go"},
		{"read outside cwd", "read", `{"path":"/etc/hosts"}`, "Read /etc/hosts"},
		{"sibling prefix is outside", "edit", `{"path":"/work/px/a.go"}`, "Edit /work/px/a.go"},
		{"write", "write", `{"path":"n.txt","content":"x"}`, "Write n.txt"},
		{"no path yet", "edit", `{"pa`, "Edit"},
		{"bash first line", "bash", `{"command":"go test ./...\necho done"}`, "Bash · go test ./..."},
		{"bash shortened", "bash", `{"command":"` + long + `"}`, "Bash · " + strings.Repeat("x", 79) + "…"},
		{"bash empty", "bash", `{}`, "Bash"},
	} {
		t.Run(test.name, func(t *testing.T) {
			if got := toolTitle(test.tool, "/work/p", []byte(test.args)); got != test.want {
				t.Errorf("toolTitle = %q, want %q", got, test.want)
			}
		})
	}
}

func TestToolKind(t *testing.T) {
	for tool, want := range map[string]string{"read": "read", "edit": "edit", "write": "edit", "bash": "execute", "x": "other"} {
		if got := toolKind(tool); got != want {
			t.Errorf("toolKind(%q) = %q, want %q", tool, got, want)
		}
	}
}
