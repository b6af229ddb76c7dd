// Package display makes model and tool text safe to show to a person: on a
// terminal, in a browser, in an editor's tool-call card. Text from a model
// or a tool may carry terminal escape sequences, carriage returns, cursor
// movements and Unicode bidi controls that make the screen show something
// other than what will run ("$ ls -la" drawn over "touch PWNED"). Every
// function here renders such characters visibly instead, so that what is
// shown is what is there.
//
// The package is a leaf: it imports only the standard library, so that
// every front end (the ACP adapter, --print, the terminal and web UIs) uses
// the same rules.
package display

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Text returns s with every character that could change how the rest of
// the text is drawn rendered visibly, keeping line feeds and tabs, which
// multi-line content (a diff, a script, a justification) needs for its
// layout:
//
//   - C0 controls other than \n and \t, DEL, and C1 controls (U+0080–U+009F,
//     among them the 8-bit CSI) become Go-style escapes: "\r", "\x1b",
//     "\u009b";
//   - the line and paragraph separators U+2028 and U+2029, and U+0085 (NEL),
//     become "\u2028", "\u2029", "\u0085";
//   - bidi embeddings, overrides, isolates and marks (U+202A–U+202E,
//     U+2066–U+2069, U+200E, U+200F, U+061C) and invisible characters that
//     hide differences (U+200B, U+2060, U+FEFF) become "\u202e" and so on;
//   - a byte that is not valid UTF-8 becomes "\x9b" and so on.
//
// Everything else, printable Unicode included, is kept as is.
func Text(s string) string { return neutralize(s, true) }

// Line is [Text] for text that must stay on one line (a command name, a
// path, a label): line feeds and tabs are rendered as "\n" and "\t" too.
func Line(s string) string { return neutralize(s, false) }

// Title returns the first line of s, neutralized as [Line], for a one-line
// title: the text is cut at the first line break of any kind (\n, \r, \v,
// \f, U+0085, U+2028, U+2029), and a cut is marked with " …". Leading and
// trailing white space is trimmed.
func Title(s string) string {
	cut := false
	if i := strings.IndexFunc(s, isLineBreak); i >= 0 {
		s, cut = s[:i], strings.TrimSpace(s[i:]) != ""
	}
	s = strings.TrimSpace(Line(s))
	if cut {
		if s == "" {
			return "…"
		}
		return s + " …"
	}
	return s
}

// Indent returns Text(s) with prefix before every line, so that no line of
// the content starts at the left margin, where a program's own prompt
// ("Allow once? [y/N]") is drawn: model text cannot draw a fake one.
func Indent(s, prefix string) string {
	lines := strings.Split(Text(s), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

// Safe reports whether s would be shown unchanged by [Text].
func Safe(s string) bool { return neutralize(s, true) == s }

func isLineBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// escaped reports whether r is shown as an escape; keepLayout keeps \n and
// \t.
func escaped(r rune, keepLayout bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return !keepLayout
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	}
	switch r {
	case 0x2028, 0x2029, // line and paragraph separators
		0x202a, 0x202b, 0x202c, 0x202d, 0x202e, // bidi embeddings and overrides
		0x2066, 0x2067, 0x2068, 0x2069, // bidi isolates
		0x200e, 0x200f, 0x061c, // bidi marks
		0x200b, 0x2060, 0xfeff: // zero width space, word joiner, BOM
		return true
	}
	return false
}

func neutralize(s string, keepLayout bool) string {
	// The common case, nothing to change, allocates nothing.
	clean := true
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || escaped(r, keepLayout) {
			clean = false
			break
		}
		i += n
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !escaped(r, keepLayout):
			b.WriteString(s[i : i+n])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String()
}
