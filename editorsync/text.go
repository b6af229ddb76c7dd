package editorsync

import (
	"strings"
	"unicode/utf8"
)

// Position is a zero-based position in a document, as in LSP: Line counts
// line breaks ("\n", "\r\n" or a lone "\r") and Character counts UTF-16 code
// units from the start of the line (an emoji outside the Basic Multilingual
// Plane is 2 units, "é" is 1).
type Position struct {
	Line      int
	Character int
}

// Range is the span between two positions, Start inclusive, End exclusive.
type Range struct {
	Start Position
	End   Position
}

// TextChange is one entry of a didChange notification. A nil Range replaces
// the whole text; otherwise Text replaces the span of Range.
type TextChange struct {
	Range *Range
	Text  string
}

// ApplyChanges applies changes to text in order, each one to the result of
// the one before, and returns the result.
//
// Positions are clamped the way vscode-languageserver-textdocument does,
// rather than rejected: a negative line or character is 0, a line past the
// last one is the end of the text, a character past the end of its line is
// the end of that line (before its line break), a character that falls in
// the middle of a surrogate pair is moved back before the pair, and a range
// whose start is after its end is swapped. Clamping only ever cuts the text
// at UTF-8 character boundaries, so the result is valid UTF-8 whenever text
// and the inserted strings are. Invalid UTF-8 bytes count as one code unit
// each.
func ApplyChanges(text string, changes []TextChange) string {
	for _, c := range changes {
		if c.Range == nil {
			text = c.Text
			continue
		}
		start := offset(text, c.Range.Start)
		end := offset(text, c.Range.End)
		if start > end {
			start, end = end, start
		}
		text = text[:start] + c.Text + text[end:]
	}
	return text
}

// offset returns the byte offset of p in text, clamped as ApplyChanges
// documents.
func offset(text string, p Position) int {
	if p.Line < 0 {
		return 0
	}
	start := 0
	for line := 0; line < p.Line; line++ {
		i := strings.IndexAny(text[start:], "\r\n")
		if i < 0 {
			return len(text) // past the last line: end of the text
		}
		start += i
		if text[start] == '\r' && start+1 < len(text) && text[start+1] == '\n' {
			start += 2
		} else {
			start++
		}
	}
	end := len(text)
	if i := strings.IndexAny(text[start:], "\r\n"); i >= 0 {
		end = start + i
	}
	units := 0
	for i := start; i < end; {
		if units >= p.Character {
			return i
		}
		r, size := utf8.DecodeRuneInString(text[i:end])
		n := 1
		if r >= 0x10000 {
			n = 2 // a surrogate pair in UTF-16
		}
		if units+n > p.Character {
			return i // inside a surrogate pair: before the pair
		}
		units += n
		i += size
	}
	return end
}
