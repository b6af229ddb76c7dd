package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/coding-agent/coding-agent/sandbox/fspath"
)

// GitName is the protected name found at any depth of the writable roots.
const GitName = ".git"

// quarantineSuffix names a `.git` created by a sandboxed command, renamed
// after the command so that git no longer treats it as a repository.
const quarantineSuffix = ".blocked-by-sandbox"

// protect fills the protection fields of pl: the explicit protected paths,
// every `.git` in the writable roots (and the gitdirs that `.git` files
// point to), the missing ones that need a placeholder, and the directories
// to pin.
func (pl *plan) protect(explicit []string, findGit func(root string) ([]gitEntry, error)) error {
	var prot, missing []string
	for i, p := range explicit {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("sandbox policy: protected path %d %q %w", i, p, errNotAbs)
		}
		c, exists, err := canonProtected(p)
		if err != nil {
			return err
		}
		if exists {
			prot = append(prot, c)
		} else if fspath.WithinAny(c, pl.roots) {
			missing = append(missing, c)
		}
	}
	for _, r := range pl.roots {
		gits, err := findGit(r)
		if err != nil {
			return err
		}
		for _, g := range gits {
			pl.gitNames = append(pl.gitNames, g.path)
			prot = append(prot, g.path)
			if g.isFile {
				extra, miss := gitdirTargets(g.path)
				prot = append(prot, extra...)
				for _, m := range miss {
					if fspath.WithinAny(m, pl.roots) {
						missing = append(missing, m)
					}
				}
			}
		}
	}
	pl.protected = dedupe(prot)
	pl.missing = dedupe(missing)
	for _, p := range slices.Concat(pl.protected, pl.missing) {
		if slices.Contains(pl.roots, p) {
			return fmt.Errorf("sandbox policy: writable root %s is also protected", p)
		}
		for _, r := range pl.roots {
			if !strings.HasPrefix(p, r+"/") {
				continue
			}
			for d := filepath.Dir(p); d != r && len(d) > len(r); d = filepath.Dir(d) {
				pl.pins = append(pl.pins, d)
			}
		}
	}
	pl.pins = dedupe(pl.pins)
	byDepth(pl.pins)
	byDepth(pl.protected)
	return nil
}

// canonProtected returns the canonical form of a protected path and
// whether it exists. An existing path that is a symlink is refused: a bind
// mount would protect its target instead. A missing path is returned as
// its first missing component, which is what a placeholder must occupy.
func canonProtected(p string) (string, bool, error) {
	p = filepath.Clean(p)
	fi, err := os.Lstat(p)
	switch {
	case err == nil:
		if fi.Mode()&fs.ModeSymlink != 0 {
			return "", false, fmt.Errorf("sandbox policy: protected path %s is a symlink; refusing to run (a symlink cannot be protected reliably)", p)
		}
		if p == "/" {
			return p, true, nil
		}
		parent, err := fspath.Canonical(filepath.Dir(p))
		if err != nil {
			return "", false, fmt.Errorf("sandbox policy: protected path %s: %w", p, err)
		}
		return filepath.Join(parent, filepath.Base(p)), true, nil
	case errors.Is(err, fs.ErrNotExist):
		// Climb to the deepest existing ancestor.
		var rest []string
		cur := p
		for {
			rest = append(rest, filepath.Base(cur))
			cur = filepath.Dir(cur)
			if _, err := os.Lstat(cur); err == nil || cur == "/" {
				break
			}
		}
		anc, err := fspath.Canonical(cur)
		if err != nil {
			return "", false, fmt.Errorf("sandbox policy: protected path %s: %w", p, err)
		}
		first := filepath.Join(anc, rest[len(rest)-1])
		if fi, err := os.Lstat(first); err == nil {
			// The ancestor was a symlink to a directory that has it.
			if fi.Mode()&fs.ModeSymlink != 0 {
				return "", false, fmt.Errorf("sandbox policy: protected path %s is a symlink; refusing to run", first)
			}
			slices.Reverse(rest)
			return canonProtected(filepath.Join(anc, filepath.Join(rest...)))
		}
		return first, false, nil
	default:
		return "", false, fmt.Errorf("sandbox policy: protected path %s: %w", p, err)
	}
}

type gitEntry struct {
	path   string
	isFile bool
	repo   bool // a directory that git takes for a repository (repository.go), not a .git
}

// isRepoDir reports whether a directory with the entries ents is a git
// repository by the rule of repository.go.
func isRepoDir(ents []fs.DirEntry) bool {
	var n int
	for _, e := range ents {
		if isRepoPiece(e.Name()) {
			n++
		}
	}
	if n < 2 {
		return false
	}
	has := func(p string) bool {
		for _, e := range ents {
			if strings.EqualFold(e.Name(), p) {
				return true
			}
		}
		return false
	}
	return completesRepo("", has)
}

// GitStorage is the one definition of git's storage for the sandbox and
// the file tools: what nothing but git may change, under every preset.
// It reports whether the absolute path p is in git's storage, and which
// storage: the nearest of p and its ancestors that is
//   - named .git, in any letter case (on a case-insensitive file system
//     .GIT is .git): a repository's directory or a worktree's .git file;
//   - a directory that git takes for a repository by isRepoDir's rule
//     (HEAD with objects and refs, or with commondir): a bare repository,
//     the gitdir that a .git file points to (git init --separate-git-dir,
//     a worktree's gitdir, .git/modules/NAME), a repository under another
//     name.
//
// The sandbox finds the same storage by scanning the writable roots (every
// .git, the gitdirs and common dirs that .git files name, every directory
// isRepoDir accepts) and keeps it read-only; its writable roots may not be
// in it. The file tools ask GitStorage about the path as named and its
// canonical path before every mutation. Pass a canonical path (fspath) to
// ask about a file rather than a name: symlinks in p are followed by the
// look for repository pieces, not by the look for names.
func GitStorage(p string) (string, bool) {
	if !filepath.IsAbs(p) {
		return "", false
	}
	for c := filepath.Clean(p); ; c = filepath.Dir(c) {
		if strings.EqualFold(filepath.Base(c), GitName) || isRepoPath(c) {
			return c, true
		}
		if filepath.Dir(c) == c {
			return "", false
		}
	}
}

// isRepoPath is isRepoDir for a directory named by its path: the pieces
// are looked up by name (Lstat) rather than listed, a few system calls
// per directory wherever the path leads. A piece in another letter case
// is found where the file system folds case, as git finds it.
func isRepoPath(dir string) bool {
	has := func(piece string) bool {
		_, err := os.Lstat(filepath.Join(dir, piece))
		return err == nil
	}
	return has("HEAD") && completesRepo("", has)
}

// findGit lists every `.git` entry below root without following symlinks
// and without descending into `.git` directories or into pseudo file
// systems (/proc, /sys). A `.git` that is a symlink is refused.
func findGit(root string) ([]gitEntry, error) {
	var out []gitEntry
	stack := []string{root}
	for len(stack) > 0 {
		dir := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		ents, err := os.ReadDir(dir)
		if err != nil {
			if dir != root && errors.Is(err, fs.ErrNotExist) {
				continue // removed while we looked
			}
			return nil, fmt.Errorf("sandbox policy: cannot scan %s for .git: %w", dir, err)
		}
		if isRepoDir(ents) {
			out = append(out, gitEntry{path: dir, repo: true})
			continue
		}
		for _, e := range ents {
			full := filepath.Join(dir, e.Name())
			t := e.Type()
			if e.Name() == GitName {
				if t&fs.ModeSymlink != 0 {
					return nil, fmt.Errorf("sandbox policy: protected path %s is a symlink; refusing to run", full)
				}
				out = append(out, gitEntry{path: full, isFile: !e.IsDir()})
				continue
			}
			if t.IsDir() && !pseudoFS(full) {
				stack = append(stack, full)
			}
		}
	}
	return out, nil
}

// pseudoFS reports directories that are never workspaces and must not be
// walked when a writable root is "/".
func pseudoFS(p string) bool {
	switch p {
	case "/proc", "/sys", "/dev":
		return true
	}
	return false
}

// gitdirTargets reads a `.git` file ("gitdir: PATH") and returns the gitdir
// it points to and the common dir of a worktree, canonical; targets that do
// not exist are returned as missing (first missing component).
func gitdirTargets(gitFile string) (exist, missing []string) {
	b, err := os.ReadFile(gitFile)
	if err != nil {
		return nil, nil
	}
	line, _, _ := strings.Cut(string(b), "\n")
	target, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return nil, nil
	}
	target = strings.TrimSpace(target)
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(gitFile), target)
	}
	add := func(p string) {
		c, ok, err := canonProtected(p)
		switch {
		case err != nil: // a symlink: protect what it resolves to
			if r, err := fspath.Canonical(p); err == nil {
				if _, err := os.Lstat(r); err == nil {
					exist = append(exist, r)
				}
			}
		case ok:
			exist = append(exist, c)
		default:
			missing = append(missing, c)
		}
	}
	add(target)
	if cd, err := os.ReadFile(filepath.Join(target, "commondir")); err == nil {
		common := strings.TrimSpace(string(cd))
		if !filepath.IsAbs(common) {
			common = filepath.Join(target, common)
		}
		add(common)
	}
	return exist, missing
}

// quarantineNewGit renames every `.git` below roots that is not in known
// (it was created by the sandboxed command) and is not a placeholder, so
// that git no longer treats it as a repository; nothing is deleted. It
// returns the new names.
func quarantineNewGit(roots, known []string) ([]string, error) {
	var moved []string
	var errs []error
	for _, r := range roots {
		gits, err := findGit(r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, g := range gits {
			if g.repo || slices.Contains(known, g.path) || isEmptyDir(g.path) {
				continue
			}
			dst := g.path + quarantineSuffix
			for i := 1; ; i++ {
				if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
					break
				}
				dst = fmt.Sprintf("%s%s-%d-%d", g.path, quarantineSuffix, time.Now().UnixNano(), i)
			}
			if err := os.Rename(g.path, dst); err != nil {
				errs = append(errs, fmt.Errorf("quarantine %s: %w", g.path, err))
				continue
			}
			moved = append(moved, dst)
		}
	}
	return moved, errors.Join(errs...)
}

// isEmptyDir reports whether p is an empty directory: a placeholder, or a
// `.git` that git ignores because it holds nothing.
func isEmptyDir(p string) bool {
	fi, err := os.Lstat(p)
	if err != nil || !fi.IsDir() {
		return false
	}
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	names, _ := f.Readdirnames(1)
	return len(names) == 0
}

func dedupe(s []string) []string {
	var out []string
	for _, v := range s {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// byDepth sorts paths shallow first, so that a mount on a directory never
// hides a mount made below it.
func byDepth(s []string) {
	slices.SortStableFunc(s, func(a, b string) int {
		return strings.Count(a, "/") - strings.Count(b, "/")
	})
}

func concat(a ...[]string) []string {
	var out []string
	for _, s := range a {
		out = append(out, s...)
	}
	return out
}
