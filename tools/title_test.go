package tools

import (
	"strings"
	"testing"
)

func TestCallTitle(t *testing.T) {
	cwd := t.TempDir()
	long := strings.Repeat("x", 100)
	for _, test := range []struct {
		name, tool, args, want string
	}{
		{"read relative", "read", `{"path":"a/b.go"}`, "Read a/b.go"},
		{"read inside cwd", "read", `{"path":"` + cwd + `/a.go"}`, "Read a.go"},
		{"read outside cwd", "read", `{"path":"/etc/hosts"}`, "Read /etc/hosts"},
		{"sibling prefix is outside", "edit", `{"path":"` + cwd + `x/a.go"}`, "Edit " + cwd + "x/a.go"},
		{"write", "write", `{"path":"n.txt","content":"x"}`, "Write n.txt"},
		{"path after content", "write", `{"content":"x","path":"n.txt"}`, "Write n.txt"},
		{"no path yet", "edit", `{"pa`, "Edit"},
		{"nothing yet", "read", ``, "Read"},
		{"bash first line", "bash", `{"command":"go test ./...\necho done"}`, "Bash · go test ./..."},
		{"bash shortened", "bash", `{"command":"` + long + `"}`, "Bash · " + strings.Repeat("x", 79) + "…"},
		{"bash empty", "bash", `{}`, "Bash"},
		{"bash open", "bash", `{"command":"  ls -l`, "Bash · ls -l"},
	} {
		t.Run(test.name, func(t *testing.T) {
			tool, err := New(test.tool, cwd, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := CallTitle(tool, test.args); got != test.want {
				t.Errorf("title = %q, want %q", got, test.want)
			}
			// Streamed in small pieces, the last title is the same.
			tt := tool.NewTitler()
			var got string
			for i := 0; i < len(test.args); i += 3 {
				got = tt.Feed(test.args[i:min(i+3, len(test.args))])
			}
			if test.args != "" && got != test.want {
				t.Errorf("streamed title = %q, want %q", got, test.want)
			}
		})
	}
}

func TestKinds(t *testing.T) {
	cwd := t.TempDir()
	for _, spec := range Specs() {
		tool, err := New(spec.Name, cwd, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if tool.Kind() != spec.Kind || tool.Title() != spec.Title || tool.Description() != spec.Description || string(tool.Schema()) != string(spec.Schema) {
			t.Errorf("%s: the tool and its Spec disagree", spec.Name)
		}
	}
	want := map[string]Kind{"read": KindRead, "bash": KindExecute, "edit": KindEdit, "write": KindEdit}
	for _, spec := range Specs() {
		if spec.Kind != want[spec.Name] {
			t.Errorf("%s: kind %q, want %q", spec.Name, spec.Kind, want[spec.Name])
		}
	}
}

func TestSetRejectsDuplicateNames(t *testing.T) {
	ts, err := Build([]string{"read", "bash"}, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewSet(ts[0], ts[1], ts[0]); err == nil || !strings.Contains(err.Error(), `"read"`) {
		t.Errorf("NewSet with a duplicate: %v", err)
	}
	s, err := NewSet(ts...)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := s.Lookup("bash"); !ok || got != ts[1] {
		t.Error("Lookup(bash) did not find the bash tool")
	}
	if _, ok := s.Lookup("write"); ok {
		t.Error("Lookup(write) found a tool not in the set")
	}
	if strings.Join(s.Names(), ",") != "read,bash" {
		t.Errorf("Names = %q", s.Names())
	}
}

// TestValidateBeforeExecute checks that Validate refuses what Execute
// would refuse, and that Execute takes Validate's result as it is.
func TestValidateBeforeExecute(t *testing.T) {
	cwd := t.TempDir()
	bash, err := NewBash(cwd, Options{Preset: FullAccess})
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{`{"command":"  "}`, `{"command":"ls","sandbox_permissions":"require_escalated"}`, `{}`, `{"command":1}`, `nope`} {
		if _, err := bash.Validate([]byte(args)); ErrorKind(err) != "validation" {
			t.Errorf("Validate(%s) = %v, want a validation error", args, err)
		}
	}
	w, err := NewWrite(cwd, Options{Preset: FullAccess})
	if err != nil {
		t.Fatal(err)
	}
	args := []byte(`{"path":"a.txt","content":"from args"}`)
	in, err := w.Validate(args)
	if err != nil {
		t.Fatal(err)
	}
	in.(*writeArgs).Content = "from input"
	if _, err := w.Execute(t.Context(), Call{Args: args, Input: in}); err != nil {
		t.Fatal(err)
	}
	r, _ := NewRead(cwd, Options{})
	res := Run(t.Context(), r, Call{Args: []byte(`{"path":"a.txt"}`)})
	if res.Content[0].Text != "from input" {
		t.Errorf("Execute parsed Args again instead of taking Input: %q", res.Content[0].Text)
	}
}
