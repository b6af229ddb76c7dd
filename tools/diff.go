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
	// Common head, backed up to a line start.
	p := commonPrefix(oldText, newText)
	p = strings.LastIndexByte(oldText[:p], '\n') + 1
	// Common tail within what is left, moved forward to a line start of
	// both sides (the tails being equal bytes, the next line start of one
	// is one of the other).
	s := commonSuffix(oldText[p:], newText[p:])
	os, ns := len(oldText)-s, len(newText)-s
	if !lineStart(oldText, os) || !lineStart(newText, ns) {
		i := strings.IndexByte(oldText[os:], '\n')
		if i < 0 {
			os, ns = len(oldText), len(newText)
		} else {
			os += i + 1
			ns += i + 1
		}
	}
	headLines := strings.Count(oldText[:p], "\n")

	a := splitLines(oldText[p:os])
	b := splitLines(newText[p:ns])
	ops := diffLines(a, b)

	// Context from the common head and tail.
	before := lastLines(oldText[:p], diffContext)
	after := firstLines(oldText[os:], diffContext)
	all := make([]diffOp, 0, len(before)+len(ops)+len(after))
	for _, l := range before {
		all = append(all, diffOp{' ', l})
	}
	all = append(all, ops...)
	for _, l := range after {
		all = append(all, diffOp{' ', l})
	}
	startLine := headLines - len(before) + 1

	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", oldName, newName)
	writeHunks(&sb, all, startLine, maxBytes)
	return sb.String()
}

// lineStart reports whether i starts a line of s (or is its end after a
// newline).
func lineStart(s string, i int) bool { return i == 0 || s[i-1] == '\n' }

type diffOp struct {
	kind byte // ' ', '-' or '+'
	line string
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
		ops = append(ops, diffOp{'-', l})
	}
	for _, l := range b {
		ops = append(ops, diffOp{'+', l})
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
			rev = append(rev, diffOp{' ', a[x-1]})
			x--
			y--
		}
		if x == px {
			rev = append(rev, diffOp{'+', b[y-1]})
			y--
		} else {
			rev = append(rev, diffOp{'-', a[x-1]})
			x--
		}
	}
	for x > 0 && y > 0 {
		rev = append(rev, diffOp{' ', a[x-1]})
		x--
		y--
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

// writeHunks writes the hunks of ops, whose first line is line startLine of
// both files' common numbering up to the first change.
func writeHunks(sb *strings.Builder, ops []diffOp, startLine, maxBytes int) {
	oldLine, newLine := startLine, startLine
	i := 0
	for i < len(ops) {
		// Find the next change.
		j := i
		for j < len(ops) && ops[j].kind == ' ' {
			j++
		}
		if j == len(ops) {
			return
		}
		// Hunk start: up to diffContext equal lines before the change.
		hs := max(i, j-diffContext)
		oldLine += hs - i
		newLine += hs - i
		// Hunk end: stop after diffContext equal lines when the next
		// change is more than 2*diffContext equal lines away.
		he := j
		for he < len(ops) {
			if ops[he].kind != ' ' {
				he++
				continue
			}
			run := he
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-he > 2*diffContext {
				he = min(he+diffContext, run)
				break
			}
			he = run
		}
		oldCount, newCount := 0, 0
		for _, op := range ops[hs:he] {
			if op.kind != '+' {
				oldCount++
			}
			if op.kind != '-' {
				newCount++
			}
		}
		fmt.Fprintf(sb, "@@ -%s +%s @@\n", hunkRange(oldLine, oldCount), hunkRange(newLine, newCount))
		for _, op := range ops[hs:he] {
			if sb.Len() > maxBytes {
				fmt.Fprintf(sb, "[diff cut at %d bytes]\n", maxBytes)
				return
			}
			sb.WriteByte(op.kind)
			sb.WriteString(op.line)
			if !strings.HasSuffix(op.line, "\n") {
				sb.WriteString("\n\\ No newline at end of file\n")
			}
		}
		oldLine += oldCount
		newLine += newCount
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
