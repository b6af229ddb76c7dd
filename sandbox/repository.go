package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// A repository under another name than `.git`.
//
// Git takes a directory for a repository when it holds a valid HEAD and
// either objects/ and refs/, or a commondir file naming a directory that
// holds them (is_git_directory in git's setup.c). Looking for a repository
// from a working directory, git tries every ancestor itself as well as its
// `.git`: unless the user set safe.bareRepository=explicit, a directory
// evil/ with HEAD, objects/, refs/ and a config with core.fsmonitor (and
// core.bare = false, core.worktree = .) is a repository for an editor's or
// a shell prompt's `git status` run in it, and git runs the fsmonitor
// command on the host.
//
// The rule, shared by the git guard and the file tools: an entry named
// HEAD, objects, refs or commondir (a piece, in any letter case) may not
// be created in a directory when the directory would then hold HEAD and
// either commondir or both objects and refs, counting entries by name
// alone: their type, content and permissions can change later without a
// new name, so they are not looked at. The last piece is refused, in
// whatever order the pieces come. The check and the creation happen under
// an exclusive flock of the directory, so that two creations racing (two
// commands, a command and a file tool) cannot each see the other's piece
// missing.

// repoPieces are the names is_git_directory looks for. commondir stands
// for objects and refs: they may be anywhere it points.
var repoPieces = [...]string{"HEAD", "objects", "refs", "commondir"}

// isRepoPiece reports whether name is one of repoPieces in any letter case
// (on a case-insensitive file system `head` is HEAD).
func isRepoPiece(name string) bool {
	for _, p := range repoPieces {
		if strings.EqualFold(name, p) {
			return true
		}
	}
	return false
}

// completesRepo reports whether a directory that holds the pieces for
// which has reports true, with the entry name added, is a repository by
// git's test.
func completesRepo(name string, has func(piece string) bool) bool {
	present := func(p string) bool { return strings.EqualFold(name, p) || has(p) }
	return present("HEAD") && (present("commondir") || (present("objects") && present("refs")))
}

// RepositoryError is the refusal of a name that would complete a git
// repository under another name than `.git`.
type RepositoryError struct {
	Dir, Name string
}

func (e *RepositoryError) Error() string {
	return fmt.Sprintf("creating %s would make %s a git repository (HEAD with objects and refs, or with commondir), "+
		"which git would use there without a .git; the sandbox and the file tools never complete one",
		filepath.Join(e.Dir, e.Name), e.Dir)
}

// ReserveCreate is the file tools' side of the rule. path is the absolute,
// canonical path of a file about to be written (created or replaced),
// missing parent directories included. When writing it would give a
// directory its last repository piece, it returns a *RepositoryError.
// Otherwise it returns a release function, which the caller calls once the
// file (and its parents) exist: until then, the directory that receives a
// piece is locked, so that no concurrent command or tool completes it in
// between. A lock held by someone else is waited for until ctx is done.
func ReserveCreate(ctx context.Context, path string) (release func(), err error) {
	dir, name, err := firstMissing(path)
	if err != nil {
		return nil, err
	}
	if !isRepoPiece(name) {
		return func() {}, nil
	}
	return reservePiece(ctx, dir, name)
}

// firstMissing returns the entry that writing path creates in an existing
// directory: the first missing component of path, or path's own name when
// it exists (replacing it gives the name again). Only that one matters: a
// directory created on the way holds nothing but what comes next.
func firstMissing(path string) (dir, name string, err error) {
	p := filepath.Clean(path)
	if !filepath.IsAbs(p) {
		return "", "", fmt.Errorf("sandbox: path %q %w", path, errNotAbs)
	}
	for {
		d := filepath.Dir(p)
		if d == p {
			return "", "", fmt.Errorf("sandbox: no existing directory above %s", path)
		}
		if _, err := os.Lstat(d); err == nil {
			return d, filepath.Base(p), nil
		} else if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", "", fmt.Errorf("sandbox: %w", err)
		}
		p = d
	}
}

// lockWait is how long ReserveCreate waits between two tries of a lock held
// by someone else.
const lockWait = 2 * time.Millisecond
