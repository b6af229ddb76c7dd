package editorsync

import (
	"testing"
	"unicode/utf8"
)

func rng(l1, c1, l2, c2 int) *Range {
	return &Range{Start: Position{l1, c1}, End: Position{l2, c2}}
}

func TestApplyChanges(t *testing.T) {
	for _, test := range []struct {
		name    string
		text    string
		changes []TextChange
		want    string
	}{
		{"full replacement", "old", []TextChange{{Text: "new"}}, "new"},
		{"insert at start", "abc", []TextChange{{Range: rng(0, 0, 0, 0), Text: "X"}}, "Xabc"},
		{"replace middle", "abc\ndef", []TextChange{{Range: rng(1, 1, 1, 2), Text: "E"}}, "abc\ndEf"},
		{"delete across lines", "abc\ndef\nghi", []TextChange{{Range: rng(0, 2, 2, 1), Text: ""}}, "abhi"},
		// é is one UTF-16 unit (two UTF-8 bytes).
		{"after é", "café!", []TextChange{{Range: rng(0, 4, 0, 5), Text: "?"}}, "café?"},
		// 😀 is two UTF-16 units (four UTF-8 bytes).
		{"after emoji", "a😀b", []TextChange{{Range: rng(0, 3, 0, 4), Text: "B"}}, "a😀B"},
		{"replace emoji", "a😀b", []TextChange{{Range: rng(0, 1, 0, 3), Text: "é"}}, "aéb"},
		{"inside surrogate pair moves before it", "a😀b", []TextChange{{Range: rng(0, 2, 0, 2), Text: "|"}}, "a|😀b"},
		{"mixed line", "é😀é\nx", []TextChange{{Range: rng(0, 3, 0, 4), Text: "e"}}, "é😀e\nx"},
		{"CRLF line breaks", "ab\r\ncd\r\nef", []TextChange{{Range: rng(1, 0, 1, 2), Text: "CD"}}, "ab\r\nCD\r\nef"},
		{"lone CR line break", "ab\rcd", []TextChange{{Range: rng(1, 1, 1, 1), Text: "-"}}, "ab\rc-d"},
		{"character past end of line clamps before the break", "ab\ncd", []TextChange{{Range: rng(0, 99, 0, 99), Text: "!"}}, "ab!\ncd"},
		{"line past end clamps to end of text", "ab\ncd", []TextChange{{Range: rng(9, 0, 9, 0), Text: "!"}}, "ab\ncd!"},
		{"negative clamps to zero", "ab", []TextChange{{Range: rng(-1, -5, 0, 1), Text: ""}}, "b"},
		{"reversed range is swapped", "abcd", []TextChange{{Range: rng(0, 3, 0, 1), Text: "-"}}, "a-d"},
		{"changes apply in order", "abc", []TextChange{
			{Range: rng(0, 0, 0, 1), Text: "XY"}, // XYbc
			{Range: rng(0, 2, 0, 3), Text: "Z"},  // XYZc
			{Text: "full"},                       // full
			{Range: rng(0, 4, 0, 4), Text: "!"},  // full!
		}, "full!"},
		{"insert newline then edit next line", "ab", []TextChange{
			{Range: rng(0, 1, 0, 1), Text: "\n"},
			{Range: rng(1, 0, 1, 1), Text: "B"},
		}, "a\nB"},
	} {
		t.Run(test.name, func(t *testing.T) {
			if got := ApplyChanges(test.text, test.changes); got != test.want {
				t.Errorf("ApplyChanges(%q) = %q, want %q", test.text, got, test.want)
			}
		})
	}
}

func FuzzApplyChanges(f *testing.F) {
	f.Add("a😀b\r\né\n", 0, 1, 1, 2, "x")
	f.Add("", 5, -3, 2, 9, "😀")
	f.Add("abc\rdef", 1, 2, 0, 1, "\r\n")
	f.Fuzz(func(t *testing.T, text string, l1, c1, l2, c2 int, ins string) {
		got := ApplyChanges(text, []TextChange{{Range: rng(l1, c1, l2, c2), Text: ins}})
		if utf8.ValidString(text) && utf8.ValidString(ins) && !utf8.ValidString(got) {
			t.Fatalf("ApplyChanges(%q, %d:%d-%d:%d, %q) = %q: not valid UTF-8", text, l1, c1, l2, c2, ins, got)
		}
		if len(got) > len(text)+len(ins) || len(got) < len(ins) {
			t.Fatalf("ApplyChanges(%q, %d:%d-%d:%d, %q) = %q: impossible length", text, l1, c1, l2, c2, ins, got)
		}
	})
}
