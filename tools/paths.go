package tools

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/coding-agent/coding-agent/sandbox/fspath"
)

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

// CanonicalPath is [fspath.Canonical]: every symlink in the absolute path
// abs resolved, a dangling link to where it points, components after the
// first missing one kept as written. Mutations are serialized and checked
// on it, and the sandbox and editorsync compute the same path.
func CanonicalPath(abs string) (string, error) { return fspath.Canonical(abs) }

// splitPath splits p at separators; empty elements are kept and skipped by
// the caller.
func splitPath(p string) []string {
	return strings.Split(p, string(filepath.Separator))
}

// displayPath shows abs relative to cwd when it is inside it, as titles and
// result texts do.
func displayPath(cwd, abs string) string {
	if cwd != "" && fspath.Within(cwd, abs) && cwd != abs {
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
