package tools

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/coding-agent/coding-agent/sandbox/fspath"
)

// OutputDir returns the directory of retained full-output files under the
// agent's data directory: dataDir/outputs.
func OutputDir(dataDir string) string { return filepath.Join(dataDir, "outputs") }

// OutputStore keeps the full output of bash commands whose output was cut
// to its tail, and lets a host list and remove those files
// (PROTOCOL.md §9, _coding-agent/outputs/list and /remove).
//
// Everything it knows is encoded in the file names (creation time and tool
// call ID), so a store opened on the same directory by a later process
// lists the files of earlier ones. It holds no mutable state and is safe
// for concurrent use.
type OutputStore struct {
	dir string
}

// OutputInfo describes one retained output file.
type OutputInfo struct {
	// Path is the file's absolute path.
	Path string `json:"path"`
	// Bytes is the file's size.
	Bytes int64 `json:"bytes"`
	// ToolCallID is the ID of the tool call that produced the output; it
	// is empty for standalone calls without an ID.
	ToolCallID string `json:"toolCallId"`
	// CreatedAt is when the file was created.
	CreatedAt time.Time `json:"createdAt"`
}

// File name layout: "<unix nanoseconds>.<base64url(call ID)>.<random>.out".
// The base64url alphabet has no '.', so the name splits unambiguously, and
// any call ID (slashes, dots, non-ASCII) is safe in a file name.
const (
	outputSuffix = ".out"
	// maxCallIDInName bounds the encoded call ID so that names stay well
	// under the usual 255-byte limit; longer IDs are cut.
	maxCallIDInName = 120
)

// NewOutputStore returns a store of retained outputs in dir, which is
// created (mode 0700) when the first file is. A relative dir is made
// absolute, so that the paths the store hands out are absolute.
func NewOutputStore(dir string) *OutputStore {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return &OutputStore{dir: filepath.Clean(dir)}
}

// Dir returns the store's directory.
func (s *OutputStore) Dir() string { return s.dir }

// Create creates a new, empty retained output file (mode 0600) for the
// tool call callID and returns it open for writing. The caller writes the
// output and closes the file.
func (s *OutputStore) Create(callID string) (*os.File, error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the output directory %s: %w", s.dir, err)
	}
	id := callID
	if len(id) > maxCallIDInName {
		id = id[:maxCallIDInName]
	}
	pattern := strconv.FormatInt(time.Now().UnixNano(), 10) + "." +
		base64.RawURLEncoding.EncodeToString([]byte(id)) + ".*" + outputSuffix
	// os.CreateTemp opens with O_EXCL and mode 0600 and picks a unique
	// random part, so concurrent calls never share a file.
	f, err := os.CreateTemp(s.dir, pattern)
	if err != nil {
		return nil, fmt.Errorf("creating a retained output file in %s: %w", s.dir, err)
	}
	return f, nil
}

// parseOutputName decodes a file name made by Create. ok is false for any
// other name, which the store then ignores.
func parseOutputName(name string) (callID string, created time.Time, ok bool) {
	base, found := strings.CutSuffix(name, outputSuffix)
	if !found {
		return "", time.Time{}, false
	}
	parts := strings.Split(base, ".")
	if len(parts) != 3 || parts[2] == "" {
		return "", time.Time{}, false
	}
	nanos, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil || nanos < 0 {
		return "", time.Time{}, false
	}
	id, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", time.Time{}, false
	}
	return string(id), time.Unix(0, nanos).UTC(), true
}

// List returns the retained output files, oldest first. A missing
// directory means there are none.
func (s *OutputStore) List() ([]OutputInfo, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []OutputInfo{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing retained outputs in %s: %w", s.dir, err)
	}
	out := []OutputInfo{}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		id, created, ok := parseOutputName(e.Name())
		if !ok {
			continue
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("listing retained outputs: %s: %w", filepath.Join(s.dir, e.Name()), err)
		}
		out = append(out, OutputInfo{
			Path:       filepath.Join(s.dir, e.Name()),
			Bytes:      info.Size(),
			ToolCallID: id,
			CreatedAt:  created,
		})
	}
	slices.SortFunc(out, func(a, b OutputInfo) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	return out, nil
}

// Remove deletes one retained output file. path must be absolute and name
// a file the store created directly inside its directory; anything else is
// refused with an error naming the path, and nothing is removed.
func (s *OutputStore) Remove(path string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("path %q: not an absolute path; retained outputs are named by absolute path", path)
	}
	clean := filepath.Clean(path)
	if !s.inDir(filepath.Dir(clean)) {
		return fmt.Errorf("path %q: not inside the retained output directory %s; nothing removed", path, s.dir)
	}
	if _, _, ok := parseOutputName(filepath.Base(clean)); !ok {
		return fmt.Errorf("path %q: not a retained output file; nothing removed", path)
	}
	fi, err := os.Lstat(clean)
	if err != nil {
		return fmt.Errorf("path %q: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("path %q: not a regular file; nothing removed", path)
	}
	if err := os.Remove(clean); err != nil {
		return fmt.Errorf("path %q: %w", path, err)
	}
	return nil
}

// inDir reports whether dir is the store's directory, literally or once
// symbolic links are resolved.
func (s *OutputStore) inDir(dir string) bool {
	if dir == s.dir {
		return true
	}
	a, err1 := fspath.Canonical(dir)
	b, err2 := fspath.Canonical(s.dir)
	return err1 == nil && err2 == nil && a == b
}

// RemoveAll deletes every retained output file and returns how many it
// removed. It keeps going past a failure and reports all failures.
func (s *OutputStore) RemoveAll() (int, error) {
	list, err := s.List()
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, o := range list {
		err := os.Remove(o.Path)
		switch {
		case err == nil:
			n++
		case errors.Is(err, fs.ErrNotExist):
			// Removed by someone else meanwhile: the goal is reached.
		default:
			errs = append(errs, fmt.Errorf("removing %s: %w", o.Path, err))
		}
	}
	return n, errors.Join(errs...)
}
