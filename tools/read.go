package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

const readSchema = `{
  "type": "object",
  "properties": {
    "path": {
      "type": "string",
      "minLength": 1,
      "description": "File to read: relative to the working directory, absolute, or starting with ~/."
    },
    "offset": {
      "type": "integer",
      "minimum": 1,
      "description": "1-based line number to start at. Default 1."
    },
    "limit": {
      "type": "integer",
      "minimum": 1,
      "description": "Maximum number of lines to return (at most 2000)."
    }
  },
  "required": ["path"],
  "additionalProperties": false
}`

const readDescription = `Read a text file. Returns whole lines, starting at line "offset" (1-based, default 1), at most "limit" lines.
Output is limited to 2000 lines or 50 KB (51200 bytes), whichever comes first. When the output is cut, it ends with a note such as "[... Use offset=2001 to continue.]": call read again with that offset to get the next part.
A line that alone exceeds 50 KB is not shown; the note suggests a bash command that prints part of it.
Binary files (containing NUL bytes) and directories are rejected; use bash to list a directory. If the offset is past the end of the file, the error says how many lines the file has.
The text is returned exactly as stored in the file, without line numbers.`

// readBuffer is the size of the reads from the file. It bounds the memory
// of a call together with MaxBytes.
const readBuffer = 256 << 10

// Read is the read tool: it streams the head of a window of a text file.
type Read struct {
	cwd  string
	opts Options
	v    *validator
}

// NewRead returns the read tool for the working directory cwd, which must
// be an existing directory. Reads are allowed under every preset.
func NewRead(cwd string, opts Options) (*Read, error) {
	abs, err := checkCwd(cwd)
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if _, err := ParsePreset(string(opts.Preset)); err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	return &Read{cwd: abs, opts: opts, v: newValidator("read", readSchema)}, nil
}

// Name returns "read".
func (*Read) Name() string { return "read" }

// Title returns "Read".
func (*Read) Title() string { return "Read" }

// Description returns what the model is told about read.
func (*Read) Description() string { return readDescription }

// Schema returns the JSON Schema of read's arguments.
func (*Read) Schema() json.RawMessage { return json.RawMessage(readSchema) }

// Kind returns [KindRead].
func (*Read) Kind() Kind { return KindRead }

// NewTitler returns the title of a read call: "Read <path>".
func (t *Read) NewTitler() Titler { return pathTitle("Read", t.cwd) }

// Validate checks and decodes read's arguments.
func (t *Read) Validate(args json.RawMessage) (any, error) {
	var a readArgs
	if err := t.v.decode(args, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

type readArgs struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

// Execute reads the window of the file that call.Args asks for. The file
// is streamed: only the bytes up to the end of the window are read.
func (t *Read) Execute(ctx context.Context, call Call) (Result, error) {
	in, err := input[*readArgs](call, t.Validate)
	if err != nil {
		return Result{}, err
	}
	args := *in
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	call.started()
	if args.Offset == 0 {
		args.Offset = 1
	}
	limit := MaxLines
	if args.Limit > 0 && args.Limit < limit {
		limit = args.Limit
	}
	abs, err := ResolvePath(t.cwd, args.Path)
	if err != nil {
		return Result{}, fmt.Errorf("read: %w", err)
	}
	// O_NONBLOCK: opening a named pipe must not hang; it is rejected below.
	f, err := os.OpenFile(abs, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return Result{}, fmt.Errorf("read: %s", describeOpenError(abs, err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Result{}, fmt.Errorf("read: %s: %w", abs, err)
	}
	if fi.IsDir() {
		return Result{}, fmt.Errorf("read: %s is a directory, not a file; use bash (ls) to list it", abs)
	}
	if !fi.Mode().IsRegular() {
		return Result{}, fmt.Errorf("read: %s is not a regular file (%s)", abs, fi.Mode().Type())
	}

	w, err := readWindow(ctx, f, args.Offset, limit)
	if err != nil {
		return Result{}, fmt.Errorf("read: %s: %w", abs, err)
	}
	return t.result(abs, args, w), nil
}

func describeOpenError(abs string, err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("%s does not exist", abs)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("%s: permission denied", abs)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s: %v", abs, pe.Err)
	}
	return err.Error()
}

// window is what readWindow found.
type window struct {
	text     []byte // whole lines; the last one without its "\n"
	lines    int    // number of lines in text
	more     bool   // lines follow the window
	byBytes  bool   // the window was cut by MaxBytes
	longLine bool   // the first line alone exceeds MaxBytes: text is empty
	total    int    // the file's line count, when EOF was reached; else 0
	empty    bool   // the file is empty
}

// errBinary is returned for a file that contains a NUL byte.
var errBinary = errors.New("binary")

// readWindow streams r from the start, skipping offset-1 lines, and
// collects at most limit lines and MaxBytes bytes. Every byte read is
// checked for NUL.
func readWindow(ctx context.Context, r io.Reader, offset, limit int) (window, error) {
	s := scanner{r: r, buf: make([]byte, readBuffer)}
	var w window
	// Skip to the window, counting newlines in whole buffers.
	line := 1
	for line < offset {
		if s.start == s.end {
			if err := ctx.Err(); err != nil {
				return w, err
			}
			ok, err := s.fill()
			if err != nil {
				return w, err
			}
			if !ok {
				total := line - 1
				if s.last != '\n' && s.read > 0 {
					total++
				}
				return w, offsetError(offset, total)
			}
		}
		data := s.buf[s.start:s.end]
		need := offset - line
		c := bytes.Count(data, []byte{'\n'})
		if c < need {
			line += c
			s.start = s.end
			continue
		}
		for range need {
			data = data[bytes.IndexByte(data, '\n')+1:]
		}
		s.start = s.end - len(data)
		line = offset
	}

	// Collect whole lines.
	out := make([]byte, 0, 4096)
	for w.lines < limit {
		lineStart := len(out)
		complete, sawAny := false, false
		for {
			if s.start == s.end {
				ok, err := s.fill()
				if err != nil {
					return w, err
				}
				if !ok {
					break
				}
			}
			sawAny = true
			data := s.buf[s.start:s.end]
			i := bytes.IndexByte(data, '\n')
			chunk := data
			if i >= 0 {
				chunk = data[:i]
			}
			if len(out)+len(chunk) > MaxBytes {
				// The line does not fit; it stays for the next call.
				out = out[:lineStart]
				w.byBytes = true
				w.more = true
				if w.lines == 0 {
					w.longLine = true
				}
				break
			}
			out = append(out, chunk...)
			s.start += len(chunk)
			if i >= 0 {
				out = append(out, '\n')
				s.start++
				complete = true
				break
			}
		}
		if w.byBytes {
			break
		}
		if !sawAny || (!complete && len(out) == lineStart) {
			// End of file: no further line.
			w.total = offset + w.lines - 1
			break
		}
		w.lines++
		if !complete {
			w.total = offset + w.lines - 1
			break
		}
	}
	if w.lines == 0 && !w.longLine {
		if offset == 1 {
			w.empty = true
		} else {
			return w, offsetError(offset, offset-1)
		}
	}
	if w.lines == limit && w.total == 0 {
		// Is there another line after the window?
		if s.start == s.end {
			ok, err := s.fill()
			if err != nil {
				return w, err
			}
			if !ok {
				w.total = offset + w.lines - 1
			}
		}
		w.more = s.start < s.end
	}
	w.text = bytes.TrimSuffix(out, []byte{'\n'})
	return w, nil
}

func offsetError(offset, total int) error {
	return fmt.Errorf("offset %d is past the end of the file, which has %d lines", offset, total)
}

// scanner is a buffer over the file that rejects NUL bytes as it reads.
type scanner struct {
	r          io.Reader
	buf        []byte
	start, end int
	read       int64 // bytes read so far
	last       byte  // the last byte read
}

// fill reads more bytes into the empty buffer. It reports false at the end
// of the file.
func (s *scanner) fill() (bool, error) {
	s.start, s.end = 0, 0
	for {
		n, err := s.r.Read(s.buf)
		if n > 0 {
			if bytes.IndexByte(s.buf[:n], 0) >= 0 {
				return false, fmt.Errorf("the file is binary (it contains a NUL byte); read shows text files only")
			}
			s.end = n
			s.read += int64(n)
			s.last = s.buf[n-1]
			return true, nil
		}
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
	}
}

func (t *Read) result(abs string, args readArgs, w window) Result {
	details := map[string]any{
		"path":      abs,
		"offset":    args.Offset,
		"lines":     w.lines,
		"truncated": w.more,
	}
	var text []byte
	last := args.Offset + w.lines - 1
	next := last + 1
	switch {
	case w.longLine:
		next = args.Offset + 1
		text = fmt.Appendf(nil, "[Line %d is longer than the %d-byte limit and is not shown. Read part of it with bash, e.g.: sed -n '%dp' %s | head -c %d]",
			args.Offset, MaxBytes, args.Offset, shellQuote(abs), MaxBytes)
	case w.empty:
		text = fmt.Appendf(nil, "[%s is empty]", displayPath(t.cwd, abs))
	default:
		text = w.text
		if w.more {
			why := ""
			switch {
			case w.byBytes:
				why = fmt.Sprintf(" (%d-byte limit)", MaxBytes)
			case w.lines == MaxLines:
				why = fmt.Sprintf(" (%d-line limit)", MaxLines)
			}
			text = fmt.Appendf(text, "\n\n[Showing lines %d-%d%s; the file continues. Use offset=%d to continue.]", args.Offset, last, why, next)
		}
	}
	if w.more {
		details["nextOffset"] = next
	}
	if w.total > 0 {
		details["totalLines"] = w.total
	}
	if t.opts.Buffers != nil {
		canon, _ := CanonicalPath(abs)
		if unsaved(t.opts.Buffers, abs, canon) {
			details["unsaved"] = true
			text = append(text, "\n\n[The editor has unsaved changes to this file; the text above is the version on disk.]"...)
		}
	}
	return TextResult(string(text), details)
}
