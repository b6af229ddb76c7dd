package tools

import (
	"bytes"
)

// tailBuffer keeps the end of a byte stream within a line limit and a byte
// limit, and counts the bytes and lines of the whole stream. Its memory is
// fixed at maxBytes+1 bytes however much is written.
//
// It is not safe for concurrent use; the bash tool guards it with a mutex.
type tailBuffer struct {
	maxLines int
	maxBytes int

	// ring holds the last len(ring) bytes written: one more than maxBytes,
	// so that the byte before the shown window tells whether the window
	// starts at the beginning of a line.
	ring  []byte
	start int // index of the oldest held byte
	n     int // number of held bytes

	total    int64 // bytes written
	newlines int64 // '\n' bytes written
	last     byte  // last byte written
}

func newTailBuffer(maxLines, maxBytes int) *tailBuffer {
	return &tailBuffer{maxLines: maxLines, maxBytes: maxBytes, ring: make([]byte, maxBytes+1)}
}

// Write appends p. It never fails.
func (t *tailBuffer) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	t.total += int64(len(p))
	t.newlines += int64(bytes.Count(p, []byte{'\n'}))
	t.last = p[len(p)-1]

	size := len(t.ring)
	if len(p) >= size {
		copy(t.ring, p[len(p)-size:])
		t.start, t.n = 0, size
		return len(p), nil
	}
	end := (t.start + t.n) % size
	c := copy(t.ring[end:], p)
	copy(t.ring, p[c:])
	t.n += len(p)
	if t.n > size {
		t.start = (t.start + t.n - size) % size
		t.n = size
	}
	return len(p), nil
}

// TotalBytes is the number of bytes written.
func (t *tailBuffer) TotalBytes() int64 { return t.total }

// TotalLines is the number of lines written; a last line without a
// newline counts.
func (t *tailBuffer) TotalLines() int64 { return linesOf(t.total, t.newlines, t.last) }

func linesOf(total, newlines int64, last byte) int64 {
	if total > 0 && last != '\n' {
		return newlines + 1
	}
	return newlines
}

// Truncated reports whether the stream exceeds the limits, so that Tail
// shows only part of it.
func (t *tailBuffer) Truncated() bool {
	return t.total > int64(t.maxBytes) || t.TotalLines() > int64(t.maxLines)
}

// wouldTruncate reports whether writing p would make the stream exceed the
// limits.
func (t *tailBuffer) wouldTruncate(p []byte) bool {
	if len(p) == 0 {
		return t.Truncated()
	}
	total := t.total + int64(len(p))
	if total > int64(t.maxBytes) {
		return true
	}
	nl := t.newlines + int64(bytes.Count(p, []byte{'\n'}))
	return linesOf(total, nl, p[len(p)-1]) > int64(t.maxLines)
}

// held returns a copy of the held bytes, oldest first.
func (t *tailBuffer) held() []byte {
	out := make([]byte, t.n)
	c := copy(out, t.ring[t.start:min(t.start+t.n, len(t.ring))])
	copy(out[c:], t.ring[:t.n-c])
	return out
}

// Tail returns the end of the stream within the limits, and the number of
// lines it shows. When the stream was cut, Tail shows whole lines only,
// unless the last line alone exceeds the byte limit: then it shows the end
// of that line. It never starts inside a UTF-8 sequence.
func (t *tailBuffer) Tail() (text string, lines int) {
	b := t.held()
	if !t.Truncated() {
		return string(b), int(t.TotalLines())
	}
	// atLineStart: whether b[0] begins a line of the stream.
	atLineStart := t.total == int64(len(b))
	if len(b) > t.maxBytes {
		atLineStart = b[len(b)-t.maxBytes-1] == '\n'
		b = b[len(b)-t.maxBytes:]
	}
	if !atLineStart && len(b) > 0 {
		// Drop the partial first line if a whole line follows it.
		body := b[:len(b)-1] // a final '\n' does not start a line
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			b = b[i+1:]
		} else {
			b = trimRuneStart(b)
		}
	}
	// Keep the last maxLines lines.
	end := len(b)
	if end > 0 && b[end-1] == '\n' {
		end--
	}
	for i, count := end-1, 1; i >= 0; i-- {
		if b[i] != '\n' {
			continue
		}
		if count == t.maxLines {
			b = b[i+1:]
			break
		}
		count++
	}
	if len(b) == 0 {
		return "", 0
	}
	return string(b), int(linesOf(int64(len(b)), int64(bytes.Count(b, []byte{'\n'})), b[len(b)-1]))
}

// trimRuneStart drops the continuation bytes of a UTF-8 sequence that began
// before b (at most three), so that b starts on a rune boundary.
func trimRuneStart(b []byte) []byte {
	for i := 0; i < 3 && len(b) > 0 && b[0]&0xC0 == 0x80; i++ {
		b = b[1:]
	}
	return b
}
