package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxLinkHops bounds the symlinks followed while resolving one path; more
// means a loop (Linux itself gives up after 40).
const maxLinkHops = 255

// ResolvePath turns a path given to a tool into a clean absolute path:
// relative paths are taken from cwd, and "~" and "~/…" from the user's home
// directory. Symlinks are not resolved; see [CanonicalPath].
func ResolvePath(cwd, path string) (string, error) {
	if path == "" {
		return "", errors.New("path is empty")
	}
	if strings.ContainsRune(path, 0) {
		return "", fmt.Errorf("path %q contains a NUL byte", path)
	}
	if path == "~" || strings.HasPrefix(path, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("path %q: cannot expand ~: %w", path, err)
		}
		return filepath.Join(home, path[1:]), nil
	}
	if filepath.IsAbs(path) {
		return filepath.Clean(path), nil
	}
	if !filepath.IsAbs(cwd) {
		return "", fmt.Errorf("path %q: working directory %q is not absolute", path, cwd)
	}
	return filepath.Join(cwd, path), nil
}

// CanonicalPath resolves every symlink in the absolute path abs, following a
// chain of links to its final target even when that target does not exist
// (a dangling link resolves to where it points). Components after the first
// missing one are kept as written. A symlink loop is an error.
//
// Two paths that name the same file through different links have the same
// canonical path, which is what mutations are serialized and checked on.
func CanonicalPath(abs string) (string, error) {
	if !filepath.IsAbs(abs) {
		return "", fmt.Errorf("canonical path of %q: not absolute", abs)
	}
	rest := splitPath(abs)
	resolved := string(filepath.Separator)
	hops := 0
	for len(rest) > 0 {
		name := rest[0]
		rest = rest[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, name)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				// Nothing below a missing component can be a link.
				return filepath.Join(append([]string{next}, rest...)...), nil
			}
			return "", fmt.Errorf("canonical path of %s: %w", abs, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		hops++
		if hops > maxLinkHops {
			return "", fmt.Errorf("canonical path of %s: too many levels of symbolic links (a loop?)", abs)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("canonical path of %s: %w", abs, err)
		}
		if filepath.IsAbs(target) {
			resolved = string(filepath.Separator)
		}
		rest = append(splitPath(target), rest...)
	}
	return resolved, nil
}

// splitPath splits p at separators; empty elements are kept and skipped by
// the caller.
func splitPath(p string) []string {
	return strings.Split(p, string(filepath.Separator))
}

// within reports whether path is root or below it. Both must be clean and
// absolute.
func within(root, path string) bool {
	if root == path {
		return true
	}
	if root == string(filepath.Separator) {
		return strings.HasPrefix(path, root)
	}
	return strings.HasPrefix(path, root+string(filepath.Separator))
}

// displayPath shows abs relative to cwd when it is inside it, as titles and
// result texts do.
func displayPath(cwd, abs string) string {
	if cwd != "" && within(cwd, abs) && cwd != abs {
		if rel, err := filepath.Rel(cwd, abs); err == nil {
			return rel
		}
	}
	return abs
}

// checkCwd returns cwd as a clean absolute path after checking that it is
// an existing directory.
func checkCwd(cwd string) (string, error) {
	if cwd == "" {
		return "", errors.New("cwd is empty")
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return "", fmt.Errorf("cwd %q: %w", cwd, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("cwd %q: %w", cwd, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("cwd %q is not a directory", cwd)
	}
	return abs, nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// unsaved reports whether the editor holds unsaved changes to the file
// named abs, also under its canonical name canon.
func unsaved(b Buffers, abs, canon string) bool {
	if b == nil {
		return false
	}
	return b.Unsaved(abs) || (canon != "" && canon != abs && b.Unsaved(canon))
}
