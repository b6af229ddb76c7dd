package tools

import (
	"fmt"
	"strings"
)

const (
	// diffContext is the number of unchanged lines shown around a change.
	diffContext = 3
	// maxDiffEdits bounds the Myers search: a changed region that needs
	// more line insertions plus deletions is shown as one replacement,
	// which is still a correct diff, only not a minimal one.
	maxDiffEdits = 500
	// maxDiffBytes caps the diff text carried in details and approval
	// requests; the exact change itself is in FileChange.
	maxDiffBytes = 1 << 20
)

// unifiedDiff returns a unified diff from oldText to newText with
// diffContext lines of context, or "" when they are equal. oldName is
// "/dev/null" for a created file. The output stops after about maxBytes
// bytes with a line saying it was cut.
//
// Its cost is bounded: the common head and tail are skipped with byte
// comparisons, only the differing middle is split into lines, and that
// middle is diffed with Myers' algorithm up to maxDiffEdits edits.
func unifiedDiff(oldName, newName, oldText, newText string, maxBytes int) string {
	if oldText == newText {
		return ""
	}
	p := commonPrefix(oldText, newText)
	s := commonSuffix(oldText[p:], newText[p:])
	return diffSpans(oldName, newName, oldText, newText,
		alignSpans(oldText, newText, []span{{p, len(oldText) - s, p, len(newText) - s}}), maxBytes)
}

// lineStart reports whether i starts a line of s (or is its end after a
// newline).
func lineStart(s string, i int) bool { return i == 0 || s[i-1] == '\n' }

// span is a changed region: oldText[o0:o1] became newText[n0:n1]. Outside
// its spans, the two texts are equal.
type span struct{ o0, o1, n0, n1 int }

// alignSpan widens s to whole lines of both texts. The text before s and
// after s being the same in both, moving both starts back (or both ends
// forward) by the same bytes keeps the span valid.
func alignSpan(oldText, newText string, s span) span {
	back := s.o0 - (strings.LastIndexByte(oldText[:s.o0], '\n') + 1)
	s.o0 -= back
	s.n0 -= back
	if !lineStart(oldText, s.o1) || !lineStart(newText, s.n1) {
		i := strings.IndexByte(oldText[s.o1:], '\n')
		if i < 0 {
			s.n1 += len(oldText) - s.o1
			s.o1 = len(oldText)
		} else {
			s.o1 += i + 1
			s.n1 += i + 1
		}
	}
	return s
}

// alignSpans widens raw changes (sorted, disjoint) to whole lines, merging
// the ones that then touch or overlap, for diffSpans. A widened span may
// reach over the next change only when it is merged with it, and the
// merged span ends where the last one does.
func alignSpans(oldText, newText string, raw []span) []span {
	var out []span
	for _, r := range raw {
		a := alignSpan(oldText, newText, r)
		if n := len(out); n > 0 && a.o0 <= out[n-1].o1 {
			out[n-1].o1, out[n-1].n1 = a.o1, a.n1
			continue
		}
		out = append(out, a)
	}
	return out
}

// diffSpans writes the unified diff of spans (sorted, disjoint and
// line-aligned: see alignSpans). Only the spans are split into lines and
// diffed; the equal text between them is counted.
func diffSpans(oldName, newName, oldText, newText string, spans []span, maxBytes int) string {
	var ops []diffOp
	pos := 0
	for k, s := range spans {
		gap := oldText[pos:s.o0]
		n := strings.Count(gap, "\n")
		switch {
		case k == 0:
			before := lastLines(gap, diffContext)
			ops = appendSkip(ops, n-len(before))
			ops = appendLines(ops, ' ', before)
		case n <= 2*diffContext:
			ops = appendLines(ops, ' ', splitLines(gap))
		default:
			ops = appendLines(ops, ' ', firstLines(gap, diffContext))
			ops = appendSkip(ops, n-2*diffContext)
			ops = appendLines(ops, ' ', lastLines(gap, diffContext))
		}
		ops = appendChange(ops, oldText[s.o0:s.o1], newText[s.n0:s.n1], maxBytes)
		pos = s.o1
	}
	ops = appendLines(ops, ' ', firstLines(oldText[pos:], diffContext))

	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", oldName, newName)
	writeHunks(&sb, ops, maxBytes)
	return sb.String()
}

// diffOp is one line of an edit script: kind ' ', '-' or '+' with its
// line; or kind 's' (equal lines skipped, not shown), 'D' or 'I' (lines
// deleted or inserted beyond the size cap, counted but not shown), with
// their number in n.
type diffOp struct {
	kind byte
	line string
	n    int
}

func appendLines(ops []diffOp, kind byte, lines []string) []diffOp {
	for _, l := range lines {
		ops = append(ops, diffOp{kind: kind, line: l})
	}
	return ops
}

func appendSkip(ops []diffOp, n int) []diffOp {
	if n > 0 {
		ops = append(ops, diffOp{kind: 's', n: n})
	}
	return ops
}

// countLines counts the lines of s, a last line without "\n" included.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// appendChange appends the edit script from del to ins (whole lines). A
// pure insertion or deletion needs no search, and of a large one only the
// lines that fit maxBytes are split; the rest is counted.
func appendChange(ops []diffOp, del, ins string, maxBytes int) []diffOp {
	if del != "" && ins != "" {
		return append(ops, diffLines(splitLines(del), splitLines(ins))...)
	}
	kind, bulk, text := byte('+'), byte('I'), ins
	if ins == "" {
		kind, bulk, text = '-', 'D', del
	}
	shown := text
	if len(shown) > maxBytes {
		cut := strings.IndexByte(shown[maxBytes:], '\n')
		if cut >= 0 {
			shown = shown[:maxBytes+cut+1]
		}
	}
	ops = appendLines(ops, kind, splitLines(shown))
	if rest := countLines(text[len(shown):]); rest > 0 {
		ops = append(ops, diffOp{kind: bulk, n: rest})
	}
	return ops
}

// writeHunks writes the hunks of ops, which start at line 1 of both texts.
func writeHunks(sb *strings.Builder, ops []diffOp, maxBytes int) {
	// Line numbers of each op in the old and the new text.
	oldAt := make([]int, len(ops)+1)
	newAt := make([]int, len(ops)+1)
	o, n := 1, 1
	for i, op := range ops {
		oldAt[i], newAt[i] = o, n
		switch op.kind {
		case ' ':
			o++
			n++
		case '-':
			o++
		case '+':
			n++
		case 's':
			o += op.n
			n += op.n
		case 'D':
			o += op.n
		case 'I':
			n += op.n
		}
	}
	oldAt[len(ops)], newAt[len(ops)] = o, n
	isChange := func(k byte) bool { return k == '-' || k == '+' || k == 'D' || k == 'I' }

	i := 0
	for {
		j := i
		for j < len(ops) && !isChange(ops[j].kind) {
			j++
		}
		if j == len(ops) {
			return
		}
		hs := j
		for k := 0; k < diffContext && hs > i && ops[hs-1].kind == ' '; k++ {
			hs--
		}
		he := j
		for {
			for he < len(ops) && isChange(ops[he].kind) {
				he++
			}
			run := he
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run < len(ops) && isChange(ops[run].kind) && run-he <= 2*diffContext {
				he = run
				continue
			}
			he = min(he+diffContext, run)
			break
		}
		fmt.Fprintf(sb, "@@ -%s +%s @@\n", hunkRange(oldAt[hs], oldAt[he]-oldAt[hs]), hunkRange(newAt[hs], newAt[he]-newAt[hs]))
		for _, op := range ops[hs:he] {
			if sb.Len() > maxBytes || op.kind == 'D' || op.kind == 'I' {
				fmt.Fprintf(sb, "[diff cut at %d bytes]\n", maxBytes)
				return
			}
			sb.WriteByte(op.kind)
			sb.WriteString(op.line)
			if !strings.HasSuffix(op.line, "\n") {
				sb.WriteString("\n\\ No newline at end of file\n")
			}
		}
		i = he
	}
}

// hunkRange formats "start,count" as diff(1) does: an empty range names
// the line before it.
func hunkRange(start, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start-1)
	}
	if count == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, count)
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	// Compare in blocks first: string equality is memcmp.
	for i+4096 <= n && a[i:i+4096] == b[i:i+4096] {
		i += 4096
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

func commonSuffix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i+4096 <= n && a[len(a)-i-4096:len(a)-i] == b[len(b)-i-4096:len(b)-i] {
		i += 4096
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// splitLines splits s into lines that keep their "\n".
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := make([]string, 0, strings.Count(s, "\n")+1)
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// lastLines returns the last n lines of s, which ends with "\n" or is empty.
func lastLines(s string, n int) []string {
	end := len(s)
	start := end
	for k := 0; k < n && start > 0; k++ {
		start = strings.LastIndexByte(s[:start-1], '\n') + 1
	}
	return splitLines(s[start:end])
}

// firstLines returns the first n lines of s.
func firstLines(s string, n int) []string {
	end := 0
	for k := 0; k < n && end < len(s); k++ {
		i := strings.IndexByte(s[end:], '\n')
		if i < 0 {
			end = len(s)
			break
		}
		end += i + 1
	}
	return splitLines(s[:end])
}

// diffLines returns the edit script from a to b (Myers' O(ND) algorithm),
// or a plain replacement when more than maxDiffEdits edits are needed.
func diffLines(a, b []string) []diffOp {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return replaceOps(a, b)
	}
	maxD := min(n+m, maxDiffEdits)
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	// trace[d] holds v[k] for k in [-d-1, d+1] after step d.
	var trace [][]int
	for d := 0; d <= maxD; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				trace = append(trace, append([]int(nil), v[off-d-1:off+d+2]...))
				return backtrack(a, b, trace)
			}
		}
		trace = append(trace, append([]int(nil), v[off-d-1:off+d+2]...))
	}
	return replaceOps(a, b)
}

// replaceOps is the edit script that deletes all of a and inserts all of b.
func replaceOps(a, b []string) []diffOp {
	ops := make([]diffOp, 0, len(a)+len(b))
	for _, l := range a {
		ops = append(ops, diffOp{kind: '-', line: l})
	}
	for _, l := range b {
		ops = append(ops, diffOp{kind: '+', line: l})
	}
	return ops
}

func backtrack(a, b []string, trace [][]int) []diffOp {
	get := func(d, k int) int { return trace[d][k+d+1] }
	x, y := len(a), len(b)
	var rev []diffOp
	for d := len(trace) - 1; d > 0; d-- {
		k := x - y
		var pk int
		if k == -d || (k != d && get(d-1, k-1) < get(d-1, k+1)) {
			pk = k + 1 // came down: an insertion
		} else {
			pk = k - 1 // came right: a deletion
		}
		px := get(d-1, pk)
		py := px - pk
		for x > px && y > py {
			rev = append(rev, diffOp{kind: ' ', line: a[x-1]})
			x--
			y--
		}
		if x == px {
			rev = append(rev, diffOp{kind: '+', line: b[y-1]})
			y--
		} else {
			rev = append(rev, diffOp{kind: '-', line: a[x-1]})
			x--
		}
	}
	for x > 0 && y > 0 {
		rev = append(rev, diffOp{kind: ' ', line: a[x-1]})
		x--
		y--
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}
