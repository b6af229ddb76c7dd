package tools

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// parseJSON decodes a JSON document into the values encoding/json produces
// for an `any`: map[string]any, []any, string, float64, bool and nil. It
// exists for speed on large arguments (a 50 MiB write): strings are
// scanned in runs between escapes and copied once, where encoding/json
// validates the document in a first pass and then unquotes byte by byte.
// Invalid UTF-8 becomes U+FFFD byte by byte and a lone surrogate escape
// becomes U+FFFD, as with encoding/json.
func parseJSON(data []byte) (any, error) {
	p := jsonParser{data: data}
	p.space()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.data) {
		return nil, p.errorf("data after the top-level value")
	}
	return v, nil
}

// maxDepth bounds nesting, so that hostile input cannot exhaust the stack.
const maxDepth = 1000

type jsonParser struct {
	data []byte
	i    int
}

func (p *jsonParser) errorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: %s", p.i, fmt.Sprintf(format, args...))
}

func (p *jsonParser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (any, error) {
	if p.i >= len(p.data) {
		return nil, p.errorf("unexpected end of input")
	}
	switch c := p.data[p.i]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	default:
		return nil, p.errorf("invalid character %q looking for a value", c)
	}
}

func (p *jsonParser) literal(word string) error {
	if !strings.HasPrefix(string(p.data[p.i:min(len(p.data), p.i+len(word))]), word) {
		return p.errorf("invalid literal, want %s", word)
	}
	p.i += len(word)
	return nil
}

func (p *jsonParser) object(depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.errorf("nested too deeply")
	}
	p.i++ // {
	m := map[string]any{}
	p.space()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return m, nil
	}
	for {
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return nil, p.errorf("want a string for an object key")
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return nil, p.errorf("want ':' after an object key")
		}
		p.i++
		p.space()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		m[key] = v
		p.space()
		if p.i >= len(p.data) {
			return nil, p.errorf("unexpected end of input in an object")
		}
		switch p.data[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return m, nil
		default:
			return nil, p.errorf("want ',' or '}' in an object")
		}
	}
}

func (p *jsonParser) array(depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.errorf("nested too deeply")
	}
	p.i++ // [
	a := []any{}
	p.space()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return a, nil
	}
	for {
		p.space()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		p.space()
		if p.i >= len(p.data) {
			return nil, p.errorf("unexpected end of input in an array")
		}
		switch p.data[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return a, nil
		default:
			return nil, p.errorf("want ',' or ']' in an array")
		}
	}
}

// number scans a JSON number and converts it with strconv.
func (p *jsonParser) number() (any, error) {
	start := p.i
	d := p.data
	if p.i < len(d) && d[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(d) && d[p.i] >= '0' && d[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	switch {
	case p.i < len(d) && d[p.i] == '0':
		p.i++
	case digits() == 0:
		return nil, p.errorf("invalid number")
	}
	if p.i < len(d) && d[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return nil, p.errorf("invalid number: no digits after '.'")
		}
	}
	if p.i < len(d) && (d[p.i] == 'e' || d[p.i] == 'E') {
		p.i++
		if p.i < len(d) && (d[p.i] == '+' || d[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, p.errorf("invalid number: no digits in the exponent")
		}
	}
	f, err := strconv.ParseFloat(string(d[start:p.i]), 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			return nil, p.errorf("number %s is out of range", d[start:p.i])
		}
		return nil, p.errorf("invalid number %s", d[start:p.i])
	}
	return f, nil
}

// str scans a string at p.i (on its opening quote). The work is done with
// whole-slice operations (IndexByte, utf8.Valid, 8 bytes at a time for
// control characters), so a large string costs a few passes at memory
// speed rather than a loop per byte.
func (p *jsonParser) str() (string, error) {
	p.i++ // "
	d := p.data
	start := p.i
	end := stringEnd(d, start)
	if end < 0 {
		p.i = len(d)
		return "", p.errorf("unexpected end of input in a string")
	}
	raw := d[start:end]
	if k := controlChar(raw); k >= 0 {
		p.i = start + k
		return "", p.errorf("invalid control character %#x in a string", raw[k])
	}
	valid := utf8.Valid(raw)
	p.i = end + 1
	if bytes.IndexByte(raw, '\\') < 0 {
		if valid {
			return string(raw), nil
		}
		return toValidUTF8(raw), nil
	}
	var b strings.Builder
	b.Grow(len(raw)) // escapes only shrink the text
	run := func(r []byte) {
		if valid || utf8.Valid(r) {
			b.Write(r)
		} else {
			b.WriteString(toValidUTF8(r))
		}
	}
	for len(raw) > 0 {
		k := bytes.IndexByte(raw, '\\')
		if k < 0 {
			run(raw)
			break
		}
		run(raw[:k])
		raw = raw[k:]
		if len(raw) < 2 {
			return "", p.errorf("unexpected end of input in an escape")
		}
		e := raw[1]
		raw = raw[2:]
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := hex4(raw)
			if !ok {
				return "", p.errorf("invalid \\u escape")
			}
			raw = raw[4:]
			if utf16.IsSurrogate(r) {
				// A high surrogate followed by a low one is one rune;
				// anything else is U+FFFD and the next escape stands
				// alone (as in encoding/json).
				hi := r
				r = utf8.RuneError
				if len(raw) >= 6 && raw[0] == '\\' && raw[1] == 'u' {
					if lo, ok := hex4(raw[2:]); ok && utf16.DecodeRune(hi, lo) != utf8.RuneError {
						r = utf16.DecodeRune(hi, lo)
						raw = raw[6:]
					}
				}
			}
			b.WriteRune(r)
		default:
			return "", p.errorf("invalid escape \\%c", e)
		}
	}
	return b.String(), nil
}

// stringEnd returns the index of the quote that closes the string starting
// at start (just after its opening quote), or -1.
func stringEnd(d []byte, start int) int {
	for pos := start; ; {
		j := bytes.IndexByte(d[pos:], '"')
		if j < 0 {
			return -1
		}
		q := pos + j
		n := 0 // backslashes right before the quote
		for k := q - 1; k >= start && d[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q
		}
		pos = q + 1
	}
}

// controlChar returns the index of the first byte below 0x20 in b, or -1.
// It tests eight bytes at a time.
func controlChar(b []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		// Some byte of x is below 0x20 iff (x - 0x20…) borrows into a high
		// bit that x does not have set.
		if (x-0x20*ones)&^x&highs != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if b[i] < 0x20 {
			return i
		}
	}
	return -1
}

// hex4 decodes the four hex digits at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// toValidUTF8 replaces each byte of an invalid UTF-8 sequence with U+FFFD,
// as encoding/json does.
func toValidUTF8(s []byte) string {
	var b strings.Builder
	b.Grow(len(s) + 16)
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s)
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.Write(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}
