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
)

// writeChunk is how much is written between two checks of the context, so
// that a cancelled write of a large file stops early.
const writeChunk = 4 << 20

// newFileMode is the mode of a created file, before the umask.
const newFileMode = 0o644

// writeFileAtomic replaces (or creates) the regular file path with data so
// that a reader, or a crash at any moment, sees either the old content or
// the new one, never a mix: it writes a temp file in the same directory,
// fsyncs it, gives it the mode bits (and, when allowed, the owner) of the
// file it replaces, renames it over path and fsyncs the directory.
//
// On any error, including ctx being done before the rename, the temp file
// is removed and path is untouched.
func writeFileAtomic(ctx context.Context, path, data string) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir, base := filepath.Split(path)
	old, statErr := os.Stat(path)
	switch {
	case statErr == nil && !old.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file", path)
	case statErr != nil && !errors.Is(statErr, fs.ErrNotExist):
		return statErr
	}

	f, tmp, err := createTemp(dir, base)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
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
	if statErr == nil {
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
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	// The new content is in place; a failed directory sync only weakens
	// durability across a power loss, so it is not reported as a failure
	// of the write (some file systems do not support it at all).
	syncDir(dir)
	return nil
}

// createTemp creates a new, empty temp file next to the target. The mode
// newFileMode lets the umask apply as it would for the file itself.
func createTemp(dir, base string) (*os.File, string, error) {
	if dir == "" {
		dir = "."
	}
	for range 100 {
		var r [6]byte
		if _, err := rand.Read(r[:]); err != nil {
			return nil, "", err
		}
		name := filepath.Join(dir, "."+base+".tmp-"+hex.EncodeToString(r[:]))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, newFileMode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, "", fmt.Errorf("creating a temp file in %s: %w", dir, err)
		}
		return f, name, nil
	}
	return nil, "", fmt.Errorf("creating a temp file in %s: too many collisions", dir)
}

func syncDir(dir string) {
	if dir == "" {
		dir = "."
	}
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	d.Close()
}

// mkdirAll creates dir and its missing parents like os.MkdirAll, and
// returns the directories it created, deepest last, so that a failed
// mutation can remove them again.
func mkdirAll(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err == nil {
			if !fi.IsDir() {
				return nil, fmt.Errorf("cannot create directory %s: %s is not a directory", dir, d)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	var created []string
	for i := len(missing) - 1; i >= 0; i-- {
		err := os.Mkdir(missing[i], 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue // made by someone else meanwhile: not ours to remove
		}
		if err != nil {
			removeDirs(created)
			return nil, fmt.Errorf("creating directory %s: %w", missing[i], err)
		}
		created = append(created, missing[i])
	}
	return created, nil
}

// removeDirs removes directories made by mkdirAll, deepest first; a
// directory that is no longer empty stays.
func removeDirs(created []string) {
	for i := len(created) - 1; i >= 0; i-- {
		os.Remove(created[i])
	}
}
