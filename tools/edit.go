package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

const editSchema = `{
  "type": "object",
  "properties": {
    "path": {
      "type": "string",
      "minLength": 1,
      "description": "File to edit: relative to the working directory, absolute, or starting with ~/."
    },
    "edits": {
      "type": "array",
      "minItems": 1,
      "description": "Replacements to make. Each oldText must occur exactly once in the original file; the edits must not overlap.",
      "items": {
        "type": "object",
        "properties": {
          "oldText": {
            "type": "string",
            "minLength": 1,
            "description": "Exact text to replace, copied from the file including whitespace and indentation."
          },
          "newText": {
            "type": "string",
            "description": "Text to put in its place."
          }
        },
        "required": ["oldText", "newText"],
        "additionalProperties": false
      }
    },
    "justification": {
      "type": "string",
      "minLength": 1,
      "maxLength": 240,
      "description": "Optional brief reason for this change, in the user's language; shown to the user when the change needs their approval."
    }
  },
  "required": ["path", "edits"],
  "additionalProperties": false
}`

const editDescription = `Edit a file by exact text replacement. Each edit replaces "oldText" with "newText".
Every oldText is matched against the ORIGINAL file (not against the result of the other edits), exactly, including whitespace and indentation, and must occur exactly once: include enough surrounding lines to make it unique. Edits must not overlap; to change adjacent text, use one edit. If any edit does not apply (not found, found more than once, empty, overlapping), the whole call fails and the file is not changed; when oldText is not found, the error shows the most similar lines of the file so you can retry without reading it again.
Line endings are kept: in a file with CRLF line endings, oldText and newText may use plain "\n". A UTF-8 byte order mark is kept.
The file is replaced atomically and keeps its permission bits. To create a file or replace all of it, use write.
Changing files outside what the permission preset allows needs the user's approval; give a brief justification in the user's language, shown to them when approval is needed. Files inside .git and the agent's data directory can never be edited.`

// Edit is the edit tool: exact, all-or-nothing text replacements.
type Edit struct {
	m *mutator
	v *validator
}

// NewEdit returns the edit tool for the working directory cwd, which must
// be an existing directory.
func NewEdit(cwd string, opts Options) (*Edit, error) {
	m, err := newMutator("edit", cwd, opts)
	if err != nil {
		return nil, err
	}
	return &Edit{m: m, v: newValidator("edit", editSchema)}, nil
}

// Name returns "edit".
func (*Edit) Name() string { return "edit" }

// Title returns "Edit".
func (*Edit) Title() string { return "Edit" }

// Description returns what the model is told about edit.
func (*Edit) Description() string { return editDescription }

// Schema returns the JSON Schema of edit's arguments.
func (*Edit) Schema() json.RawMessage { return json.RawMessage(editSchema) }

// Kind returns [KindEdit].
func (*Edit) Kind() Kind { return KindEdit }

// NewTitler returns the title of an edit call: "Edit <path>".
func (t *Edit) NewTitler() Titler { return pathTitle("Edit", t.m.cwd) }

// Validate checks and decodes edit's arguments.
func (t *Edit) Validate(args json.RawMessage) (any, error) {
	var a editArgs
	if err := t.v.decode(args, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

type editArgs struct {
	Path  string `json:"path"`
	Edits []struct {
		OldText string `json:"oldText"`
		NewText string `json:"newText"`
	} `json:"edits"`
	Justification string `json:"justification"`
}

// replacement is one edit located in the file.
type replacement struct {
	start, end int // byte range of oldText in the body
	newText    string
	index      int // position in args.Edits
}

const utf8BOM = "\ufeff"

// Execute applies the edits of call.Args to the file, all or none.
func (t *Edit) Execute(ctx context.Context, call Call) (Result, error) {
	in, err := input[*editArgs](call, t.Validate)
	if err != nil {
		return Result{}, err
	}
	args := *in
	a, err := t.m.mutate(ctx, call, args.Path, args.Justification, func(abs, old string, exists bool) (string, []span, error) {
		if !exists {
			return "", nil, fmt.Errorf("%s does not exist; use write to create a file", abs)
		}
		name := displayPath(t.m.cwd, abs)
		return applyEdits(name, old, args)
	})
	if err != nil {
		return Result{}, err
	}
	n := len(args.Edits)
	plural := "s"
	if n == 1 {
		plural = ""
	}
	res := a.result(fmt.Sprintf("Edited %s (%d replacement%s)", displayPath(t.m.cwd, a.abs), n, plural))
	res.Details["replacements"] = n
	return res, nil
}

// applyEdits returns content with every edit applied and the spans it
// changed, or an error naming the first edit that does not apply.
func applyEdits(name, content string, args editArgs) (string, []span, error) {
	bom := strings.HasPrefix(content, utf8BOM)
	body := strings.TrimPrefix(content, utf8BOM)
	crlf := usesCRLF(body)

	reps := make([]replacement, 0, len(args.Edits))
	for i, e := range args.Edits {
		oldText, newText := e.OldText, e.NewText
		if bom {
			oldText = strings.TrimPrefix(oldText, utf8BOM)
		}
		if oldText == "" {
			return "", nil, fmt.Errorf("edits[%d].oldText is empty; it must be text copied from %s", i, name)
		}
		pos, n := locate(body, oldText)
		if n == 0 && crlf && strings.Contains(oldText, "\n") {
			// The model writes "\n"; the file has "\r\n".
			if c := toCRLF(oldText); c != oldText {
				pos, n = locate(body, c)
				if n > 0 {
					oldText = c
				}
			}
		}
		if n == 0 && !crlf && strings.Contains(oldText, "\r\n") {
			// The other way round: "\r\n" given for a file with "\n".
			lf := strings.ReplaceAll(oldText, "\r\n", "\n")
			pos, n = locate(body, lf)
			if n > 0 {
				oldText = lf
				newText = strings.ReplaceAll(newText, "\r\n", "\n")
			}
		}
		switch {
		case n == 0:
			return "", nil, notFoundError(name, body, e.OldText, i)
		case n > 1:
			return "", nil, repeatedError(name, body, oldText, i)
		}
		if crlf {
			newText = toCRLF(newText)
		}
		reps = append(reps, replacement{start: pos, end: pos + len(oldText), newText: newText, index: i})
	}
	sort.Slice(reps, func(i, j int) bool { return reps[i].start < reps[j].start })
	for i := 1; i < len(reps); i++ {
		if reps[i].start < reps[i-1].end {
			a, b := reps[i-1].index, reps[i].index
			return "", nil, fmt.Errorf("edits[%d] and edits[%d] overlap in %s (both at line %d); merge them into one edit",
				min(a, b), max(a, b), name, lineAt(body, reps[i].start))
		}
	}
	size := len(content)
	for _, r := range reps {
		size += len(r.newText) - (r.end - r.start)
	}
	var out strings.Builder
	out.Grow(size)
	off := 0
	if bom {
		out.WriteString(utf8BOM)
		off = len(utf8BOM)
	}
	spans := make([]span, 0, len(reps))
	last, delta := 0, 0
	for _, r := range reps {
		out.WriteString(body[last:r.start])
		out.WriteString(r.newText)
		last = r.end
		o0 := off + r.start
		spans = append(spans, span{o0, off + r.end, o0 + delta, o0 + delta + len(r.newText)})
		delta += len(r.newText) - (r.end - r.start)
	}
	out.WriteString(body[last:])
	if out.String() == content {
		return "", nil, fmt.Errorf("the edits leave %s unchanged (every newText equals its oldText)", name)
	}
	return out.String(), spans, nil
}

// usesCRLF reports whether the text's first line ending is "\r\n".
func usesCRLF(s string) bool {
	i := strings.IndexByte(s, '\n')
	return i > 0 && s[i-1] == '\r'
}

// toCRLF turns every "\n" that is not already preceded by "\r" into "\r\n".
func toCRLF(s string) string {
	if !strings.Contains(s, "\n") {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s) + strings.Count(s, "\n"))
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' && (i == 0 || s[i-1] != '\r') {
			sb.WriteByte('\r')
		}
		sb.WriteByte(s[i])
	}
	return sb.String()
}

// locate finds s in body: its first position and whether it occurs once
// (1) or more (2), counting overlapping occurrences; 0 if absent.
func locate(body, s string) (int, int) {
	i := strings.Index(body, s)
	if i < 0 {
		return -1, 0
	}
	if strings.Contains(body[i+1:], s) {
		return i, 2
	}
	return i, 1
}

// lineAt returns the 1-based line of byte offset off.
func lineAt(body string, off int) int { return strings.Count(body[:off], "\n") + 1 }

func repeatedError(name, body, s string, i int) error {
	var lines []string
	count := 0
	for off := 0; ; {
		j := strings.Index(body[off:], s)
		if j < 0 {
			break
		}
		count++
		if len(lines) < 5 {
			lines = append(lines, fmt.Sprint(lineAt(body, off+j)))
		}
		off += j + 1
	}
	more := ""
	if count > len(lines) {
		more = ", …"
	}
	return fmt.Errorf("edits[%d].oldText occurs %d times in %s (at lines %s%s); it must occur exactly once: include more surrounding lines to make it unique",
		i, count, name, strings.Join(lines, ", "), more)
}

// notFoundError says that oldText is not in the file and points at the
// most similar region, so that a model can retry without reading again.
func notFoundError(name, body, oldText string, i int) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "edits[%d].oldText was not found in %s. It must match the original file exactly, including whitespace, indentation and line breaks.", i, name)
	reg, ok := closestRegion(body, oldText)
	if !ok {
		sb.WriteString(" No similar text was found; read the file to see its content.")
		return fmt.Errorf("%s", sb.String())
	}
	switch {
	case reg.sameButSpace:
		fmt.Fprintf(&sb, "\nLines %d-%d match except for whitespace or indentation:\n", reg.first, reg.last)
	case reg.first == reg.last:
		fmt.Fprintf(&sb, "\nThe most similar text is line %d:\n", reg.first)
	default:
		fmt.Fprintf(&sb, "\nThe most similar region is lines %d-%d:\n", reg.first, reg.last)
	}
	sb.WriteString(reg.excerpt)
	return fmt.Errorf("%s", sb.String())
}

// region is a run of lines of the file found by closestRegion.
type region struct {
	first, last  int // 1-based, inclusive
	excerpt      string
	score        float64
	sameButSpace bool
}

const (
	// maxHintLines bounds the lines compared and shown for a multi-line
	// oldText.
	maxHintLines = 40
	// maxExcerptLines and maxExcerptWidth bound the excerpt in the error.
	maxExcerptLines = 8
	maxExcerptWidth = 160
	// minHintScore is the similarity below which no region is suggested.
	minHintScore = 0.4
	// hintCandidates is how many best-matching lines are refined with the
	// whole of a multi-line oldText.
	hintCandidates = 8
)

// closestRegion finds the part of body most similar to want. It costs one
// pass over body: every line is scored against want's first non-blank line
// with a bigram similarity (lines of a very different length are skipped),
// and the best few are then scored with all of want's lines.
func closestRegion(body, want string) (region, bool) {
	wantLines := strings.Split(strings.ReplaceAll(want, "\r\n", "\n"), "\n")
	// Blank lines around the text say little about where it is.
	for len(wantLines) > 0 && strings.TrimSpace(wantLines[0]) == "" {
		wantLines = wantLines[1:]
	}
	for len(wantLines) > 0 && strings.TrimSpace(wantLines[len(wantLines)-1]) == "" {
		wantLines = wantLines[:len(wantLines)-1]
	}
	if len(wantLines) == 0 {
		return region{}, false
	}
	if len(wantLines) > maxHintLines {
		wantLines = wantLines[:maxHintLines]
	}
	key := strings.TrimSpace(wantLines[0])
	var sim similarity
	sim.setKey(key)

	type cand struct {
		line, off int
		score     float64
	}
	var best []cand
	line := 0
	for off := 0; off < len(body); {
		line++
		end := strings.IndexByte(body[off:], '\n')
		if end < 0 {
			end = len(body)
		} else {
			end += off
		}
		l := strings.TrimSpace(body[off:end])
		if l != "" && 3*len(l)+8 >= len(key) && len(l) <= 3*len(key)+8 {
			sc := sim.score(l)
			if len(best) < hintCandidates || sc > best[len(best)-1].score {
				c := cand{line, off, sc}
				k := sort.Search(len(best), func(i int) bool { return best[i].score < sc })
				best = append(best, cand{})
				copy(best[k+1:], best[k:])
				best[k] = c
				if len(best) > hintCandidates {
					best = best[:hintCandidates]
				}
			}
		}
		off = end + 1
	}
	if len(best) == 0 {
		return region{}, false
	}

	fileLines := func(startOff, n int) []string {
		var out []string
		for off := startOff; off < len(body) && len(out) < n; {
			end := strings.IndexByte(body[off:], '\n')
			if end < 0 {
				out = append(out, body[off:])
				break
			}
			out = append(out, strings.TrimSuffix(body[off:off+end], "\r"))
			off += end + 1
		}
		return out
	}
	var top region
	for _, c := range best {
		startLine, startOff := c.line, c.off
		got := fileLines(startOff, len(wantLines))
		score := c.score
		same := len(got) == len(wantLines)
		if len(wantLines) > 1 {
			total := 0.0
			for k, w := range wantLines {
				var g string
				if k < len(got) {
					g = got[k]
				}
				wt, gt := strings.TrimSpace(w), strings.TrimSpace(g)
				if wt != gt {
					same = false
				}
				if wt == "" && gt == "" {
					total++
					continue
				}
				var s similarity
				s.setKey(wt)
				total += s.score(gt)
			}
			score = total / float64(len(wantLines))
		} else if strings.TrimSpace(got[0]) != strings.TrimSpace(wantLines[0]) {
			same = false
		}
		if score > top.score || top.first == 0 {
			top = region{first: startLine, last: startLine + len(got) - 1, score: score, sameButSpace: same}
			top.excerpt = excerpt(got, startLine)
		}
	}
	if top.score < minHintScore && !top.sameButSpace {
		return region{}, false
	}
	return top, true
}

// excerpt formats lines numbered from first, bounded in count and width.
func excerpt(lines []string, first int) string {
	var sb strings.Builder
	for k, l := range lines {
		if k == maxExcerptLines {
			fmt.Fprintf(&sb, "… (%d more lines)\n", len(lines)-k)
			break
		}
		if len(l) > maxExcerptWidth {
			cut := maxExcerptWidth
			for cut > 0 && !utf8.RuneStart(l[cut]) {
				cut--
			}
			l = l[:cut] + "…"
		}
		fmt.Fprintf(&sb, "%d\t%s\n", first+k, l)
	}
	return strings.TrimSuffix(sb.String(), "\n")
}

// similarity scores strings against a key with the Dice coefficient of
// their byte bigrams (hashed into a small table). A score costs
// O(len(s)) with no allocation, so scoring every line of a 20 MiB file is
// cheap.
type similarity struct {
	key   string
	want  [1 << 12]uint16 // bigram counts of the key
	n     int             // number of bigrams in the key
	left  [1 << 12]uint16 // counts not yet matched, valid when stamp == gen
	stamp [1 << 12]uint32
	gen   uint32
}

func bigram(a, b byte) uint16 { return (uint16(a)*31 + uint16(b)) & (1<<12 - 1) }

func (s *similarity) setKey(key string) {
	if len(key) > 512 {
		key = key[:512]
	}
	s.key = key
	for i := 0; i+1 < len(key); i++ {
		s.want[bigram(key[i], key[i+1])]++
		s.n++
	}
}

// score returns a similarity in [0, 1]; 1 for equal strings.
func (s *similarity) score(x string) float64 {
	if x == s.key {
		return 1
	}
	if len(x) > 1024 {
		x = x[:1024]
	}
	if s.n == 0 || len(x) < 2 {
		return 0
	}
	s.gen++
	match := 0
	for i := 0; i+1 < len(x); i++ {
		h := bigram(x[i], x[i+1])
		if s.stamp[h] != s.gen {
			s.stamp[h] = s.gen
			s.left[h] = s.want[h]
		}
		if s.left[h] > 0 {
			s.left[h]--
			match++
		}
	}
	return 2 * float64(match) / float64(s.n+len(x)-1)
}
