package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/coding-agent/coding-agent/session"
	"github.com/coding-agent/coding-agent/session/display"
	"github.com/coding-agent/coding-agent/session/models"
	"github.com/coding-agent/coding-agent/tools"
)

// maxStdinPrompt bounds a prompt read from stdin (--print -).
const maxStdinPrompt = 64 << 20

// exitCancelled is the exit status of a --print run stopped by Ctrl-C.
const exitCancelled = 130

// hasPrint reports whether the command line asks for one-shot mode.
func hasPrint(args []string) bool {
	for _, a := range args {
		if a == "--print" || a == "-print" || a == "-p" || strings.HasPrefix(a, "--print=") || strings.HasPrefix(a, "-print=") {
			return true
		}
	}
	return false
}

// runPrint implements `coding-agent --print PROMPT`: one prompt turn, the
// final answer on stdout, tool activity on stderr.
func runPrint(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("print", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	prompt := fs.String("print", "", "the prompt")
	fs.StringVar(prompt, "p", "", "the prompt")
	toolList := fs.String("tools", strings.Join(tools.Builtins(), ","), "comma-separated built-in tools; empty for none")
	model := fs.String("model", "", "provider/model")
	preset := fs.String("preset", "read-only", "read-only, workspace-write or full-access")
	cwd := fs.String("cwd", "", "working directory")
	dataDir := fs.String("data-dir", "", "data directory")
	logLevel := fs.String("log-level", "warn", "log level for stderr")
	cont := fs.Bool("continue", false, "continue the newest session of the working directory")
	resume := fs.String("resume", "", "continue the session with this id")
	if err := fs.Parse(args); err != nil {
		return exitCode(usagef("%v", err), stderr)
	}
	if *cont && *resume != "" {
		return exitCode(usagef("--continue and --resume: choose one"), stderr)
	}
	if fs.NArg() > 0 {
		return exitCode(usagef("unexpected argument %q (quote the prompt)", fs.Arg(0)), stderr)
	}
	if *prompt == "-" {
		// The prompt comes from stdin, whole (a pipe or a file).
		b, err := io.ReadAll(io.LimitReader(stdin, maxStdinPrompt+1))
		if err != nil {
			return exitCode(fmt.Errorf("reading the prompt from stdin: %w", err), stderr)
		}
		if len(b) > maxStdinPrompt {
			return exitCode(usagef("--print -: the prompt on stdin is larger than %d MiB", maxStdinPrompt>>20), stderr)
		}
		*prompt = string(b)
		stdin = strings.NewReader("") // consumed: nobody left to answer approvals there
	}
	if strings.TrimSpace(*prompt) == "" {
		return exitCode(usagef("--print needs a prompt (or - to read it from stdin)"), stderr)
	}
	if *model != "" {
		if err := models.CheckSpec(*model); err != nil {
			return exitCode(usagef("--model: %v", err), stderr)
		}
	}
	names := []string{}
	if *toolList != "" {
		names = strings.Split(*toolList, ",")
		for i := range names {
			names[i] = strings.TrimSpace(names[i])
		}
	}
	if _, err := tools.Select(names); err != nil {
		return exitCode(usagef("--tools: %v", err), stderr)
	}
	p, err := tools.ParsePreset(*preset)
	if err != nil {
		return exitCode(usagef("--preset: %v", err), stderr)
	}
	env, err := newEnv(stderr, cwd, *logLevel, *dataDir)
	if err != nil {
		return exitCode(err, stderr)
	}
	env.Model = *model
	defer env.Shutdown()

	if env.ModelError() != nil {
		// Before any session exists: a run that cannot prompt leaves
		// no empty session behind.
		return exitCode(env.NoModel(), stderr)
	}
	out := &printer{stderr: stderr}
	opts := session.Options{
		Cwd:     *cwd,
		Tools:   names,
		Preset:  p,
		OnEvent: out.event,
		Approve: terminalApprover(stdin, stderr),
	}
	id := *resume
	if *cont {
		if id, err = newestSession(env, *cwd); err != nil {
			return exitCode(err, stderr)
		}
	}
	var s *session.Session
	if id != "" {
		// The stored session's tools and preset are its own.
		opts.Tools = nil
		s, _, err = env.OpenSession(id, opts)
		if errors.Is(err, session.ErrNotFound) {
			return exitCode(usagef("--resume: no session %q", id), stderr)
		}
	} else {
		s, err = env.NewSession(opts)
	}
	if err != nil {
		var pe *session.ParamError
		if errors.As(err, &pe) {
			return exitCode(usagef("%v", err), stderr)
		}
		return exitCode(err, stderr)
	}
	defer s.Close()
	for _, m := range s.MCPServers() {
		if !m.Started {
			fmt.Fprintf(stderr, "coding-agent: MCP server %q did not start: %s\n", m.Name, m.Error)
		}
	}
	stop, err := s.Prompt(ctx, []session.Content{session.Text(*prompt)})
	if errors.Is(err, session.ErrNoModel) {
		return exitCode(env.NoModel(), stderr)
	}
	if err != nil {
		return exitCode(err, stderr)
	}
	if answer := out.answer(); answer != "" {
		fmt.Fprintln(stdout, strings.TrimRight(answer, "\n"))
	}
	switch stop {
	case session.StopEndTurn:
		return exitOK
	case session.StopCancelled:
		fmt.Fprintln(stderr, "coding-agent: cancelled")
		return exitCancelled
	default:
		fmt.Fprintf(stderr, "coding-agent: the turn stopped early: %s\n", stop)
		return exitError
	}
}

// newestSession is the id of the newest stored session of cwd.
func newestSession(env *session.Env, cwd string) (string, error) {
	list, err := env.StoredSessions()
	if err != nil {
		return "", err
	}
	want := canonicalDir(cwd)
	for _, st := range list {
		if canonicalDir(st.Cwd) == want {
			return st.ID, nil
		}
	}
	return "", usagef("--continue: no earlier session in %s", cwd)
}

func canonicalDir(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return filepath.Clean(p)
}

// printer shows a turn's tool activity on stderr and keeps the text of the
// last agent message, the final answer.
type printer struct {
	stderr io.Writer

	mu     sync.Mutex
	lastID string
	text   strings.Builder
	titles map[string]string
}

func (p *printer) event(ev session.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.titles == nil {
		p.titles = map[string]string{}
	}
	switch ev := ev.(type) {
	case *session.MessageChunk:
		if ev.MessageID != p.lastID {
			p.lastID = ev.MessageID
			p.text.Reset()
		}
		p.text.WriteString(ev.Text)
	case *session.ToolCallStarted:
		p.titles[ev.CallID] = ev.Title
	case *session.ToolCallUpdated:
		if ev.Title != "" {
			p.titles[ev.CallID] = ev.Title
		}
		if ev.Status == session.StatusInProgress {
			fmt.Fprintf(p.stderr, "→ %s\n", display.Title(p.titles[ev.CallID]))
		}
	case *session.ToolCallFinished:
		title := display.Title(p.titles[ev.CallID])
		if ev.Status == session.StatusCompleted {
			fmt.Fprintf(p.stderr, "✓ %s\n", title)
			return
		}
		why := ""
		if len(ev.Text) > 0 {
			why, _, _ = strings.Cut(ev.Text[0], "\n")
		}
		fmt.Fprintf(p.stderr, "✗ %s: %s\n", title, display.Line(why))
	}
}

func (p *printer) answer() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.text.String()
}

// terminalApprover asks y/N on the terminal when one is attached, showing
// the diff or the command and the justification; without a terminal every
// request is denied.
func terminalApprover(stdin io.Reader, stderr io.Writer) func(context.Context, *session.ApprovalRequest) (session.Decision, error) {
	f, ok := stdin.(*os.File)
	if !ok || !isTerminal(f) {
		return func(ctx context.Context, req *session.ApprovalRequest) (session.Decision, error) {
			return session.Reject, errors.New("no terminal to ask for approval (run with a terminal, or choose a preset that allows this)")
		}
	}
	var mu sync.Mutex
	in := bufio.NewReader(f)
	return func(ctx context.Context, req *session.ApprovalRequest) (session.Decision, error) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprint(stderr, approvalPrompt(req))
		answer := make(chan string, 1)
		go func() {
			line, _ := in.ReadString('\n')
			answer <- strings.ToLower(strings.TrimSpace(line))
		}()
		select {
		case <-ctx.Done():
			fmt.Fprintln(stderr)
			return session.Reject, ctx.Err()
		case a := <-answer:
			if a == "y" || a == "yes" {
				return session.AllowOnce, nil
			}
			return session.Reject, nil
		}
	}
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// approvalPrompt is what the terminal shows for one approval request. Model
// and tool text is neutralized (package display) and indented, so that it
// can neither move the cursor nor draw a line at the left margin where the
// real question is asked; a file change names the file really written (the
// target behind a symlink); the policy's reason is always shown, and the
// model's justification beside it.
func approvalPrompt(req *session.ApprovalRequest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s wants to ", display.Line(req.Tool))
	if req.Request == tools.RequestEscalation {
		b.WriteString("run a command outside the sandbox:\n")
		b.WriteString(display.Indent(req.Command, "  │ "))
		b.WriteString("\n")
	} else {
		b.WriteString("change a file")
		if req.Path != "" {
			fmt.Fprintf(&b, ": %s", display.Line(req.Path))
		}
		b.WriteString("\n")
		b.WriteString(display.Indent(strings.TrimRight(req.Diff, "\n"), "  │ "))
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "Policy: %s\n", display.Line(req.Reason))
	if req.Justification != "" {
		fmt.Fprintf(&b, "Reason given by the model:\n%s\n", display.Indent(req.Justification, "  │ "))
	}
	b.WriteString("Allow once? [y/N] ")
	return b.String()
}
