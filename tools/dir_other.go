//go:build !unix

package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// dirHandle is, where there is no openat, the directory's path: each
// operation checks with Lstat that no component is a link, which narrows
// the race of a swapped directory but cannot close it.
type dirHandle struct {
	path string
	fi   fs.FileInfo
}

var errPathChanged = errors.New("a directory of the path changed (or became a link) while the file was being changed; nothing was written")

func openDir(dir string) (*dirHandle, error) {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Lstat(d)
		if err != nil {
			return nil, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir() {
			return nil, fmt.Errorf("%s: %w", dir, errPathChanged)
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, err
	}
	return &dirHandle{path: dir, fi: fi}, nil
}

func (d *dirHandle) Close() error { return nil }

func (d *dirHandle) same() error {
	again, err := openDir(d.path)
	if err != nil {
		return err
	}
	if !os.SameFile(d.fi, again.fi) {
		return fmt.Errorf("%s: %w", d.path, errPathChanged)
	}
	return nil
}

func (d *dirHandle) join(name string) string { return filepath.Join(d.path, name) }

func (d *dirHandle) open(name string, flag int, perm os.FileMode) (*os.File, error) {
	if fi, err := os.Lstat(d.join(name)); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "open", Path: d.join(name), Err: errPathChanged}
	}
	return os.OpenFile(d.join(name), flag, perm)
}

func (d *dirHandle) rename(from, to string) error { return os.Rename(d.join(from), d.join(to)) }
func (d *dirHandle) remove(name string) error     { return os.Remove(d.join(name)) }
func (d *dirHandle) rmdir(name string) error      { return os.Remove(d.join(name)) }

func (d *dirHandle) mkdir(name string) (*dirHandle, bool, error) {
	err := os.Mkdir(d.join(name), 0o755)
	made := err == nil
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, false, err
	}
	sub, err := openDir(d.join(name))
	if err != nil {
		if made {
			os.Remove(d.join(name))
		}
		return nil, false, err
	}
	return sub, made, nil
}

func (d *dirHandle) sync() {}

func (d *dirHandle) names() ([]string, error) {
	f, err := os.Open(d.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

func (d *dirHandle) regularAge(name string) (bool, time.Time) {
	fi, err := os.Lstat(d.join(name))
	if err != nil {
		return false, time.Time{}
	}
	return fi.Mode().IsRegular(), fi.ModTime()
}

// keepOwner does nothing where files have no Unix owner.
func keepOwner(*os.File, fs.FileInfo) {}
