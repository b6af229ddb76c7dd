package tools

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
