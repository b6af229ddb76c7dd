package session

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// maxTitleCommand is how much of a bash command's first line a title shows
// (PROTOCOL.md §4).
const maxTitleCommand = 80

// toolKind maps a tool name to the ACP ToolKind.
func toolKind(name string) string {
	switch name {
	case "read":
		return "read"
	case "edit", "write":
		return "edit"
	case "bash":
		return "execute"
	}
	return "other"
}

// toolTitle computes a tool call's title from its arguments, which may be
// incomplete while they stream: "Read <path>", "Edit <path>", "Write
// <path>", "Bash · <command>". Paths inside cwd are shown relative to it.
func toolTitle(name, cwd string, args json.RawMessage) string {
	f := partialFields(string(args))
	a := struct{ Path, Command string }{f["path"], f["command"]}
	switch name {
	case "read", "edit", "write":
		t := strings.ToUpper(name[:1]) + name[1:]
		if a.Path == "" {
			return t
		}
		return t + " " + displayPath(cwd, a.Path)
	case "bash":
		cmd, _, _ := strings.Cut(a.Command, "\n")
		cmd = strings.TrimSpace(cmd)
		if cmd == "" {
			return "Bash"
		}
		return "Bash · " + shorten(cmd, maxTitleCommand)
	}
	return name
}

// displayPath shows p relative to cwd when it lies inside cwd.
func displayPath(cwd, p string) string {
	if !filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	if rel, err := filepath.Rel(cwd, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return rel
	}
	return p
}

// shorten cuts s to at most n runes, marking the cut with "…".
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
