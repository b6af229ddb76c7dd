package tools

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// writeChunks writes s into t in pieces of size n, so that ring wrap-around
// is exercised.
func writeChunks(t *tailBuffer, s string, n int) {
	for len(s) > 0 {
		k := min(n, len(s))
		t.Write([]byte(s[:k]))
		s = s[k:]
	}
}

func numberedLines(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

func TestTailBuffer(t *testing.T) {
	tests := []struct {
		name              string
		maxLines, maxByte int
		in                string
		want              string
		wantLines         int
		truncated         bool
		totalLines        int64
	}{
		{"empty", 3, 20, "", "", 0, false, 0},
		{"fits", 3, 20, "a\nb\nc\n", "a\nb\nc\n", 3, false, 3},
		{"fits without final newline", 3, 20, "a\nb\nc", "a\nb\nc", 3, false, 3},
		{"too many lines keeps the last", 3, 100, "1\n2\n3\n4\n5\n", "3\n4\n5\n", 3, true, 5},
		{"too many lines, partial last line", 3, 100, "1\n2\n3\n4\n5", "3\n4\n5", 3, true, 5},
		{"exactly the byte limit", 10, 6, "ab\ncd\n", "ab\ncd\n", 2, false, 2},
		// 1 over the byte limit: the window "b\ncd\nX" starts mid-line, so
		// the partial line "b" is dropped.
		{"byte cut drops a partial first line", 10, 6, "ab\ncd\nX", "cd\nX", 2, true, 3},
		{"byte cut at a line start keeps it", 10, 6, "1234\nab\ncd\n", "ab\ncd\n", 2, true, 3},
		{"a single long line keeps its end", 10, 5, "abcdefghij", "fghij", 1, true, 1},
		{"a single long line with a final newline", 10, 5, "abcdefghi\n", "fghi\n", 1, true, 1},
		{"empty lines count", 2, 100, "\n\n\n", "\n\n", 2, true, 3},
		{"many lines", 2000, 51200, numberedLines(1, 100000), numberedLines(98001, 100000), 2000, true, 100000},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 3, 7, 1 << 20} {
			t.Run(fmt.Sprintf("%s/chunk%d", tt.name, chunk), func(t *testing.T) {
				tb := newTailBuffer(tt.maxLines, tt.maxByte)
				writeChunks(tb, tt.in, chunk)
				got, lines := tb.Tail()
				if got != tt.want {
					t.Errorf("Tail() = %q, want %q", got, tt.want)
				}
				if lines != tt.wantLines {
					t.Errorf("Tail() lines = %d, want %d", lines, tt.wantLines)
				}
				if tb.Truncated() != tt.truncated {
					t.Errorf("Truncated() = %v, want %v", tb.Truncated(), tt.truncated)
				}
				if tb.TotalBytes() != int64(len(tt.in)) {
					t.Errorf("TotalBytes() = %d, want %d", tb.TotalBytes(), len(tt.in))
				}
				if tb.TotalLines() != tt.totalLines {
					t.Errorf("TotalLines() = %d, want %d", tb.TotalLines(), tt.totalLines)
				}
				if len(got) > tt.maxByte {
					t.Errorf("tail has %d bytes, limit %d", len(got), tt.maxByte)
				}
			})
		}
	}
}

// TestTailBufferNeverCutsARune shifts runes of every width across the
// byte window's start and checks the tail is valid UTF-8 and a suffix of
// the input.
func TestTailBufferNeverCutsARune(t *testing.T) {
	for _, r := range []string{"é", "€", "😀"} {
		for prefix := 0; prefix < 4; prefix++ {
			in := strings.Repeat("x", prefix) + strings.Repeat(r, 40000)
			tb := newTailBuffer(MaxLines, MaxBytes)
			writeChunks(tb, in, 4093)
			got, _ := tb.Tail()
			if !utf8.ValidString(got) {
				t.Fatalf("rune %q prefix %d: tail starts %q, not valid UTF-8", r, prefix, got[:4])
			}
			if !strings.HasSuffix(in, got) {
				t.Fatalf("rune %q prefix %d: tail is not a suffix of the input", r, prefix)
			}
			if len(got) > MaxBytes || len(got) < MaxBytes-3 {
				t.Fatalf("rune %q prefix %d: tail has %d bytes, want within 3 of %d", r, prefix, len(got), MaxBytes)
			}
		}
	}
}

func TestTailBufferWouldTruncate(t *testing.T) {
	tb := newTailBuffer(2, 10)
	tb.Write([]byte("a\n"))
	if tb.wouldTruncate([]byte("b\n")) {
		t.Error("2 lines of 2 allowed: wouldTruncate = true")
	}
	if !tb.wouldTruncate([]byte("b\nc")) {
		t.Error("3 lines of 2 allowed: wouldTruncate = false")
	}
	if !tb.wouldTruncate([]byte("123456789")) {
		t.Error("11 bytes of 10 allowed: wouldTruncate = false")
	}
	if tb.wouldTruncate([]byte("12345678")) {
		t.Error("10 bytes of 10 allowed: wouldTruncate = true")
	}
}

// TestTailBufferMemoryIsFixed writes far more than the limits and checks
// the buffer did not grow.
func TestTailBufferMemoryIsFixed(t *testing.T) {
	tb := newTailBuffer(MaxLines, MaxBytes)
	chunk := bytes.Repeat([]byte("0123456789abcdef\n"), 4096)
	for range 200 {
		tb.Write(chunk)
	}
	if len(tb.ring) != MaxBytes+1 || cap(tb.ring) != MaxBytes+1 {
		t.Errorf("ring has len %d cap %d, want %d", len(tb.ring), cap(tb.ring), MaxBytes+1)
	}
	got, lines := tb.Tail()
	if lines > MaxLines || len(got) > MaxBytes {
		t.Errorf("tail %d lines %d bytes exceeds the limits", lines, len(got))
	}
}

func BenchmarkTailBufferWrite(b *testing.B) {
	tb := newTailBuffer(MaxLines, MaxBytes)
	chunk := bytes.Repeat([]byte("0123456789abcdef\n"), readChunk/17)
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		tb.Write(chunk)
	}
}
