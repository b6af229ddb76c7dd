// Package chat is coding-agent's interactive terminal mode: a line editor
// for prompts, the session's events rendered as they stream, and approvals
// asked inline. It drives the same engine as every other front end, through
// the session SDK ([session.Env], [session.Session] and its events).
package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/term"

	"github.com/coding-agent/coding-agent/session"
	"github.com/coding-agent/coding-agent/session/display"
	"github.com/coding-agent/coding-agent/tools"
)

// Config is what Run needs.
type Config struct {
	Env *session.Env
	// Options are the new session's (Cwd, Tools, Preset); Run sets OnEvent
	// and Approve.
	Options session.Options
	// Continue resumes the newest stored session of Options.Cwd; Resume
	// a given one.
	Continue bool
	Resume   string
	// In and Out are the terminal.
	In, Out *os.File
	// Color allows colours and styles (not NO_COLOR); Dumb forbids cursor
	// movement (TERM=dumb).
	Color, Dumb bool
	// HistoryFile keeps the prompts across runs; "" keeps none.
	HistoryFile string
}

// ErrNotTerminal is returned when In or Out is not a terminal.
var ErrNotTerminal = errors.New("chat needs a terminal")

// app is one run of the chat.
type app struct {
	cfg  Config
	ctx  context.Context
	r    *renderer
	rd   *reader
	t    *term.Terminal
	lio  *lineIO
	s    *session.Session
	keys chan byte // keys typed while a turn runs, for the approver

	approveMu sync.Mutex
}

// Run runs the chat until the person exits (Ctrl-D, a second Ctrl-C, or
// /exit) or ctx ends.
func Run(ctx context.Context, cfg Config) error {
	if !term.IsTerminal(int(cfg.In.Fd())) || !term.IsTerminal(int(cfg.Out.Fd())) {
		return ErrNotTerminal
	}
	width, height, err := term.GetSize(int(cfg.Out.Fd()))
	if err != nil || width <= 0 {
		width, height = 80, 24
	}
	old, err := term.MakeRaw(int(cfg.In.Fd()))
	if err != nil {
		return fmt.Errorf("terminal: %w", err)
	}
	defer term.Restore(int(cfg.In.Fd()), old)

	rd, err := startReader(cfg.In)
	if err != nil {
		return err
	}
	defer rd.stop()

	a := &app{cfg: cfg, ctx: ctx, rd: rd, keys: make(chan byte, 16)}
	a.r = newRenderer(crlf{cfg.Out}, style{color: cfg.Color}, !cfg.Dumb, width)
	defer a.r.close()
	a.lio = &lineIO{rd: rd, out: cfg.Out}
	a.t = term.NewTerminal(a.lio, a.prompt())
	a.t.SetSize(width, height)
	h := loadHistory(cfg.HistoryFile)
	a.t.History = h
	if !cfg.Dumb {
		a.t.SetBracketedPasteMode(true)
		defer a.t.SetBracketedPasteMode(false)
	}

	// Window resizes.
	winch := make(chan os.Signal, 1)
	notifyResize(winch)
	resized := make(chan struct{})
	go func() {
		defer close(resized)
		for range winch {
			if w, h, err := term.GetSize(int(cfg.Out.Fd())); err == nil {
				a.r.setWidth(w)
				a.t.SetSize(w, h)
			}
		}
	}()
	defer func() { signal.Stop(winch); close(winch); <-resized }()

	if err := a.open(cfg.Resume, cfg.Continue); err != nil {
		return err
	}
	defer func() { a.s.Close() }()
	a.r.println(a.r.st.dim("coding-agent chat · /help · Alt-Enter: new line · Ctrl-C cancels · Ctrl-D exits"))

	interrupted := false
	var pending []string
	for {
		if len(pending) == 0 {
			a.r.println(a.r.st.dim(a.status()))
			a.t.SetPrompt(a.prompt())
		} else {
			a.t.SetPrompt(a.r.st.dim("… "))
		}
		a.lio.interrupted = false
		line, err := a.t.ReadLine()
		if a.lio.interrupted {
			empty := line == "" && len(pending) == 0
			pending = nil
			if !empty {
				// Ctrl-C drops what was typed.
				interrupted = false
				continue
			}
			if interrupted {
				return nil
			}
			interrupted = true
			a.r.println(a.r.st.dim("(Ctrl-C again or Ctrl-D to exit)"))
			continue
		}
		if errors.Is(err, io.EOF) {
			// Ctrl-D at an empty line, or the terminal went away.
			return nil
		}
		interrupted = false
		pasted := errors.Is(err, term.ErrPasteIndicator)
		if err != nil && !pasted {
			return err
		}
		line = strings.ReplaceAll(line, histBreak, "\n")
		if pasted {
			// A pasted line: keep it and the lines after it as one prompt.
			pending = append(pending, line)
			continue
		}
		if strings.HasSuffix(line, "\\") {
			pending = append(pending, strings.TrimSuffix(line, "\\"))
			continue
		}
		pending = append(pending, line)
		text := strings.Join(pending, "\n")
		pending = nil
		if strings.TrimSpace(text) == "" {
			continue
		}
		h.add(text)
		if strings.HasPrefix(text, "/") && !strings.Contains(text, "\n") {
			if exit := a.command(strings.Fields(text)); exit {
				return nil
			}
			continue
		}
		a.turn(text)
		if ctx.Err() != nil {
			return nil
		}
	}
}

func (a *app) prompt() string { return a.r.st.sgr("1;36", "›") + " " }

// status is the line shown above the prompt.
func (a *app) status() string {
	model := "no model"
	if m := a.s.Model(); m != nil {
		model = m.Name()
	}
	cwd := a.s.Cwd()
	if home, err := os.UserHomeDir(); err == nil && home != "" && (cwd == home || strings.HasPrefix(cwd, home+string(filepath.Separator))) {
		cwd = "~" + cwd[len(home):]
	}
	parts := []string{display.Line(model), string(a.s.Preset()), display.Line(cwd)}
	a.r.mu.Lock()
	u := a.r.usage
	a.r.mu.Unlock()
	if u.Size > 0 {
		parts = append(parts, fmt.Sprintf("context %s/%s (%d%%)", human(u.Used), human(u.Size), u.Used*100/u.Size))
	} else if u.Used > 0 {
		parts = append(parts, "context "+human(u.Used))
	}
	if u.CostUSD != nil {
		parts = append(parts, fmt.Sprintf("$%.2f", *u.CostUSD))
	}
	return a.r.cut(strings.Join(parts, " · "), 1)
}

func human(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// open opens the session: a new one, the one named by id, or (cont) the
// newest of the working directory. A resumed one shows its history.
func (a *app) open(id string, cont bool) error {
	opts := a.cfg.Options
	opts.OnEvent = a.r.event
	opts.Approve = a.approve
	if cont && id == "" {
		list, err := a.cfg.Env.StoredSessions()
		if err != nil {
			return err
		}
		for _, st := range list {
			if sameDir(st.Cwd, opts.Cwd) {
				id = st.ID
				break
			}
		}
		if id == "" {
			a.r.println(a.r.st.dim("No earlier session in " + display.Line(opts.Cwd) + ": starting a new one."))
		}
	}
	var s *session.Session
	var err error
	if id != "" {
		opts.Tools = nil
		s, _, err = a.cfg.Env.OpenSession(id, opts)
		if errors.Is(err, session.ErrNotFound) {
			return fmt.Errorf("--resume: no session %q (/sessions or 'coding-agent chat' then /sessions lists them)", id)
		}
	} else {
		s, err = a.cfg.Env.NewSession(opts)
	}
	if err != nil {
		return err
	}
	if a.s != nil {
		a.s.Close()
	}
	a.s = s
	a.r.mu.Lock()
	a.r.usage = session.Usage{}
	a.r.mu.Unlock()
	if id != "" {
		a.showHistory()
	}
	for _, m := range s.MCPServers() {
		if !m.Started {
			a.r.println(a.r.st.red("MCP server ") + display.Line(m.Name) + a.r.st.red(" did not start: ") + display.Line(m.Error))
		}
	}
	if err := s.PersistError(); err != nil {
		a.r.println(a.r.st.red("This session is not saved: ") + display.Line(err.Error()))
	}
	return nil
}

func sameDir(a, b string) bool {
	clean := func(p string) string {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		return filepath.Clean(p)
	}
	return clean(a) == clean(b)
}

// showHistory shows the conversation of a resumed session.
func (a *app) showHistory() {
	r := a.r
	r.println(r.st.dim("── session " + display.Line(a.s.ID()) + " ──"))
	for _, m := range a.s.History() {
		for _, p := range m.Parts {
			switch {
			case m.Role == "user" && p.Kind == "text":
				r.println(r.st.bold("› ") + display.Indent(p.Text, "  ")[2:])
			case p.Kind == "text":
				r.mu.Lock()
				r.clearLive()
				r.newline()
				r.write(r.md.feed(display.Text(p.Text), r.st) + r.md.flush(r.st))
				r.newline()
				r.mu.Unlock()
			case p.Kind == "tool_call":
				r.println(r.st.dim("• " + display.Line(toolLabel(p.ToolName))))
			}
		}
	}
	r.println(r.st.dim("── end of history ──"))
}

// turn runs one prompt turn; Ctrl-C cancels it.
func (a *app) turn(text string) {
	type result struct {
		stop session.StopReason
		err  error
	}
	done := make(chan result, 1)
	go func() {
		stop, err := a.s.Prompt(a.ctx, []session.Content{session.Text(text)})
		done <- result{stop, err}
	}()
	cancelled := false
	var res result
loop:
	for {
		select {
		case res = <-done:
			break loop
		case b, ok := <-a.rd.chunks:
			if !ok {
				a.s.Cancel()
				res = <-done
				break loop
			}
			for _, c := range b {
				if c == 3 {
					if !cancelled {
						a.r.println(a.r.st.dim("Cancelling…"))
					}
					cancelled = true
					a.s.Cancel()
					continue
				}
				select {
				case a.keys <- c:
				default:
				}
			}
		case <-a.ctx.Done():
			a.s.Cancel()
			res = <-done
			break loop
		}
	}
	a.r.endTurn()
	switch {
	case errors.Is(res.err, session.ErrNoModel):
		a.r.println(a.r.st.red("No model: ") + display.Text(a.cfg.Env.NoModel().Error()))
	case res.err != nil:
		a.r.println(a.r.st.red("Error: ") + display.Text(res.err.Error()))
	case res.stop == session.StopCancelled:
		a.r.println(a.r.st.dim("Cancelled."))
	case res.stop != session.StopEndTurn && res.stop != "":
		a.r.println(a.r.st.dim("The turn stopped early: " + string(res.stop)))
	}
}

// approve asks the person about one request, inline: y allow once, a
// always for this session, n reject, d show everything.
func (a *app) approve(ctx context.Context, req *session.ApprovalRequest) (session.Decision, error) {
	a.approveMu.Lock()
	defer a.approveMu.Unlock()
	for len(a.keys) > 0 {
		<-a.keys
	}
	a.r.println(a.r.approval(req, false))
	for {
		select {
		case <-ctx.Done():
			a.r.println(a.r.st.dim("  → not answered (cancelled)"))
			return session.Reject, ctx.Err()
		case k := <-a.keys:
			switch k {
			case 'y', 'Y':
				a.r.println(a.r.st.green("  → allowed once"))
				return session.AllowOnce, nil
			case 'a', 'A':
				a.r.println(a.r.st.green("  → allowed for this session"))
				return session.AllowAlways, nil
			case 'n', 'N', 27:
				a.r.println(a.r.st.red("  → rejected"))
				return session.Reject, nil
			case 'd', 'D':
				a.r.println(a.r.approval(req, true))
			}
		}
	}
}

// approval is the text of an approval request; model and tool text is
// neutralized and indented, so that it can draw neither a fake prompt nor
// move the cursor. full shows everything (the whole diff, the arguments).
func (r *renderer) approval(req *session.ApprovalRequest, full bool) string {
	st := r.st
	var b strings.Builder
	max := 20
	if full {
		max = 0
	}
	b.WriteString(st.sgr("1;33", "? ") + st.bold(display.Line(toolLabel(req.Tool))) + " wants to ")
	switch req.Request {
	case tools.RequestEscalation:
		b.WriteString("run a command outside the sandbox:\n")
		b.WriteString(r.unified(req.Command, max))
	case tools.RequestMCPTool:
		fmt.Fprintf(&b, "call the MCP tool %s of %s\n", display.Line(req.MCPTool), display.Line(req.Server))
		if !full {
			b.WriteString("  │ " + r.cut(display.Line(string(req.Input)), 5) + "\n")
		}
	default:
		b.WriteString("change a file\n")
		b.WriteString(r.unified(req.Diff, max))
	}
	if req.Path != "" {
		b.WriteString("  target:  " + st.bold(display.Line(req.Path)) + "\n")
	}
	b.WriteString("  policy:  " + display.Line(req.Reason) + "\n")
	if req.Justification != "" {
		b.WriteString("  the model says:\n" + display.Indent(req.Justification, "  │ ") + "\n")
	}
	if full && len(req.Input) > 0 {
		b.WriteString("  arguments:\n" + display.Indent(string(req.Input), "  │ ") + "\n")
	}
	b.WriteString(st.bold("  [y]") + " allow once  " + st.bold("[a]") + " always this session  " + st.bold("[n]") + " reject  " + st.bold("[d]") + " details")
	return b.String()
}

// localCommands are the chat's own; the session's (Session.Commands:
// /preset, /model, /sessions, /compact, …) go to the session as prompts.
var localCommands = []session.Command{
	{Name: "new", Description: "Start a new session"},
	{Name: "resume", Description: "Open a stored session and show its history", Hint: "session id"},
	{Name: "exit", Description: "Leave (also Ctrl-D, or Ctrl-C twice at the prompt)"},
}

const keysHelp = `Keys: Enter sends; Alt-Enter, or a line ending in \, goes on to a new line;
Up/Down recall earlier prompts; Ctrl-C cancels a running turn.`

// help lists the session's commands and the chat's.
func (a *app) help() string {
	var b strings.Builder
	b.WriteString("Commands:\n")
	for _, c := range append(a.s.Commands(), localCommands...) {
		name := "/" + c.Name
		if c.Hint != "" {
			name += " <" + c.Hint + ">"
		}
		fmt.Fprintf(&b, "  %s\n      %s\n", display.Line(name), display.Line(c.Description))
	}
	b.WriteString(keysHelp)
	return b.String()
}

// command runs a slash command; it reports whether to exit.
func (a *app) command(f []string) bool {
	r := a.r
	arg := ""
	if len(f) > 1 {
		arg = f[1]
	}
	name := strings.TrimPrefix(f[0], "/")
	switch name {
	case "exit", "quit":
		return true
	case "help":
		r.println(a.help())
		return false
	case "new":
		opts := a.cfg.Options
		opts.Preset = a.s.Preset()
		a.cfg.Options = opts
		if err := a.open("", false); err != nil {
			r.println(r.st.red("/new: ") + display.Line(err.Error()))
		}
		return false
	case "resume":
		if arg == "" {
			r.println("/resume needs a session id (/sessions lists them)")
			return false
		}
		if err := a.open(arg, false); err != nil {
			r.println(r.st.red("/resume: ") + display.Line(err.Error()))
		}
		return false
	}
	for _, c := range a.s.Commands() {
		if c.Name == name {
			// The session runs it; its answer streams like one.
			a.turn(strings.Join(f, " "))
			return false
		}
	}
	r.println(r.st.red("Unknown command ") + display.Line(f[0]) + " (/help lists them)")
	return false
}

// crlf writes "\n" as "\r\n": the terminal is in raw mode.
type crlf struct{ w io.Writer }

func (c crlf) Write(b []byte) (int, error) {
	s := strings.ReplaceAll(string(b), "\n", "\r\n")
	if _, err := io.WriteString(c.w, s); err != nil {
		return 0, err
	}
	return len(b), nil
}

// lineIO is the line editor's terminal: keys from the reader, output to
// the terminal. It notes a Ctrl-C (which the editor reports as the end of
// input, like Ctrl-D) and turns Alt-Enter into a line continuation.
type lineIO struct {
	rd          *reader
	out         io.Writer
	buf         []byte
	paste       bool
	interrupted bool
}

func (l *lineIO) Read(p []byte) (int, error) {
	if len(l.buf) == 0 {
		b, ok := <-l.rd.chunks
		if !ok {
			return 0, io.EOF
		}
		l.buf = l.scan(b)
	}
	n := copy(p, l.buf)
	l.buf = l.buf[n:]
	return n, nil
}

func (l *lineIO) scan(b []byte) []byte {
	s := string(b)
	if i := strings.LastIndex(s, "\x1b[200~"); i >= 0 && i > strings.LastIndex(s, "\x1b[201~") {
		l.paste = true
	} else if strings.Contains(s, "\x1b[201~") {
		l.paste = false
	}
	if !l.paste && !strings.Contains(s, "\x1b[200~") {
		if i := strings.IndexByte(s, 3); i >= 0 {
			// The editor would report Ctrl-C as the end of input and
			// keep it buffered: end the line instead (Ctrl-E, Enter), and
			// the chat discards it.
			l.interrupted = true
			return []byte{5, '\r'}
		}
		s = strings.ReplaceAll(s, "\x1b\r", "\\\r")
	}
	return []byte(s)
}

func (l *lineIO) Write(p []byte) (int, error) { return l.out.Write(p) }
