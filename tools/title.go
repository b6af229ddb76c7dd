package tools

import (
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Kind is the ACP kind of a tool (ToolKind): how a client shows its calls.
type Kind string

// The ACP tool kinds.
const (
	KindRead    Kind = "read"
	KindEdit    Kind = "edit"
	KindDelete  Kind = "delete"
	KindMove    Kind = "move"
	KindSearch  Kind = "search"
	KindExecute Kind = "execute"
	KindThink   Kind = "think"
	KindFetch   Kind = "fetch"
	KindOther   Kind = "other"
)

// Titler computes the title of one tool call from its arguments while
// they stream in. A Titler is used by one goroutine at a time.
type Titler interface {
	// Feed adds the next piece of the arguments' JSON text (which may be
	// cut anywhere) and returns the title so far. Feeding N bytes, in
	// pieces of any size, costs O(N) in all.
	Feed(piece string) string
}

// CallTitle returns the title of a call of t with the arguments args,
// complete or not.
func CallTitle(t Tool, args string) string { return t.NewTitler().Feed(args) }

// StaticTitle returns a Titler whose title is always title: for a tool
// whose calls are not told apart by their arguments.
func StaticTitle(title string) Titler { return staticTitle(title) }

type staticTitle string

func (t staticTitle) Feed(string) string { return string(t) }

// maxTitleField bounds how much of one argument a title looks at: more
// than any title shows, and than any path.
const maxTitleField = 4096

// FieldTitle returns a Titler that reads the top-level string members
// named by keys as they arrive and formats the title from them with
// format (get returns what has arrived of a member, at most 4 KiB of
// it). format runs only when one of those members changed.
func FieldTitle(keys []string, format func(get func(key string) string) string) Titler {
	want := func(k string) bool {
		for _, x := range keys {
			if x == k {
				return true
			}
		}
		return false
	}
	t := &fieldTitle{p: newPartialObject(want, maxTitleField), format: format}
	t.title = format(t.p.get)
	return t
}

type fieldTitle struct {
	p      *partialObject
	format func(func(string) string) string
	title  string
}

func (t *fieldTitle) Feed(piece string) string {
	if t.p.feed(piece) {
		t.title = t.format(t.p.get)
	}
	return t.title
}

// pathTitle is the titler of read, edit and write: "Read", then "Read
// <path>" once the path arrives. Paths inside cwd are shown relative to
// it.
func pathTitle(title, cwd string) Titler {
	return FieldTitle([]string{"path"}, func(get func(string) string) string {
		p := get("path")
		if p == "" {
			return title
		}
		return title + " " + titlePath(cwd, p)
	})
}

// maxTitleCommand is how much of a bash command's first line a title shows
// (PROTOCOL.md §4).
const maxTitleCommand = 80

// commandTitle is bash's titler: "Bash · <first line of the command>".
func commandTitle() Titler {
	return FieldTitle([]string{"command"}, func(get func(string) string) string {
		cmd, _, _ := strings.Cut(get("command"), "\n")
		cmd = strings.TrimSpace(cmd)
		if cmd == "" {
			return "Bash"
		}
		return "Bash · " + Shorten(cmd, maxTitleCommand)
	})
}

// titlePath shows p relative to cwd when it lies inside cwd.
func titlePath(cwd, p string) string {
	if !filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	if rel, err := filepath.Rel(cwd, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return rel
	}
	return p
}

// Shorten cuts s to at most n runes, marking the cut with "…".
func Shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
