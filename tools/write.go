package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

const writeSchema = `{
  "type": "object",
  "properties": {
    "path": {
      "type": "string",
      "minLength": 1,
      "description": "File to create or replace: relative to the working directory, absolute, or starting with ~/."
    },
    "content": {
      "type": "string",
      "description": "The complete new content of the file."
    },
    "justification": {
      "type": "string",
      "minLength": 1,
      "maxLength": 240,
      "description": "Optional brief reason for this change, in the user's language; shown to the user when the change needs their approval."
    }
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`

const writeDescription = `Create a file or replace its whole content. Missing parent directories are created.
The file is replaced atomically (readers never see a partial file) and keeps its permission bits. Prefer edit for changing part of an existing file.
Writing outside what the permission preset allows needs the user's approval; give a brief justification in the user's language, shown to them when approval is needed. Files inside .git and the agent's data directory can never be written.`

// Write is the write tool: it creates or replaces a whole file.
type Write struct {
	m *mutator
	v *validator
}

// NewWrite returns the write tool for the working directory cwd, which must
// be an existing directory.
func NewWrite(cwd string, opts Options) (*Write, error) {
	m, err := newMutator("write", cwd, opts)
	if err != nil {
		return nil, err
	}
	return &Write{m: m, v: newValidator("write", writeSchema)}, nil
}

// Name returns "write".
func (*Write) Name() string { return "write" }

// Title returns "Write".
func (*Write) Title() string { return "Write" }

// Description returns what the model is told about write.
func (*Write) Description() string { return writeDescription }

// Schema returns the JSON Schema of write's arguments.
func (*Write) Schema() json.RawMessage { return json.RawMessage(writeSchema) }

// Kind returns [KindEdit].
func (*Write) Kind() Kind { return KindEdit }

// NewTitler returns the title of a write call: "Write <path>".
func (t *Write) NewTitler() Titler { return pathTitle("Write", t.m.cwd) }

// Validate checks and decodes write's arguments.
func (t *Write) Validate(args json.RawMessage) (any, error) {
	var a writeArgs
	if err := t.v.decode(args, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

type writeArgs struct {
	Path          string `json:"path"`
	Content       string `json:"content"`
	Justification string `json:"justification"`
}

// Execute creates or replaces the file named in call.Args.
func (t *Write) Execute(ctx context.Context, call Call) (Result, error) {
	in, err := input[*writeArgs](call, t.Validate)
	if err != nil {
		return Result{}, err
	}
	args := in
	a, err := t.m.mutate(ctx, call, args.Path, args.Justification, func(string, string, bool) (string, []span, error) {
		return args.Content, nil, nil
	})
	if err != nil {
		return Result{}, err
	}
	name := displayPath(t.m.cwd, a.abs)
	var text string
	switch {
	case a.unchanged:
		text = fmt.Sprintf("%s already has this content (%d bytes); nothing changed", name, len(args.Content))
	case !a.existed:
		text = fmt.Sprintf("Created %s (%d bytes)", name, len(args.Content))
	default:
		text = fmt.Sprintf("Wrote %s (%d bytes)", name, len(args.Content))
	}
	res := a.result(text)
	res.Details["bytes"] = len(args.Content)
	res.Details["created"] = !a.existed
	return res, nil
}

// mutator runs the flow that edit and write share: resolve the path,
// queue on its canonical path, refuse protected storage and files with
// unsaved editor changes, compute the new content from the original, check
// the preset or ask for approval (holding the path), and replace the file
// atomically.
type mutator struct {
	tool    string
	cwd     string
	opts    Options
	policy  policy
	queue   *MutationQueue
	sweeper *sweeper
}

func newMutator(tool, cwd string, opts Options) (*mutator, error) {
	abs, err := checkCwd(cwd)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	p, err := newPolicy(abs, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	q := opts.Queue
	if q == nil {
		q = NewMutationQueue()
	}
	return &mutator{tool: tool, cwd: abs, opts: opts, policy: p, queue: q, sweeper: &sweeper{now: time.Now}}, nil
}

// applied describes a mutation that was made (or found to be a no-op).
type applied struct {
	abs, canon string
	old        string
	existed    bool
	new        string
	diff       string
	line       int  // first changed line, 1-based
	unchanged  bool // the new content equals the old: nothing was written
}

// result builds the tool result for a.
func (a applied) result(text string) Result {
	res := TextResult(text, map[string]any{
		"path":             a.canon,
		"diff":             a.diff,
		"firstChangedLine": a.line,
	})
	if !a.unchanged {
		fc := FileChange{Path: a.canon, NewText: a.new, Line: a.line}
		if a.existed {
			old := a.old
			fc.OldText = &old
		}
		res.Changes = []FileChange{fc}
	}
	return res
}

// errUnsaved is the message for a file whose editor buffer is dirty.
func errUnsaved(abs string) error {
	return fmt.Errorf("%s has unsaved changes in the editor; save or revert it first (nothing was written)", abs)
}

// mutate runs the mutation flow for path. compute gets the original
// content (exists false: the file does not exist) and returns the new one,
// and, if it knows them, the changed spans (sorted, disjoint) that let the
// diff skip the rest; its error aborts the call with nothing written.
func (m *mutator) mutate(ctx context.Context, call Call, path, justification string,
	compute func(abs, old string, exists bool) (string, []span, error)) (applied, error) {
	var a applied
	if err := ctx.Err(); err != nil {
		return a, err
	}
	abs, err := ResolvePath(m.cwd, path)
	if err != nil {
		return a, fmt.Errorf("%s: %w", m.tool, err)
	}
	canon, err := CanonicalPath(abs)
	if err != nil {
		return a, fmt.Errorf("%s: %w", m.tool, err)
	}
	a.abs, a.canon = abs, canon

	release, err := m.queue.Acquire(ctx, canon)
	if err != nil {
		return a, err
	}
	defer release()

	if r := protectedReason(abs, canon, m.opts.DataDir); r != "" {
		return a, &PermissionError{Path: abs, Reason: fmt.Sprintf("%s: %s; nothing was written", m.tool, r)}
	}
	// Refused before asking; checked again, and held, at the write.
	unlock, err := reserveCreate(ctx, m.tool, abs, canon)
	if err != nil {
		return a, err
	}
	unlock()
	if unsaved(m.opts.Buffers, abs, canon) {
		return a, fmt.Errorf("%s: %w", m.tool, errUnsaved(abs))
	}
	// From here on the file is reached through its directory's descriptor,
	// opened once without following any symlink: canon has none, so a
	// symlink now is a concurrent change, and a directory swapped for a
	// link cannot redirect the read, the temp file or the rename.
	dir, base := filepath.Dir(canon), filepath.Base(canon)
	d, err := openDir(dir)
	switch {
	case err == nil:
		defer d.Close()
		m.sweeper.sweep(d)
	case errors.Is(err, fs.ErrNotExist):
		d = nil // created below, once the change is allowed
	default:
		return a, fmt.Errorf("%s: %w", m.tool, err)
	}
	old, before, err := readOriginal(d, base, canon)
	if err != nil {
		return a, fmt.Errorf("%s: %w", m.tool, err)
	}
	a.existed = before != nil
	a.old = old
	neu, spans, err := compute(abs, old, a.existed)
	if err != nil {
		return a, fmt.Errorf("%s: %w", m.tool, err)
	}
	a.new = neu
	if a.existed && a.old == a.new {
		a.unchanged = true
		a.line = 0
		return a, nil
	}
	a.line = firstChangedLine(a.old, a.new)
	// The diff names the file really written: the target behind a symlink,
	// not the path as the model wrote it.
	oldName := canon
	if !a.existed {
		oldName = "/dev/null"
	}
	if spans != nil {
		a.diff = diffSpans(oldName, canon, a.old, a.new, alignSpans(a.old, a.new, spans), maxDiffBytes)
	} else {
		a.diff = unifiedDiff(oldName, canon, a.old, a.new, maxDiffBytes)
	}

	mut := mutation{tool: m.tool, call: call, abs: abs, canon: canon, diff: a.diff, justification: justification}
	mut.change = FileChange{Path: canon, NewText: a.new, Line: a.line}
	if a.existed {
		o := a.old
		mut.change.OldText = &o
	}
	asked := m.policy.allowed(canon) != ""
	if err := m.policy.authorize(ctx, mut); err != nil {
		return a, err
	}
	call.started()
	if asked {
		// The approval took time: the file and the editor buffer must still
		// be what the approved change was computed from.
		if unsaved(m.opts.Buffers, abs, canon) {
			return a, fmt.Errorf("%s: %w", m.tool, errUnsaved(abs))
		}
	}
	if err := unchangedSince(d, dir, base, canon, old, before, asked); err != nil {
		return a, fmt.Errorf("%s: %w", m.tool, err)
	}

	if unlock, err = reserveCreate(ctx, m.tool, abs, canon); err != nil {
		return a, err
	}
	defer unlock()
	var made *madeDirs
	if d == nil {
		if d, made, err = mkdirAllAt(dir); err != nil {
			return a, fmt.Errorf("%s: %w", m.tool, err)
		}
		defer made.close()
	}
	// The descriptor is what the checks above were made on: the path,
	// free of symlinks, still leads to it.
	err = d.same()
	if err == nil {
		err = writeAt(ctx, d, base, neu, before)
	}
	if err != nil {
		if made != nil {
			made.undo()
		}
		if ctx.Err() != nil {
			return a, fmt.Errorf("%s: %s was not changed: %w", m.tool, abs, ctx.Err())
		}
		return a, fmt.Errorf("%s: %w", m.tool, err)
	}
	return a, nil
}

// firstChangedLine returns the 1-based line of the first difference
// between a and b.
func firstChangedLine(a, b string) int {
	p := commonPrefix(a, b)
	return strings.Count(a[:p], "\n") + 1
}

// maxMutableSize is the largest file edit and write replace: they hold the
// old and the new content in memory.
const maxMutableSize = 256 << 20

// readOriginal reads the file base of the directory d (canon is its
// name in errors) whole, never through a symlink. A missing file, or a
// nil d (the directory does not exist), gives nil info and no error;
// anything that is not a regular file is an error.
func readOriginal(d *dirHandle, base, canon string) (string, fs.FileInfo, error) {
	if d == nil {
		return "", nil, nil
	}
	// O_NONBLOCK: a named pipe must not block the open.
	f, err := d.open(base, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil, nil
	}
	if errors.Is(err, syscall.ELOOP) {
		return "", nil, fmt.Errorf("%s: %w", canon, errPathChanged)
	}
	if err != nil {
		return "", nil, fmt.Errorf("reading %s: %w", canon, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", nil, err
	}
	if fi.IsDir() {
		return "", nil, fmt.Errorf("%s is a directory", canon)
	}
	if !fi.Mode().IsRegular() {
		return "", nil, fmt.Errorf("%s is not a regular file (%s)", canon, fi.Mode().Type())
	}
	if fi.Size() > maxMutableSize {
		return "", nil, fmt.Errorf("%s is %d MiB, larger than the %d MiB that edit and write handle; use bash for it",
			canon, fi.Size()>>20, maxMutableSize>>20)
	}
	// Read straight into the string's memory: no second copy of a large
	// file.
	var sb strings.Builder
	sb.Grow(int(fi.Size()) + 1)
	if _, err := io.Copy(&sb, onlyReader{f}); err != nil {
		return "", nil, fmt.Errorf("reading %s: %w", canon, err)
	}
	return sb.String(), fi, nil
}

// onlyReader hides the WriterTo of *os.File so that io.Copy reads in
// chunks into the destination, which has room for the whole file.
type onlyReader struct{ io.Reader }

// unchangedSince checks that the file base of d (the directory dir; d is
// nil if it did not exist) is still the one that was read (info before,
// content old), so that a change computed from it does not overwrite what
// someone else wrote meanwhile. full compares the content too.
func unchangedSince(d *dirHandle, dir, base, canon, old string, before fs.FileInfo, full bool) error {
	changed := fmt.Errorf("%s changed on disk while this change was prepared; nothing was written, read it again", canon)
	if d == nil {
		nd, err := openDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		defer nd.Close()
		d = nd
	}
	f, err := d.open(base, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if before == nil {
		if err == nil {
			f.Close()
			return changed
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return changed
	}
	if err != nil {
		return changed
	}
	now, err := f.Stat()
	f.Close()
	if err != nil || !os.SameFile(before, now) || now.Size() != before.Size() || !now.ModTime().Equal(before.ModTime()) {
		return changed
	}
	if full {
		cur, _, err := readOriginal(d, base, canon)
		if err != nil || cur != old {
			return changed
		}
	}
	return nil
}
