package chat

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coding-agent/coding-agent/session"
	"github.com/coding-agent/coding-agent/session/display"
	"github.com/coding-agent/coding-agent/tools"
)

// style turns styling on or off (NO_COLOR, TERM=dumb).
type style struct{ color bool }

func (s style) sgr(code, text string) string {
	if !s.color || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}
func (s style) bold(t string) string  { return s.sgr("1", t) }
func (s style) dim(t string) string   { return s.sgr("2", t) }
func (s style) red(t string) string   { return s.sgr("31", t) }
func (s style) green(t string) string { return s.sgr("32", t) }
func (s style) cyan(t string) string  { return s.sgr("36", t) }
func (s style) on(code string) string {
	if !s.color {
		return ""
	}
	return "\x1b[" + code + "m"
}
func (s style) off() string {
	if !s.color {
		return ""
	}
	return "\x1b[0m"
}

// tailLines is how many lines of a running command's output are shown.
const tailLines = 5

// redrawEvery bounds how often the live region (running tool calls and
// their output tails) is redrawn, so that a command printing 10,000 lines
// costs a few dozen redraws, not 10,000.
const redrawEvery = 40 * time.Millisecond

// renderer shows a session's events on a terminal. Every piece of model or
// tool text goes through package display before it reaches the screen.
// It is safe for concurrent use; all writes to the screen go through its
// lock.
type renderer struct {
	mu    sync.Mutex
	w     io.Writer // raw-mode terminal: "\n" is written as "\r\n" by crlf
	st    style
	live  bool // cursor movement allowed (not TERM=dumb)
	width int

	midLine  bool   // the cursor is not at column 0
	kind     string // "text", "thought" or ""
	md       mdState
	calls    map[string]*call
	order    []string // running calls, in order of start
	drawn    int      // lines of the live region on the screen
	lastDraw time.Time
	timer    *time.Timer
	dirty    bool
	batch    batch
	usage    session.Usage
	closed   bool
}

type call struct {
	tool, title string
	kind        tools.Kind
	status      session.ToolStatus
	tail        string
}

func newRenderer(w io.Writer, st style, live bool, width int) *renderer {
	return &renderer{w: w, st: st, live: live, width: width, calls: map[string]*call{}}
}

func (r *renderer) setWidth(w int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w > 0 {
		r.clearLive()
		r.width = w
		r.drawLive()
	}
}

// close stops the redraw timer.
func (r *renderer) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.timer != nil {
		r.timer.Stop()
	}
}

func (r *renderer) write(s string) {
	if s == "" {
		return
	}
	io.WriteString(r.w, s)
	r.midLine = !strings.HasSuffix(s, "\n")
}

// newline ends a partial line.
func (r *renderer) newline() {
	if r.midLine {
		r.write("\n")
	}
}

// printf writes a line of the program's own (trusted) text, above the live
// region.
func (r *renderer) println(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clearLive()
	r.endText()
	r.newline()
	r.write(s + "\n")
	r.drawLive()
}

func (r *renderer) event(ev session.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch ev := ev.(type) {
	case *session.MessageChunk:
		r.text("text", ev.Text)
	case *session.ThoughtChunk:
		r.text("thought", ev.Text)
	case *session.ToolCallStarted:
		r.clearLive()
		r.endText()
		r.calls[ev.CallID] = &call{tool: ev.Tool, title: ev.Title, kind: ev.Kind, status: session.StatusPending}
		r.order = append(r.order, ev.CallID)
		r.drawLive()
	case *session.ToolCallUpdated:
		c := r.calls[ev.CallID]
		if c == nil {
			return
		}
		if ev.Title != "" {
			c.title = ev.Title
		}
		if ev.Status != "" {
			c.status = ev.Status
			if !r.live && ev.Status == session.StatusInProgress {
				// No live region: one line when it starts.
				r.newline()
				r.write(r.st.dim("→ "+r.callTitle(c)) + "\n")
			}
		}
		if ev.Progress != nil {
			c.tail = ev.Progress.Tail
		}
		r.redrawSoon()
	case *session.ToolCallFinished:
		r.clearLive()
		c := r.calls[ev.CallID]
		if c == nil {
			c = &call{tool: "tool"}
		}
		delete(r.calls, ev.CallID)
		for i, id := range r.order {
			if id == ev.CallID {
				r.order = append(r.order[:i], r.order[i+1:]...)
				break
			}
		}
		r.newline()
		if ev.Status == session.StatusCompleted {
			r.write(r.st.green("✓") + " " + r.callTitle(c) + "\n")
		} else {
			why := ""
			if len(ev.Text) > 0 {
				why, _, _ = strings.Cut(ev.Text[0], "\n")
			}
			r.write(r.st.red("✗") + " " + r.callTitle(c) + r.st.dim(": "+r.cut(display.Line(why), 4)) + "\n")
		}
		for _, d := range ev.Diffs {
			r.write(r.diff(d, 40))
		}
		r.batch.add(verbOf(c))
		r.drawLive()
	case *session.Usage:
		r.usage = *ev
	}
}

// endTurn finishes what a turn left on the screen.
func (r *renderer) endTurn() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clearLive()
	r.order, r.calls = nil, map[string]*call{}
	r.endText()
	r.flushBatch()
	r.newline()
}

func (r *renderer) callTitle(c *call) string { return r.titleLine(c, 0) }

// titleLine is a call's title (the tool's own, "Bash · make", which follows
// the streaming arguments), its label in bold, cut to the width less
// margin when margin > 0.
func (r *renderer) titleLine(c *call, margin int) string {
	t := display.Title(c.title)
	if t == "" {
		t = display.Line(toolLabel(c.tool))
	}
	if margin > 0 {
		t = r.cut(t, margin)
	}
	if label, rest, ok := strings.Cut(t, " · "); ok {
		return r.st.bold(label) + " · " + rest
	}
	return r.st.bold(t)
}

func toolLabel(tool string) string {
	if tool == "" {
		return "Tool"
	}
	r, n := utf8.DecodeRuneInString(tool)
	return strings.ToUpper(string(r)) + tool[n:]
}

// cut shortens a line of plain text to the terminal's width less margin.
func (r *renderer) cut(s string, margin int) string {
	max := r.width - margin
	if max < 10 {
		max = 10
	}
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	rs := []rune(s)
	return string(rs[:max-1]) + "…"
}

// text streams a chunk of the answer or of a thought.
func (r *renderer) text(kind, s string) {
	r.clearLive()
	if r.kind != kind {
		r.endText()
		r.flushBatch()
		r.newline()
		r.kind = kind
	}
	s = display.Text(s)
	if kind == "thought" {
		r.write(r.st.on("2;3") + s + r.st.off())
	} else {
		r.write(r.md.feed(s, r.st))
	}
	r.drawLive()
}

// endText ends the message being streamed.
func (r *renderer) endText() {
	if r.kind == "text" {
		r.write(r.md.flush(r.st))
	}
	r.kind = ""
}

func (r *renderer) flushBatch() {
	if h := r.batch.heading(); h != "" && r.batch.total > 1 {
		r.newline()
		r.write(r.st.dim(h) + "\n")
	}
	r.batch = batch{}
}

// redrawSoon redraws the live region now, or within redrawEvery.
func (r *renderer) redrawSoon() {
	if !r.live {
		return
	}
	if time.Since(r.lastDraw) >= redrawEvery {
		r.clearLive()
		r.drawLive()
		return
	}
	r.dirty = true
	if r.timer == nil && !r.closed {
		r.timer = time.AfterFunc(redrawEvery, func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.timer = nil
			if r.dirty && !r.closed {
				r.clearLive()
				r.drawLive()
			}
		})
	}
}

// clearLive erases the live region.
func (r *renderer) clearLive() {
	if r.drawn > 0 {
		fmt.Fprintf(r.w, "\r\x1b[%dA\x1b[J", r.drawn)
		r.drawn = 0
	}
}

// drawLive draws the running calls and their output tails below the text.
func (r *renderer) drawLive() {
	r.dirty = false
	if !r.live || len(r.order) == 0 {
		return
	}
	r.lastDraw = time.Now()
	var b strings.Builder
	if r.midLine {
		// The live region starts on a line of its own; the text goes on
		// below it once the calls end.
		b.WriteString("\n")
		r.midLine = false
	}
	n := 0
	for _, id := range r.order {
		c := r.calls[id]
		mark := "…"
		if c.status == session.StatusInProgress {
			mark = "⏵"
		}
		b.WriteString(r.st.cyan(mark) + " " + r.cutStyled(c) + "\n")
		n++
		if c.tail != "" {
			lines := strings.Split(strings.TrimRight(c.tail, "\n"), "\n")
			if len(lines) > tailLines {
				lines = lines[len(lines)-tailLines:]
			}
			for _, l := range lines {
				b.WriteString(r.st.dim("  │ "+r.cut(display.Line(l), 5)) + "\n")
				n++
			}
		}
	}
	io.WriteString(r.w, b.String())
	r.drawn = n
}

// cutStyled is callTitle cut to the width, so that the live region's line
// count is what was drawn.
func (r *renderer) cutStyled(c *call) string { return r.titleLine(c, 3) }

// diff shows a file change in colour: the lines that differ between the
// common head and tail, at most max lines (0: all).
func (r *renderer) diff(d session.Diff, max int) string {
	var b strings.Builder
	b.WriteString(r.st.dim("  "+display.Line(d.Path)) + "\n")
	var old []string
	if d.OldText != nil {
		old = splitLines(*d.OldText)
	}
	nw := splitLines(d.NewText)
	i := 0
	for i < len(old) && i < len(nw) && old[i] == nw[i] {
		i++
	}
	j := 0
	for j < len(old)-i && j < len(nw)-i && old[len(old)-1-j] == nw[len(nw)-1-j] {
		j++
	}
	var lines []string
	for _, l := range old[i : len(old)-j] {
		lines = append(lines, r.st.red("  - "+display.Line(l)))
	}
	for _, l := range nw[i : len(nw)-j] {
		lines = append(lines, r.st.green("  + "+display.Line(l)))
	}
	if max > 0 && len(lines) > max {
		more := len(lines) - max
		lines = append(lines[:max], r.st.dim(fmt.Sprintf("  … %d more lines", more)))
	}
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return b.String()
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// unified colours a unified diff (an approval's).
func (r *renderer) unified(diff string, max int) string {
	lines := strings.Split(strings.TrimRight(diff, "\n"), "\n")
	more := 0
	if max > 0 && len(lines) > max {
		more = len(lines) - max
		lines = lines[:max]
	}
	var b strings.Builder
	for _, l := range lines {
		shown := "  │ " + display.Line(l)
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			shown = r.st.bold(shown)
		case strings.HasPrefix(l, "+"):
			shown = r.st.green(shown)
		case strings.HasPrefix(l, "-"):
			shown = r.st.red(shown)
		case strings.HasPrefix(l, "@@"):
			shown = r.st.cyan(shown)
		}
		b.WriteString(shown + "\n")
	}
	if more > 0 {
		b.WriteString(r.st.dim(fmt.Sprintf("  │ … %d more lines (d shows everything)", more)) + "\n")
	}
	return b.String()
}

// verbOf is the batch heading's verb for a call.
func verbOf(c *call) string {
	switch {
	case c.kind == tools.KindExecute:
		return "ran"
	case c.kind == tools.KindRead:
		return "read"
	case c.tool == "write":
		return "wrote"
	case c.kind == tools.KindEdit:
		return "edited"
	}
	return "called"
}

// batch counts the calls of one run of tool calls, by verb, in order of
// first appearance.
type batch struct {
	verbs  []string
	counts map[string]int
	total  int
}

func (b *batch) add(verb string) {
	if b.counts == nil {
		b.counts = map[string]int{}
	}
	if b.counts[verb] == 0 {
		b.verbs = append(b.verbs, verb)
	}
	b.counts[verb]++
	b.total++
}

// heading is e.g. "Ran 2 commands, read 1 file".
func (b *batch) heading() string {
	parts := make([]string, 0, len(b.verbs))
	for _, v := range b.verbs {
		n := b.counts[v]
		noun := map[string]string{"ran": "command", "read": "file", "edited": "file", "wrote": "file", "called": "tool"}[v]
		if n != 1 {
			noun += "s"
		}
		parts = append(parts, fmt.Sprintf("%s %d %s", v, n, noun))
	}
	h := strings.Join(parts, ", ")
	if h == "" {
		return ""
	}
	return strings.ToUpper(h[:1]) + h[1:]
}

// mdState renders streamed Markdown a piece at a time: code blocks,
// headings, list bullets, **bold** and `code`. Text arrives already
// neutralized; only the program's own SGR sequences are added.
type mdState struct {
	line    strings.Builder // the start of a line, held while it may be a marker
	started bool            // the current line's start has been decided
	fence   bool            // the current line is a fence or heading (held whole)
	inCode  bool
	bold    bool
	code    bool
	star    bool // a '*' held: it may open or close bold
}

func (m *mdState) feed(s string, st style) string {
	var out strings.Builder
	for _, r := range s {
		m.rune(r, st, &out)
	}
	return out.String()
}

func (m *mdState) rune(r rune, st style, out *strings.Builder) {
	if r == '\n' {
		m.endLine(st, out)
		return
	}
	if !m.started {
		m.line.WriteRune(r)
		m.decide(st, out, false)
		return
	}
	if m.fence {
		m.line.WriteRune(r)
		return
	}
	m.inline(r, st, out)
}

// decide looks at the held start of a line.
func (m *mdState) decide(st style, out *strings.Builder, eol bool) {
	l := m.line.String()
	trim := strings.TrimLeft(l, " ")
	if trim == "" && !eol {
		return
	}
	switch {
	case strings.HasPrefix(trim, "```"):
		m.started, m.fence = true, true
		return
	case m.inCode:
		if !eol && strings.HasPrefix("```", trim) {
			return // may still become a fence
		}
		m.started = true
		m.line.Reset()
		out.WriteString(st.on("36") + l)
		return
	case strings.HasPrefix(trim, "#"):
		m.started, m.fence = true, true
		return
	case !eol && (trim == "-" || trim == "*" || trim == "`" || trim == "``"):
		return
	case strings.HasPrefix(trim, "- "), strings.HasPrefix(trim, "* "):
		m.started = true
		m.line.Reset()
		out.WriteString(l[:len(l)-len(trim)] + "• ")
		for _, r := range trim[2:] {
			m.inline(r, st, out)
		}
		return
	}
	m.started = true
	m.line.Reset()
	for _, r := range l {
		m.inline(r, st, out)
	}
}

func (m *mdState) inline(r rune, st style, out *strings.Builder) {
	if m.inCode {
		out.WriteRune(r)
		return
	}
	if m.star {
		m.star = false
		if r == '*' {
			m.bold = !m.bold
			if m.bold {
				out.WriteString(st.on("1"))
			} else {
				out.WriteString(st.off())
				m.restyle(st, out)
			}
			if !st.color {
				out.WriteString("")
			}
			return
		}
		out.WriteRune('*')
	}
	switch r {
	case '*':
		m.star = true
		return
	case '`':
		m.code = !m.code
		if m.code {
			out.WriteString(st.on("36"))
		} else {
			out.WriteString(st.off())
			m.restyle(st, out)
		}
		return
	}
	out.WriteRune(r)
}

func (m *mdState) restyle(st style, out *strings.Builder) {
	if m.bold {
		out.WriteString(st.on("1"))
	}
	if m.code {
		out.WriteString(st.on("36"))
	}
}

func (m *mdState) endLine(st style, out *strings.Builder) {
	if !m.started {
		m.decide(st, out, true)
	}
	if m.fence {
		l := strings.TrimLeft(m.line.String(), " ")
		if strings.HasPrefix(l, "```") {
			m.inCode = !m.inCode
			lang := strings.TrimSpace(strings.TrimPrefix(l, "```"))
			out.WriteString(st.dim("───" + prefixed(" ", lang)))
		} else {
			out.WriteString(st.bold(strings.TrimSpace(strings.TrimLeft(l, "#"))))
		}
	}
	if m.star {
		out.WriteRune('*')
		m.star = false
	}
	if m.inCode && !m.fence {
		out.WriteString(st.off())
	}
	if m.bold || m.code {
		// Inline styles end with the line.
		out.WriteString(st.off())
		m.bold, m.code = false, false
	}
	out.WriteString("\n")
	m.line.Reset()
	m.started, m.fence = false, false
}

// flush ends the message: whatever is held is shown.
func (m *mdState) flush(st style) string {
	var out strings.Builder
	if m.started || m.line.Len() > 0 {
		if !m.started {
			m.decide(st, &out, true)
		}
		if m.fence {
			out.WriteString(m.line.String())
		}
		if m.star {
			out.WriteRune('*')
		}
		out.WriteString(st.off())
	}
	*m = mdState{}
	return out.String()
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}
