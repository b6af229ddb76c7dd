// Package fspath is the one definition of a file's canonical path for the
// tools, the sandbox and editorsync: the security rules (writable roots,
// protected storage) and the editor's buffers compare canonical paths, so
// one file must have one path whoever computes it.
//
// It imports nothing of the project, so that every package may use it.
package fspath

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

// Canonical resolves every symlink in the absolute path abs, following a
// chain of links to its final target even when that target does not exist
// (a dangling link resolves to where it points). Components after the first
// missing one are kept as written (cleaned). A symlink loop is an error, as
// is a relative abs.
//
// Two paths that name the same file through different links have the same
// canonical path.
func Canonical(abs string) (string, error) {
	if !filepath.IsAbs(abs) {
		return "", fmt.Errorf("canonical path of %q: not absolute", abs)
	}
	rest := split(abs)
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
		rest = append(split(target), rest...)
	}
	return resolved, nil
}

// CanonicalOr returns the canonical path of p, or p cleaned when it has
// none (relative, a loop, an unreadable component): for lookups, where a
// path that cannot be resolved simply matches itself.
func CanonicalOr(p string) string {
	if c, err := Canonical(p); err == nil {
		return c
	}
	return filepath.Clean(p)
}

// split splits p at separators; empty elements are kept and skipped by
// the caller.
func split(p string) []string {
	return strings.Split(p, string(filepath.Separator))
}

// Within reports whether path is root or below it. Both must be clean and
// absolute (canonical, to compare files rather than names).
func Within(root, path string) bool {
	if root == path {
		return true
	}
	if root == string(filepath.Separator) {
		return strings.HasPrefix(path, root)
	}
	return strings.HasPrefix(path, root+string(filepath.Separator))
}

// WithinAny reports whether path is one of roots or below one of them.
func WithinAny(path string, roots []string) bool {
	for _, r := range roots {
		if Within(r, path) {
			return true
		}
	}
	return false
}
