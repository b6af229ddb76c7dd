package tools

import (
	"encoding/json"
	"fmt"
	"slices"
)

// New builds the built-in tool called name; an unknown name is an error
// listing the valid ones.
func New(name, cwd string, opts Options) (Tool, error) {
	switch name {
	case "read":
		return asTool(NewRead(cwd, opts))
	case "bash":
		return asTool(NewBash(cwd, opts))
	case "edit":
		return asTool(NewEdit(cwd, opts))
	case "write":
		return asTool(NewWrite(cwd, opts))
	}
	_, err := Select([]string{name})
	return nil, err
}

// asTool avoids a non-nil Tool interface holding a nil pointer.
func asTool[T Tool](t T, err error) (Tool, error) {
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Build selects names (see [Select]) and builds those tools. They share one
// mutation queue and one output store, created when opts has none.
func Build(names []string, cwd string, opts Options) ([]Tool, error) {
	names, err := Select(names)
	if err != nil {
		return nil, err
	}
	if opts.Queue == nil {
		opts.Queue = NewMutationQueue()
	}
	if opts.Outputs == nil && opts.DataDir != "" {
		opts.Outputs = NewOutputStore(OutputDir(opts.DataDir))
	}
	ts := make([]Tool, 0, len(names))
	for _, n := range names {
		t, err := New(n, cwd, opts)
		if err != nil {
			return nil, err
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// Spec describes a built-in tool without building it.
type Spec struct {
	Name        string
	Title       string
	Description string
	Schema      json.RawMessage
	Kind        Kind
}

// Specs describes the built-in tools, in the order of [Builtins].
func Specs() []Spec {
	return []Spec{
		{Name: "read", Title: "Read", Description: readDescription, Schema: json.RawMessage(readSchema), Kind: KindRead},
		{Name: "bash", Title: "Bash", Description: bashDescription, Schema: json.RawMessage(bashSchema), Kind: KindExecute},
		{Name: "edit", Title: "Edit", Description: editDescription, Schema: json.RawMessage(editSchema), Kind: KindEdit},
		{Name: "write", Title: "Write", Description: writeDescription, Schema: json.RawMessage(writeSchema), Kind: KindEdit},
	}
}

// Set is the tool set of a session: tools with distinct names, in order.
// A Set is immutable; it is safe for concurrent use.
type Set struct {
	list []Tool
}

// NewSet returns the set of ts. Two tools with one name are an error.
func NewSet(ts ...Tool) (*Set, error) {
	seen := map[string]bool{}
	for _, t := range ts {
		if seen[t.Name()] {
			return nil, fmt.Errorf("two tools are named %q", t.Name())
		}
		seen[t.Name()] = true
	}
	return &Set{list: slices.Clone(ts)}, nil
}

// Lookup returns the tool called name.
func (s *Set) Lookup(name string) (Tool, bool) {
	if s == nil {
		return nil, false
	}
	for _, t := range s.list {
		if t.Name() == name {
			return t, true
		}
	}
	return nil, false
}

// Tools returns the tools in order.
func (s *Set) Tools() []Tool {
	if s == nil {
		return nil
	}
	return slices.Clone(s.list)
}

// Names returns the names of the tools in order.
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	names := make([]string, len(s.list))
	for i, t := range s.list {
		names[i] = t.Name()
	}
	return names
}
