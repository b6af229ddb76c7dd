package session

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// partialFields extracts the top-level string members of a JSON object
// whose text may be cut anywhere, as tool-call arguments are while they
// stream. A string value that is still open yields what has arrived so far
// (an escape cut in the middle is left out); members after a syntax error
// are ignored. Non-string values are skipped.
func partialFields(src string) map[string]string {
	out := map[string]string{}
	p := &partialParser{s: src}
	p.space()
	if !p.eat('{') {
		return out
	}
	for {
		p.space()
		if p.eof() || p.peek() == '}' {
			return out
		}
		key, closed := p.str()
		if !closed {
			return out
		}
		p.space()
		if !p.eat(':') {
			return out
		}
		p.space()
		if p.eof() {
			return out
		}
		if p.peek() == '"' {
			val, _ := p.str()
			out[key] = val
		} else if !p.skipValue() {
			return out
		}
		p.space()
		if !p.eat(',') {
			return out
		}
	}
}

type partialParser struct {
	s string
	i int
}

func (p *partialParser) eof() bool  { return p.i >= len(p.s) }
func (p *partialParser) peek() byte { return p.s[p.i] }

func (p *partialParser) eat(c byte) bool {
	if !p.eof() && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *partialParser) space() {
	for !p.eof() && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

// str reads a string starting at '"'. It returns the decoded text so far and
// whether the closing quote was seen.
func (p *partialParser) str() (string, bool) {
	if !p.eat('"') {
		return "", false
	}
	var b strings.Builder
	for !p.eof() {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), true
		case c == '\\':
			if p.i+1 >= len(p.s) {
				p.i = len(p.s)
				return b.String(), false
			}
			e := p.s[p.i+1]
			if e == 'u' {
				r, n, ok := p.unicodeEscape()
				if !ok {
					p.i = len(p.s)
					return b.String(), false
				}
				b.WriteRune(r)
				p.i += n
				continue
			}
			if r, ok := simpleEscapes[e]; ok {
				b.WriteByte(r)
			} else {
				b.WriteByte(e)
			}
			p.i += 2
		default:
			r, n := utf8.DecodeRuneInString(p.s[p.i:])
			if r == utf8.RuneError && n <= 1 && !utf8.FullRuneInString(p.s[p.i:]) {
				// A multi-byte character cut by the stream.
				p.i = len(p.s)
				return b.String(), false
			}
			b.WriteString(p.s[p.i : p.i+n])
			p.i += n
		}
	}
	return b.String(), false
}

var simpleEscapes = map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// unicodeEscape decodes \uXXXX (and a following low surrogate) at p.i. It
// reports false when the escape is cut short.
func (p *partialParser) unicodeEscape() (rune, int, bool) {
	hex := func(at int) (rune, bool) {
		if at+6 > len(p.s) || p.s[at] != '\\' || p.s[at+1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(p.s[at+2:at+6], 16, 16)
		return rune(v), err == nil
	}
	r, ok := hex(p.i)
	if !ok {
		return 0, 0, false
	}
	if r >= 0xD800 && r < 0xDC00 {
		if p.i+12 > len(p.s) && strings.HasPrefix(`\u`, p.s[p.i+6:min(p.i+8, len(p.s))]) {
			return 0, 0, false // the low surrogate may still come
		}
		lo, ok := hex(p.i + 6)
		if !ok || lo < 0xDC00 || lo > 0xDFFF {
			return utf8.RuneError, 6, true // a lone surrogate, as encoding/json reads it
		}
		return (r-0xD800)<<10 + (lo - 0xDC00) + 0x10000, 12, true
	}
	return r, 6, true
}

// skipValue skips a complete non-string value (number, literal, array or
// object). It reports false when the value is cut short or malformed.
func (p *partialParser) skipValue() bool {
	depth := 0
	for !p.eof() {
		c := p.s[p.i]
		switch c {
		case '"':
			if _, closed := p.str(); !closed {
				return false
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return true
			}
			depth--
		case ',':
			if depth == 0 {
				return true
			}
		}
		p.i++
	}
	return false
}
