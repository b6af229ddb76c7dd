package tools

import (
	"slices"
	"strings"
	"testing"
)

func TestSelect(t *testing.T) {
	for _, test := range []struct {
		name    string
		in      []string
		want    []string
		wantErr string
	}{
		{"empty means none", []string{}, []string{}, ""},
		{"all", []string{"read", "bash", "edit", "write"}, []string{"read", "bash", "edit", "write"}, ""},
		{"duplicates removed, first kept", []string{"write", "read", "write", "read"}, []string{"write", "read"}, ""},
		{"unknown rejects the list", []string{"read", "grep"}, nil, `unknown tool "grep" (valid tools: read, bash, edit, write)`},
		{"case matters", []string{"Read"}, nil, `unknown tool "Read"`},
	} {
		t.Run(test.name, func(t *testing.T) {
			got, err := Select(test.in)
			if test.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), test.wantErr) {
					t.Fatalf("Select(%q) error %v, want %q", test.in, err, test.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, test.want) {
				t.Fatalf("Select(%q) = %q, %v; want %q", test.in, got, err, test.want)
			}
		})
	}
}

func TestBuild(t *testing.T) {
	dir := t.TempDir()
	ts, err := Build([]string{"edit", "read", "edit"}, dir, Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range ts {
		names = append(names, tool.Name())
		if tool.Title() == "" || tool.Description() == "" || len(tool.Schema()) == 0 {
			t.Errorf("%s: empty title, description or schema", tool.Name())
		}
	}
	if !slices.Equal(names, []string{"edit", "read"}) {
		t.Errorf("names %q", names)
	}
	if _, err := Build([]string{"nope"}, dir, Options{}); err == nil {
		t.Error("Build accepted an unknown name")
	}
	if tool, err := New("nope", dir, Options{}); err == nil || tool != nil {
		t.Errorf("New(nope) = %v, %v", tool, err)
	}
}
