package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// gitScanner finds the `.git` entries below the writable roots before each
// command, like findGit, but remembers the directories it has read: a
// directory that is the same directory with the same modification time as
// last time has the same entries, so only its subdirectories are visited
// again (one lstat each instead of reading it). Creating, removing or
// renaming an entry changes the modification time of the directory that
// holds it. A directory modified within racyWindow of being read is read
// again next time: with coarse timestamps a change right after the read
// could keep the time unchanged.
type gitScanner struct {
	mu   sync.Mutex
	dirs map[string]*scannedDir
	gen  uint64
	// now is time.Now; tests replace it.
	now func() time.Time
}

// racyWindow is how recent a modification time must be for the directory
// not to be trusted from memory.
const racyWindow = 2 * time.Second

type scannedDir struct {
	fi      fs.FileInfo
	trusted bool // not modified within racyWindow of the read
	subdirs []string
	gits    []gitEntry
	gen     uint64
}

func newGitScanner() *gitScanner {
	return &gitScanner{dirs: make(map[string]*scannedDir), now: time.Now}
}

// find lists every `.git` entry below root, as findGit does.
func (g *gitScanner) find(root string) ([]gitEntry, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gen++
	var out []gitEntry
	stack := []string{root}
	for len(stack) > 0 {
		dir := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		d, err := g.dir(dir)
		if err != nil {
			if dir != root && errors.Is(err, fs.ErrNotExist) {
				continue // removed while we looked
			}
			return nil, err
		}
		out = append(out, d.gits...)
		for _, s := range d.subdirs {
			stack = append(stack, filepath.Join(dir, s))
		}
	}
	// Forget directories that were not visited: removed, renamed, or
	// below a root no longer used.
	for p, d := range g.dirs {
		if d.gen != g.gen {
			delete(g.dirs, p)
		}
	}
	return out, nil
}

// dir returns the entries of interest of dir, from memory when it has not
// changed.
func (g *gitScanner) dir(dir string) (*scannedDir, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("sandbox policy: cannot scan %s for .git: %w", dir, err)
	}
	if d := g.dirs[dir]; d != nil && d.trusted && os.SameFile(d.fi, fi) && d.fi.ModTime().Equal(fi.ModTime()) {
		d.gen = g.gen
		return d, nil
	}
	readAt := g.now()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("sandbox policy: cannot scan %s for .git: %w", dir, err)
	}
	d := &scannedDir{fi: fi, gen: g.gen, trusted: readAt.Sub(fi.ModTime()) > racyWindow}
	if isRepoDir(ents) {
		// A repository under another name: protected whole, like a .git.
		d.gits = []gitEntry{{path: dir, repo: true}}
		g.dirs[dir] = d
		return d, nil
	}
	for _, e := range ents {
		full := filepath.Join(dir, e.Name())
		t := e.Type()
		if e.Name() == GitName {
			if t&fs.ModeSymlink != 0 {
				return nil, fmt.Errorf("sandbox policy: protected path %s is a symlink; refusing to run", full)
			}
			d.gits = append(d.gits, gitEntry{path: full, isFile: !e.IsDir()})
			continue
		}
		if t.IsDir() && !pseudoFS(full) {
			d.subdirs = append(d.subdirs, e.Name())
		}
	}
	g.dirs[dir] = d
	return d, nil
}
