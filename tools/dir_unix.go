//go:build unix

package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// dirHandle is an open directory that a mutation works in: the file it
// replaces is read, its temp file created, fsynced and renamed, all
// relative to this descriptor, so that swapping a directory of the path
// for a symlink meanwhile cannot move the work elsewhere.
type dirHandle struct {
	f    *os.File
	path string // the path it was opened by, with no symlink in it
}

// errPathChanged reports a directory that is a symlink, or no longer a
// directory, although the path was just resolved: something is changing
// the tree while the tool works.
var errPathChanged = errors.New("a directory of the path changed (or became a symlink) while the file was being changed; nothing was written")

// openDir opens the directory at the absolute path dir without following
// any symlink in any component: a symlink anywhere is errPathChanged, a
// missing component fs.ErrNotExist.
func openDir(dir string) (*dirHandle, error) {
	fd, err := openDirNoFollow(dir)
	if err != nil {
		return nil, dirError(dir, err)
	}
	return &dirHandle{f: os.NewFile(uintptr(fd), dir), path: dir}, nil
}

func dirError(dir string, err error) error {
	switch {
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.EXDEV):
		if p := notDir(dir); p != "" {
			return fmt.Errorf("%s: %s is not a directory", dir, p)
		}
		return fmt.Errorf("%s: %w", dir, errPathChanged)
	case errors.Is(err, fs.ErrNotExist):
		return &fs.PathError{Op: "open", Path: dir, Err: fs.ErrNotExist}
	}
	return &fs.PathError{Op: "open", Path: dir, Err: err}
}

// notDir returns the first component of dir that exists and is neither
// a directory nor a symlink (a file where a directory should be), or "".
func notDir(dir string) string {
	p := "/"
	for _, c := range splitPath(dir) {
		if c == "" {
			continue
		}
		p = filepath.Join(p, c)
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink != 0 {
			return ""
		}
		if !fi.IsDir() {
			return p
		}
	}
	return ""
}

// walkNoFollow opens dir from "/" one component at a time with O_NOFOLLOW:
// the portable form of RESOLVE_NO_SYMLINKS.
func walkNoFollow(dir string) (int, error) {
	fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for _, c := range splitPath(dir) {
		if c == "" || c == "." {
			continue
		}
		if c == ".." {
			unix.Close(fd)
			return -1, unix.EXDEV // canonical paths have none
		}
		next, err := unix.Openat(fd, c, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

func (d *dirHandle) fd() int { return int(d.f.Fd()) }

// Close closes the directory.
func (d *dirHandle) Close() error { return d.f.Close() }

// same checks that the directory's path still leads, without a symlink,
// to this directory: the re-check after work that took time (or after
// the parent's creation) and before the rename that publishes a change.
func (d *dirHandle) same() error {
	again, err := openDir(d.path)
	if err != nil {
		return err
	}
	defer again.Close()
	a, err := d.f.Stat()
	if err != nil {
		return err
	}
	b, err := again.f.Stat()
	if err != nil {
		return err
	}
	if !os.SameFile(a, b) {
		return fmt.Errorf("%s: %w", d.path, errPathChanged)
	}
	return nil
}

// open opens name in the directory; a symlink at name is never followed
// (ELOOP).
func (d *dirHandle) open(name string, flag int, perm os.FileMode) (*os.File, error) {
	fd, err := unix.Openat(d.fd(), name, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.join(name), Err: err}
	}
	return os.NewFile(uintptr(fd), d.join(name)), nil
}

func (d *dirHandle) join(name string) string {
	if d.path == "/" {
		return "/" + name
	}
	return d.path + "/" + name
}

// rename renames from to to, both in the directory.
func (d *dirHandle) rename(from, to string) error {
	if err := unix.Renameat(d.fd(), from, d.fd(), to); err != nil {
		return &os.LinkError{Op: "rename", Old: d.join(from), New: d.join(to), Err: err}
	}
	return nil
}

// remove removes the file name from the directory.
func (d *dirHandle) remove(name string) error {
	return unix.Unlinkat(d.fd(), name, 0)
}

// rmdir removes the empty directory name.
func (d *dirHandle) rmdir(name string) error {
	return unix.Unlinkat(d.fd(), name, unix.AT_REMOVEDIR)
}

// mkdir creates the directory name and opens it; an existing directory is
// opened (made is false).
func (d *dirHandle) mkdir(name string) (sub *dirHandle, made bool, err error) {
	err = unix.Mkdirat(d.fd(), name, 0o755)
	made = err == nil
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, false, &fs.PathError{Op: "mkdir", Path: d.join(name), Err: err}
	}
	fd, err := unix.Openat(d.fd(), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if made {
			d.rmdir(name)
		}
		return nil, false, dirError(d.join(name), err)
	}
	return &dirHandle{f: os.NewFile(uintptr(fd), d.join(name)), path: d.join(name)}, made, nil
}

// sync fsyncs the directory. A failure only weakens durability across a
// power loss, and some file systems do not support it: not reported.
func (d *dirHandle) sync() { _ = d.f.Sync() }

// names lists the directory's entries.
func (d *dirHandle) names() ([]string, error) {
	fd, err := unix.Openat(d.fd(), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	return f.Readdirnames(-1)
}

// regularAge returns whether name is a regular file (not following a
// symlink) and its modification time.
func (d *dirHandle) regularAge(name string) (bool, time.Time) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return false, time.Time{}
	}
	sec, nsec := st.Mtim.Unix()
	return st.Mode&unix.S_IFMT == unix.S_IFREG, time.Unix(sec, nsec)
}

// keepOwner gives f the owner of the file it replaces when the process may
// (root, or the same owner); otherwise the new file belongs to the caller,
// as with any editor that saves by renaming.
func keepOwner(f *os.File, old fs.FileInfo) {
	st, ok := old.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	if int(st.Uid) == os.Geteuid() && int(st.Gid) == os.Getegid() {
		return
	}
	_ = f.Chown(int(st.Uid), int(st.Gid))
}
