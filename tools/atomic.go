package tools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// writeChunk is how much is written between two checks of the context, so
// that a cancelled write of a large file stops early.
const writeChunk = 4 << 20

// newFileMode is the mode of a created file, before the umask.
const newFileMode = 0o644

// writeFileAtomic replaces (or creates) the regular file path with data;
// see [writeAt]. The parent directory must exist and is reached without
// following symlinks.
func writeFileAtomic(ctx context.Context, path, data string) error {
	d, err := openDir(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	base := filepath.Base(path)
	var old fs.FileInfo
	f, err := d.open(base, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	switch {
	case err == nil:
		old, err = f.Stat()
		f.Close()
		if err != nil {
			return err
		}
		if !old.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", path)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return writeAt(ctx, d, base, data, old)
}

// writeAt replaces (or creates) the regular file base in the directory d
// with data so that a reader, or a crash at any moment, sees either the old
// content or the new one, never a mix: it writes a temp file in d, fsyncs
// it, gives it the mode bits (and, when allowed, the owner) of old, the
// file it replaces (nil: there is none), renames it over base and fsyncs
// d. Everything is relative to d's descriptor: the path that led to d is
// not resolved again.
//
// On any error, including ctx being done before the rename, the temp file
// is removed and base is untouched.
func writeAt(ctx context.Context, d *dirHandle, base, data string, old fs.FileInfo) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	path := d.join(base)
	f, tmp, err := createTemp(d, base)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			d.remove(tmp)
		}
	}()
	for off := 0; off < len(data); off += writeChunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		end := min(off+writeChunk, len(data))
		if _, err := f.WriteString(data[off:end]); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	if old != nil {
		if err := f.Chmod(old.Mode().Perm() | old.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
			return fmt.Errorf("keeping the mode of %s: %w", path, err)
		}
		keepOwner(f, old)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", path, err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// The last look before the change is published: the path still leads
	// to this directory.
	if err := d.same(); err != nil {
		return err
	}
	if err := d.rename(tmp, base); err != nil {
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	d.sync()
	return nil
}

// tempMark is what a temp file's name has between the target's name and
// its random part: ".NAME.tmp-0123456789ab".
const (
	tempMark    = ".tmp-"
	tempRandLen = 12
	// maxTempBase bounds the target's name inside the temp file's, so
	// that a long name still leaves room (names are at most 255 bytes).
	maxTempBase = 200
)

// createTemp creates a new, empty temp file in d next to base. The mode
// newFileMode lets the umask apply as it would for the file itself.
func createTemp(d *dirHandle, base string) (*os.File, string, error) {
	if len(base) > maxTempBase {
		cut := maxTempBase
		for cut > 0 && !utf8.RuneStart(base[cut]) {
			cut--
		}
		base = base[:cut]
	}
	for range 100 {
		var r [tempRandLen / 2]byte
		if _, err := rand.Read(r[:]); err != nil {
			return nil, "", err
		}
		name := "." + base + tempMark + hex.EncodeToString(r[:])
		f, err := d.open(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, newFileMode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, "", fmt.Errorf("creating a temp file in %s: %w", d.path, err)
		}
		return f, name, nil
	}
	return nil, "", fmt.Errorf("creating a temp file in %s: too many collisions", d.path)
}

// isTempName reports whether name has the form of createTemp's names.
func isTempName(name string) bool {
	if len(name) < 1+1+len(tempMark)+tempRandLen || name[0] != '.' {
		return false
	}
	tail := name[len(name)-tempRandLen:]
	if !strings.HasSuffix(name[:len(name)-tempRandLen], tempMark) {
		return false
	}
	for i := 0; i < len(tail); i++ {
		c := tail[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// staleTempAge is how long a temp file must have gone unmodified to be
// taken for the remains of a killed write. A live write modifies its temp
// file at least every writeChunk and renames it right after the last
// fsync, so ten minutes of silence is a process that is gone (or stopped
// for that long: its rename then fails and the target is untouched).
const staleTempAge = 10 * time.Minute

// sweeper removes stale temp files of killed writes from the directories
// that mutations touch, each directory at most once per staleTempAge.
type sweeper struct {
	mu    sync.Mutex
	swept map[string]time.Time
	now   func() time.Time
}

// sweep removes, from d, the regular files named like createTemp's that
// were last modified staleTempAge ago or earlier.
func (s *sweeper) sweep(d *dirHandle) {
	now := s.now()
	s.mu.Lock()
	if s.swept == nil {
		s.swept = make(map[string]time.Time)
	}
	if last, ok := s.swept[d.path]; ok && now.Sub(last) < staleTempAge {
		s.mu.Unlock()
		return
	}
	for p, t := range s.swept {
		if now.Sub(t) >= staleTempAge {
			delete(s.swept, p)
		}
	}
	s.swept[d.path] = now
	s.mu.Unlock()
	names, err := d.names()
	if err != nil {
		return
	}
	for _, n := range names {
		if !isTempName(n) {
			continue
		}
		if reg, mtime := d.regularAge(n); reg && now.Sub(mtime) >= staleTempAge {
			d.remove(n)
		}
	}
}

// madeDirs is what mkdirAllAt created: each directory as a name in its
// opened parent, shallowest first.
type madeDirs struct {
	parents []*dirHandle
	names   []string
	open    []*dirHandle // every handle opened, to close
}

// undo removes the created directories, deepest first; one that is no
// longer empty stays.
func (m *madeDirs) undo() {
	for i := len(m.names) - 1; i >= 0; i-- {
		m.parents[i].rmdir(m.names[i])
	}
}

func (m *madeDirs) close() {
	for _, h := range m.open {
		h.Close()
	}
}

// mkdirAllAt creates the directory dir and its missing parents like
// os.MkdirAll, without following symlinks: from the deepest existing
// ancestor (opened without following any), each missing directory is
// made and opened relative to its parent's descriptor. It returns the
// open directory and what was created; the caller closes both.
func mkdirAllAt(dir string) (*dirHandle, *madeDirs, error) {
	var missing []string
	cur := dir
	var top *dirHandle
	for {
		h, err := openDir(cur)
		if err == nil {
			top = h
			break
		}
		if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(cur) == cur {
			return nil, nil, fmt.Errorf("cannot create directory %s: %w", dir, err)
		}
		missing = append(missing, filepath.Base(cur))
		cur = filepath.Dir(cur)
	}
	m := &madeDirs{open: []*dirHandle{top}}
	h := top
	for i := len(missing) - 1; i >= 0; i-- {
		sub, made, err := h.mkdir(missing[i])
		if err != nil {
			m.undo()
			m.close()
			return nil, nil, fmt.Errorf("creating directory %s: %w", h.join(missing[i]), err)
		}
		m.open = append(m.open, sub)
		if made {
			m.parents = append(m.parents, h)
			m.names = append(m.names, missing[i])
		}
		h = sub
	}
	return h, m, nil
}
