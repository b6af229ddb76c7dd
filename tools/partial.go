package tools

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// partialObject extracts top-level string members of a JSON object whose
// text arrives in pieces, as a model streams a tool call's arguments. It
// reads every byte once: feeding N bytes in any number of pieces costs
// O(N), however the pieces are cut.
//
// A string value that is still open yields what has arrived so far (an
// escape or a UTF-8 sequence cut by the stream is left out until it is
// complete); members after a syntax error are ignored; non-string values
// are skipped. A repeated member keeps its last value, as encoding/json
// does.
type partialObject struct {
	// want selects the members to capture; nil captures all of them.
	want func(key string) bool
	// limit bounds the bytes kept of one captured value; 0 means no
	// limit. A longer value keeps its first limit bytes.
	limit int

	fields map[string]string
	keys   []string // the captured members, in order of arrival

	st      pstate
	inKey   bool            // the string being read is a key
	capture bool            // the string being read is a captured value
	key     strings.Builder // the key being read
	val     strings.Builder // the captured value being read
	curKey  string          // the key of the value being read
	esc     []byte          // a pending escape sequence, starting with '\'
	depth   int             // nesting inside a skipped value
	skipStr bool            // inside a string of a skipped value
	skipEsc bool            // after a backslash in such a string
	changed bool
}

type pstate uint8

const (
	pStart    pstate = iota // before '{'
	pKeyOrEnd               // after '{' or ','
	pString                 // inside a key or a string value
	pColon                  // after a key
	pValue                  // after ':'
	pSkip                   // inside a non-string value
	pComma                  // after a value
	pDone                   // after the closing '}' or a syntax error
)

func newPartialObject(want func(string) bool, limit int) *partialObject {
	return &partialObject{want: want, limit: limit, fields: map[string]string{}}
}

// feed adds the next piece of the text. It reports whether a captured
// value changed.
func (p *partialObject) feed(s string) bool {
	p.changed = false
	for i := 0; i < len(s) && p.st != pDone; {
		i += p.step(s[i:])
	}
	if p.st == pString && p.capture {
		p.publish()
	}
	return p.changed
}

// get returns the value of key so far.
func (p *partialObject) get(key string) string { return p.fields[key] }

// publish stores the captured value read so far, without a UTF-8
// sequence that is still cut.
func (p *partialObject) publish() {
	v := trimCutRune(p.val.String())
	old, ok := p.fields[p.curKey]
	if !ok {
		p.keys = append(p.keys, p.curKey)
	}
	if !ok || old != v {
		p.fields[p.curKey] = v
		p.changed = true
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// step consumes a prefix of s (at least one byte) and returns its length.
func (p *partialObject) step(s string) int {
	c := s[0]
	switch p.st {
	case pStart:
		switch {
		case isSpace(c):
		case c == '{':
			p.st = pKeyOrEnd
		default:
			p.st = pDone
		}
		return 1
	case pKeyOrEnd:
		switch {
		case isSpace(c):
		case c == '"':
			p.st, p.inKey, p.capture = pString, true, false
			p.key.Reset()
		default: // '}' or a syntax error
			p.st = pDone
		}
		return 1
	case pColon:
		switch {
		case isSpace(c):
		case c == ':':
			p.st = pValue
		default:
			p.st = pDone
		}
		return 1
	case pValue:
		switch {
		case isSpace(c):
		case c == '"':
			p.st, p.inKey = pString, false
			p.capture = p.want == nil || p.want(p.curKey)
			p.val.Reset()
			if p.capture {
				p.publish() // an open string is "" so far
			}
		default:
			p.st, p.depth, p.skipStr, p.skipEsc = pSkip, 0, false, false
			return p.skip(s)
		}
		return 1
	case pSkip:
		return p.skip(s)
	case pComma:
		switch {
		case isSpace(c):
		case c == ',':
			p.st = pKeyOrEnd
		default:
			p.st = pDone
		}
		return 1
	case pString:
		return p.str(s)
	}
	return len(s)
}

// str consumes string content: a run of plain bytes at once, or one byte
// of an escape sequence.
func (p *partialObject) str(s string) int {
	if len(p.esc) > 0 {
		p.esc = append(p.esc, s[0])
		p.escape()
		return 1
	}
	switch s[0] {
	case '"':
		if p.inKey {
			p.curKey = p.key.String()
			p.st = pColon
		} else {
			if p.capture {
				p.publish()
			}
			p.st = pComma
		}
		return 1
	case '\\':
		p.esc = append(p.esc[:0], '\\')
		return 1
	}
	n := strings.IndexAny(s, `"\`)
	if n < 0 {
		n = len(s)
	}
	p.text(s[:n])
	return n
}

// text appends decoded text to the key or the captured value.
func (p *partialObject) text(t string) {
	switch {
	case p.inKey:
		if p.key.Len() < 1024 { // no tool has longer member names
			p.key.WriteString(t)
		}
	case p.capture:
		if p.limit > 0 {
			t = t[:min(len(t), max(p.limit-p.val.Len(), 0))]
		}
		p.val.WriteString(t)
	}
}

// escape decodes the pending escape sequence once it is complete, as
// encoding/json does; an invalid one ends the parse.
func (p *partialObject) escape() {
	e := p.esc
	if e[1] != 'u' {
		c := e[1]
		if r, ok := simpleEscapes[c]; ok {
			c = r
		}
		p.text(string([]byte{c}))
		p.esc = p.esc[:0]
		return
	}
	if len(e) < 6 {
		return
	}
	r, ok := hex4rune(e[2:6])
	if !ok {
		p.st = pDone
		return
	}
	if r < 0xD800 || r >= 0xDC00 {
		p.text(string(r))
		p.esc = p.esc[:0]
		return
	}
	// A high surrogate: a low one may follow.
	rest := string(e[6:])
	if len(rest) < 6 && strings.HasPrefix(`\u`, rest[:min(len(rest), 2)]) {
		return // it may still come
	}
	if len(rest) == 6 {
		if lo, ok := hex4rune([]byte(rest[2:])); ok && lo >= 0xDC00 && lo <= 0xDFFF {
			p.text(string((r-0xD800)<<10 + (lo - 0xDC00) + 0x10000))
			p.esc = p.esc[:0]
			return
		}
	}
	// A lone surrogate reads as U+FFFD; what followed it is read again.
	p.text(string(utf8.RuneError))
	p.esc = p.esc[:0]
	for i := 0; i < len(rest) && p.st == pString; {
		i += p.step(rest[i:])
	}
}

func hex4rune(b []byte) (rune, bool) {
	v, err := strconv.ParseUint(string(b), 16, 16)
	return rune(v), err == nil
}

var simpleEscapes = map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// skip consumes part of a non-string value (number, literal, array or
// object), ending at the ',' or '}' that follows it at depth 0.
func (p *partialObject) skip(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if p.skipStr {
			switch {
			case p.skipEsc:
				p.skipEsc = false
			case c == '\\':
				p.skipEsc = true
			case c == '"':
				p.skipStr = false
			default:
				// Jump over the plain run of the string.
				n := strings.IndexAny(s[i:], `"\`)
				if n < 0 {
					return len(s)
				}
				i += n - 1
			}
			continue
		}
		switch c {
		case '"':
			p.skipStr = true
		case '{', '[':
			p.depth++
		case '}', ']':
			if p.depth == 0 {
				p.st = pDone
				return i + 1
			}
			p.depth--
		case ',':
			if p.depth == 0 {
				p.st = pKeyOrEnd
				return i + 1
			}
		}
	}
	return len(s)
}

// trimCutRune drops an incomplete UTF-8 sequence at the end of s.
func trimCutRune(s string) string {
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRuneInString(s[i:]) {
				return s[:i]
			}
			return s
		}
	}
	return s
}

// partialFields parses src, which may be cut anywhere, and returns its
// top-level string members.
func partialFields(src string) map[string]string {
	p := newPartialObject(nil, 0)
	p.feed(src)
	return p.fields
}

// maxPartialField bounds how much of one argument a [PartialInput] keeps.
const maxPartialField = 4096

// PartialInput follows a tool call's arguments while they stream and tells
// what has arrived so far, for a client that shows the call before its
// arguments are complete (ACP's rawInput of a pending call). It keeps the
// top-level string members, each cut to its first 4 KiB, and reads every
// byte once. Use it from one goroutine at a time.
type PartialInput struct {
	p     *partialObject
	known int // members reported by Feed so far
}

// NewPartialInput returns a PartialInput with nothing received yet.
func NewPartialInput() *PartialInput {
	return &PartialInput{p: newPartialObject(nil, maxPartialField)}
}

// Feed adds the next piece of the arguments' JSON text. It reports whether
// a member appeared that had not arrived before.
func (in *PartialInput) Feed(piece string) bool {
	in.p.feed(piece)
	if len(in.p.keys) == in.known {
		return false
	}
	in.known = len(in.p.keys)
	return true
}

// JSON returns the members received so far as a JSON object, in the
// order they arrived; "{}" before any.
func (in *PartialInput) JSON() json.RawMessage {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range in.p.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(&b, k)
		b.WriteByte(':')
		writeJSONString(&b, in.p.fields[k])
	}
	b.WriteByte('}')
	return json.RawMessage(b.String())
}

// writeJSONString writes s as a JSON string, without HTML escaping.
func writeJSONString(b *strings.Builder, s string) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	b.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}
