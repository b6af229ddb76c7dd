package tools

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// applyDiff applies a unified diff made by unifiedDiff to old, checking
// every context and removed line against old, so that a wrong diff fails.
func applyDiff(t *testing.T, old, diff string) string {
	t.Helper()
	if diff == "" {
		return old
	}
	oldLines := splitLines(old)
	lines := strings.SplitAfter(diff, "\n")
	if !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		t.Fatalf("diff lacks headers:\n%s", diff)
	}
	var out []string
	pos := 0 // next old line (0-based) not yet copied
	i := 2
	for i < len(lines) && lines[i] != "" {
		h := lines[i]
		var os, oc, ns, nc int
		if _, err := fmt.Sscanf(strings.ReplaceAll(strings.ReplaceAll(h, ",", " "), "+", ""), "@@ -%d %d %d %d @@", &os, &oc, &ns, &nc); err != nil {
			// Counts of 1 are omitted; parse by hand.
			f := strings.Fields(h)
			os, oc = parseRange(t, f[1][1:])
			ns, nc = parseRange(t, f[2][1:])
		}
		start := os - 1
		if oc == 0 {
			start = os
		}
		out = append(out, oldLines[pos:start]...)
		pos = start
		i++
		gotOld, gotNew := 0, 0
		for i < len(lines) && lines[i] != "" && !strings.HasPrefix(lines[i], "@@") {
			l := lines[i]
			i++
			body := l[1:]
			if i < len(lines) && strings.HasPrefix(lines[i], "\\ No newline") {
				body = strings.TrimSuffix(body, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if pos >= len(oldLines) || oldLines[pos] != body {
					t.Fatalf("diff line %q does not match old line %d %q\n%s", l, pos+1, safeLine(oldLines, pos), diff)
				}
				if l[0] == ' ' {
					out = append(out, body)
					gotNew++
				}
				pos++
				gotOld++
			case '+':
				out = append(out, body)
				gotNew++
			default:
				t.Fatalf("bad diff line %q", l)
			}
		}
		if gotOld != oc || gotNew != nc {
			t.Fatalf("hunk %q has %d old and %d new lines\n%s", h, gotOld, gotNew, diff)
		}
	}
	out = append(out, oldLines[pos:]...)
	return strings.Join(out, "")
}

func safeLine(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "<EOF>"
}

func parseRange(t *testing.T, s string) (int, int) {
	a, b, ok := strings.Cut(s, ",")
	start, err := strconv.Atoi(a)
	if err != nil {
		t.Fatalf("bad range %q", s)
	}
	if !ok {
		return start, 1
	}
	n, err := strconv.Atoi(b)
	if err != nil {
		t.Fatalf("bad range %q", s)
	}
	return start, n
}

func TestUnifiedDiffGolden(t *testing.T) {
	tests := []struct {
		name, old, new, want string
	}{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"change middle", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nX\n6\n7\n8\n9\n",
			"--- a\n+++ b\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+X\n 6\n 7\n 8\n"},
		{"create", "", "x\ny\n", "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+x\n+y\n"},
		{"no newline at end", "a\nb", "a\nc", "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{"add newline at end", "a", "a\n", "--- a\n+++ b\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n"},
		{"delete first", "a\nb\n", "b\n", "--- a\n+++ b\n@@ -1,2 +1 @@\n-a\n b\n"},
		{"two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "X\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\nY\n",
			"--- a\n+++ b\n@@ -1,4 +1,4 @@\n-1\n+X\n 2\n 3\n 4\n@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+Y\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := unifiedDiff("a", "b", tt.old, tt.new, maxDiffBytes)
			if got != tt.want {
				t.Fatalf("diff:\n%s\nwant:\n%s", got, tt.want)
			}
			if applied := applyDiff(t, tt.old, got); applied != tt.new {
				t.Fatalf("applying the diff gives %q, want %q", applied, tt.new)
			}
		})
	}
}

// TestUnifiedDiffRandom checks on random edits that the diff, applied to
// the old text, gives the new text.
func TestUnifiedDiffRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"a\n", "b\n", "c\n", "d\n", "a", "x\r\n", "\n"}
	gen := func(n int) string {
		var sb strings.Builder
		for range n {
			sb.WriteString(words[r.IntN(len(words))])
		}
		return sb.String()
	}
	for i := range 2000 {
		old := gen(r.IntN(30))
		var neu string
		if r.IntN(3) == 0 {
			neu = gen(r.IntN(30))
		} else {
			// A few local changes of old.
			ls := splitLines(old)
			for range r.IntN(4) + 1 {
				p := r.IntN(len(ls) + 1)
				switch r.IntN(3) {
				case 0:
					ls = append(ls[:p], append([]string{gen(1)}, ls[p:]...)...)
				case 1:
					if p < len(ls) {
						ls = append(ls[:p], ls[p+1:]...)
					}
				default:
					if p < len(ls) {
						ls[p] = gen(1)
					}
				}
			}
			neu = strings.Join(ls, "")
		}
		d := unifiedDiff("a", "b", old, neu, maxDiffBytes)
		if got := applyDiff(t, old, d); got != neu {
			t.Fatalf("case %d: applying\n%s\nto %q gives %q, want %q", i, d, old, got, neu)
		}
	}
}

// TestUnifiedDiffLargeFallback diffs a middle region that needs more than
// maxDiffEdits edits: it must still be correct.
func TestUnifiedDiffLargeFallback(t *testing.T) {
	var a, b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&a, "old %d\n", i)
		fmt.Fprintf(&b, "new %d\n", i)
	}
	d := unifiedDiff("a", "b", a.String(), b.String(), 10<<20)
	if got := applyDiff(t, a.String(), d); got != b.String() {
		t.Fatal("fallback diff does not apply")
	}
}

func TestUnifiedDiffCut(t *testing.T) {
	neu := strings.Repeat("line\n", 100000)
	d := unifiedDiff("/dev/null", "b", "", neu, 4096)
	if len(d) > 8192 || !strings.Contains(d, "[diff cut at 4096 bytes]") {
		t.Fatalf("diff of %d bytes not cut as asked", len(d))
	}
}

// TestUnifiedDiffSkipsCommonText keeps the cost of a small change in a big
// text small: only a few lines must be split and diffed.
func TestUnifiedDiffSkipsCommonText(t *testing.T) {
	old := strings.Repeat("some line of text\n", 50000)
	neu := strings.Replace(old, "some line", "SOME line", 1)
	neu = neu[:len(neu)/2] + "inserted\n" + neu[len(neu)/2:]
	allocs := testing.AllocsPerRun(3, func() {
		unifiedDiff("a", "b", old, neu, maxDiffBytes)
	})
	d := unifiedDiff("a", "b", old, neu, maxDiffBytes)
	if got := applyDiff(t, old, d); got != neu {
		t.Fatal("diff does not apply")
	}
	// Splitting the middle (25,000 lines) is one allocation of a slice,
	// not one per line; the Myers trace is a handful of small slices.
	if allocs > 100 {
		t.Fatalf("%v allocations for a two-line change", allocs)
	}
}

// TestDiffSpansRandom replaces random disjoint byte ranges (not aligned to
// lines) and diffs only those spans: the diff must turn old into new.
func TestDiffSpansRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a\n", "bb", "\n", "c\r\n", "dd\n", "e"}
	gen := func(n int) string {
		var sb strings.Builder
		for range n {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		return sb.String()
	}
	for i := range 3000 {
		old := gen(r.IntN(40) + 1)
		// Pick sorted cut points, use pairs as replaced ranges.
		var raw []span
		var neu strings.Builder
		pos, delta := 0, 0
		for pos < len(old) {
			start := pos + r.IntN(len(old)-pos+1)
			end := start + r.IntN(min(6, len(old)-start)+1)
			if end == start && r.IntN(2) == 0 {
				break
			}
			repl := gen(r.IntN(3))
			neu.WriteString(old[pos:start])
			neu.WriteString(repl)
			raw = append(raw, span{start, end, start + delta, start + delta + len(repl)})
			delta += len(repl) - (end - start)
			pos = end
			if end == start {
				pos++ // keep spans disjoint
				if pos > len(old) {
					break
				}
				neu.WriteString(old[start:pos])
			}
		}
		if pos < len(old) {
			neu.WriteString(old[pos:])
		}
		n := neu.String()
		d := diffSpans("a", "b", old, n, alignSpans(old, n, raw), maxDiffBytes)
		if got := applyDiff(t, old, d); got != n {
			t.Fatalf("case %d: spans %v of %q -> %q\n%s\napplied: %q", i, raw, old, n, d, got)
		}
	}
}
