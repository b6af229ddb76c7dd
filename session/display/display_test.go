package display

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "ls -la", "ls -la"},
		{"unicode kept", "écrire ✓ 日本語 🙂", "écrire ✓ 日本語 🙂"},
		{"layout kept", "a\n\tb", "a\n\tb"},
		{"carriage return", "touch PWNED\rls -la", `touch PWNED\rls -la`},
		{"escape sequence", "touch PWNED\x1b[2K\x1b[1Gls -la", `touch PWNED\x1b[2K\x1b[1Gls -la`},
		{"cursor up", "x\x1b[1A\x1b[2Kfake", `x\x1b[1A\x1b[2Kfake`},
		{"osc title", "\x1b]0;owned\x07", `\x1b]0;owned\x07`},
		{"backspace", "rm -rf /\b\b\b\b\b\b\bls     ", `rm -rf /\x08\x08\x08\x08\x08\x08\x08ls     `},
		{"nul and del", "a\x00b\x7f", `a\x00b\x7f`},
		{"vertical tab form feed", "a\vb\fc", `a\x0bb\x0cc`},
		{"c1 csi as code point", "a\u009b2Kb", `a\u009b2Kb`},
		{"c1 nel", "a\u0085b", `a\u0085b`},
		{"8-bit csi byte", "a\x9b2Kb", `a\x9b2Kb`},
		{"invalid utf-8", "a\xff\xfeb", `a\xff\xfeb`},
		{"line separators", "a\u2028b\u2029c", `a\u2028b\u2029c`},
		{"bidi override", "ls \u202e#DENWP hcuot", `ls \u202e#DENWP hcuot`},
		{"bidi isolates", "\u2066a\u2067b\u2068c\u2069", `\u2066a\u2067b\u2068c\u2069`},
		{"bidi embeddings and marks", "\u202a\u202b\u202c\u202d\u200e\u200f\u061c", `\u202a\u202b\u202c\u202d\u200e\u200f\u061c`},
		{"invisible", "r\u200bm\u2060\ufeff", `r\u200bm\u2060\ufeff`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Text(tt.in); got != tt.want {
				t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestLine(t *testing.T) {
	if got, want := Line("a\nb\tc\rd"), `a\nb\tc\rd`; got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
}

func TestTitle(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Bash · ls -la", "Bash · ls -la"},
		{"Bash · ls -la\ntouch PWNED", "Bash · ls -la …"},
		{"Bash · ls -la\rtouch PWNED", "Bash · ls -la …"},
		{"Bash · ls\u2028touch PWNED", "Bash · ls …"},
		{"Bash · ls\u2029x", "Bash · ls …"},
		{"Bash · ls\u0085x", "Bash · ls …"},
		{"Bash · ls\vx", "Bash · ls …"},
		{"Bash · ls\fx", "Bash · ls …"},
		{"Bash · ls\n", "Bash · ls"},
		{"\nrm -rf /", "…"},
		{"Edit \x1b[8msecret\x1b[0m.go", `Edit \x1b[8msecret\x1b[0m.go`},
		{"Write a\tb", `Write a\tb`},
		{"  Read x  ", "Read x"},
	}
	for _, tt := range tests {
		if got := Title(tt.in); got != tt.want {
			t.Errorf("Title(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestIndent(t *testing.T) {
	in := "ls\n\nAllow once? [y/N] \x1b[1A"
	want := "  ls\n  \n  Allow once? [y/N] \\x1b[1A"
	if got := Indent(in, "  "); got != want {
		t.Errorf("Indent = %q, want %q", got, want)
	}
}

func TestCleanTextIsNotCopied(t *testing.T) {
	s := strings.Repeat("plain text ✓\n", 100)
	if n := testing.AllocsPerRun(10, func() { Text(s) }); n != 0 {
		t.Errorf("Text of clean text allocates %v times", n)
	}
}

// dangerous reports whether r may change what a terminal or a bidi-aware
// renderer shows for the text around it.
func dangerous(r rune) bool {
	switch {
	case r < 0x20 && r != '\n' && r != '\t', r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x2028, r == 0x2029:
		return true
	case r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"ls -la", "touch PWNED\rls -la", "\x1b[2K\x1b[1G$ ls", "\u202e", "a\xffb", "\u009b", "a\nb\tc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, out := range map[string]string{"Text": Text(s), "Line": Line(s), "Title": Title(s), "Indent": Indent(s, "| ")} {
			if !utf8.ValidString(out) {
				t.Fatalf("%s(%q) = %q: not valid UTF-8", name, s, out)
			}
			for _, r := range out {
				if dangerous(r) {
					t.Fatalf("%s(%q) = %q keeps %U", name, s, out, r)
				}
				if name != "Text" && name != "Indent" && (r == '\n' || (name == "Title" && r == '\t')) {
					t.Fatalf("%s(%q) = %q keeps a line break", name, s, out)
				}
			}
		}
		// Neutralized text is shown as is: the functions are idempotent.
		if out := Text(s); Text(out) != out || !Safe(out) {
			t.Fatalf("Text is not idempotent on %q", s)
		}
		if Safe(s) && Text(s) != s {
			t.Fatalf("safe text %q changed", s)
		}
		// Nothing printable is lost: every printable rune of s is in Text(s).
		out := Text(s)
		for _, r := range s {
			if r != utf8.RuneError && !dangerous(r) && r != 0x85 && r != 0x200b && r != 0x2060 && r != 0xfeff && !strings.ContainsRune(out, r) {
				t.Fatalf("Text(%q) = %q lost %U", s, out, r)
			}
		}
	})
}
