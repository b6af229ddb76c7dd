package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultGrace is how long a cancelled or timed-out bash command gets
// between SIGTERM and SIGKILL.
const DefaultGrace = 2 * time.Second

// drainDelay bounds how long the bash tool keeps reading output after the
// command's process group is dead. Only a process that left the group
// (setsid) can still hold the pipe then; its output is not waited for.
const drainDelay = 200 * time.Millisecond

// progressInterval is the minimum time between two progress deliveries
// (at most 10 a second, PROTOCOL.md §5).
const progressInterval = 100 * time.Millisecond

// readChunk is the size of the buffer the output pipe is read through.
const readChunk = 256 << 10

// outputReader is the read end of a command's output pipe.
type outputReader interface {
	io.Reader
	// stop makes a pending and every later Read return an error, even
	// while some process still holds the write end.
	stop()
	Close() error
}

// ErrNoSandbox is wrapped by the error of a bash call that needs the OS
// sandbox when none is available. Nothing ran.
var ErrNoSandbox = errors.New("no OS sandbox is available")

const bashSchema = `{
  "type": "object",
  "properties": {
    "command": {
      "type": "string",
      "minLength": 1,
      "description": "The command line, run with bash -c in the session's working directory."
    },
    "timeout": {
      "type": "number",
      "minimum": 0.01,
      "description": "Time limit in seconds. Omit it for no limit."
    },
    "sandbox_permissions": {
      "type": "string",
      "enum": ["use_default", "require_escalated"],
      "description": "use_default (default) runs in the sandbox of the current preset; require_escalated asks the user to run this one command outside the sandbox and needs a justification."
    },
    "justification": {
      "type": "string",
      "minLength": 1,
      "maxLength": 240,
      "description": "Why the command must run outside the sandbox, one short sentence in the user's language; shown to the user when asking for approval."
    }
  },
  "required": ["command"],
  "additionalProperties": false
}`

const bashDescription = `Run a shell command with bash -c in the session's working directory and return its output.

- stdin is /dev/null: commands cannot prompt for input; pass flags such as -y or --no-pager instead.
- stdout and stderr are combined, in the order they were written.
- Only the tail of the output is returned: the last 2000 lines or 50 KiB, whichever is smaller. When output is cut, the result starts with a note naming a file that holds the full output; read or grep that file instead of running the command again.
- A non-zero exit status, a kill by a signal, or a timeout makes the result an error that still carries the output tail.
- timeout (seconds) stops the command: its whole process group gets SIGTERM, then SIGKILL after a short grace. Set one for commands that might not finish (servers, watchers, interactive tools).
- Background processes do not outlive the command: they are killed when it ends.
- Under the read-only and workspace-write presets the command runs in an OS sandbox: no network, and writes only to the workspace (workspace-write) or to a private temp directory (read-only). Reading files is allowed everywhere.
- If a command fails only because of the sandbox (no network, a write outside the workspace) and it is really needed, run it again with sandbox_permissions "require_escalated" and a short justification in the user's language. The user is asked to approve that one command; a rejection is final, so do not retry it the same way.`

// Bash is the bash tool: it runs a command line and returns the tail of
// its output (PROTOCOL.md §5).
type Bash struct {
	cwd     string
	opts    Options
	outputs *OutputStore
	v       *validator

	// Grace is the time between SIGTERM and SIGKILL when a command is
	// cancelled or times out. NewBash sets it to DefaultGrace; values above
	// DefaultGrace are lowered to it.
	Grace time.Duration
}

// bashArgs are the decoded arguments of the bash tool.
type bashArgs struct {
	Command            string   `json:"command"`
	Timeout            *float64 `json:"timeout"`
	SandboxPermissions string   `json:"sandbox_permissions"`
	Justification      string   `json:"justification"`
}

// NewBash returns the bash tool for the session directory cwd, which must
// be an absolute path to an existing directory.
//
// Retained full outputs go to opts.Outputs, else to a store under
// opts.DataDir; with neither, cut outputs are not retained.
func NewBash(cwd string, opts Options) (*Bash, error) {
	if !filepath.IsAbs(cwd) {
		return nil, fmt.Errorf("bash: cwd %q is not an absolute path", cwd)
	}
	fi, err := os.Stat(cwd)
	if err != nil {
		return nil, fmt.Errorf("bash: cwd: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("bash: cwd %s is not a directory", cwd)
	}
	if opts.Preset == "" {
		opts.Preset = ReadOnly
	}
	if _, err := ParsePreset(string(opts.Preset)); err != nil {
		return nil, fmt.Errorf("bash: %w", err)
	}
	outputs := opts.Outputs
	if outputs == nil && opts.DataDir != "" {
		outputs = NewOutputStore(OutputDir(opts.DataDir))
	}
	grace := DefaultGrace
	if opts.KillGrace > 0 {
		grace = opts.KillGrace
	}
	return &Bash{
		cwd:     filepath.Clean(cwd),
		opts:    opts,
		outputs: outputs,
		v:       newValidator("bash", bashSchema),
		Grace:   grace,
	}, nil
}

// grace is b.Grace within [0, DefaultGrace].
func (b *Bash) grace() time.Duration { return min(max(b.Grace, 0), DefaultGrace) }

// Name returns "bash".
func (b *Bash) Name() string { return "bash" }

// Title returns "Bash".
func (b *Bash) Title() string { return "Bash" }

// Description is what the model is told about the tool.
func (b *Bash) Description() string { return bashDescription }

// Schema is the JSON Schema of the arguments.
func (b *Bash) Schema() json.RawMessage { return json.RawMessage(bashSchema) }

// Kind returns [KindExecute].
func (b *Bash) Kind() Kind { return KindExecute }

// NewTitler returns the title of a bash call: "Bash · <command>", the
// command's first line cut to 80 characters.
func (b *Bash) NewTitler() Titler { return commandTitle() }

// Validate checks and decodes bash's arguments: the schema, a command that
// is not blank, and a justification for an escalation.
func (b *Bash) Validate(raw json.RawMessage) (any, error) {
	var args bashArgs
	if err := b.v.decode(raw, &args); err != nil {
		return nil, err
	}
	if args.SandboxPermissions == "require_escalated" && strings.TrimSpace(args.Justification) == "" {
		return nil, &ValidationError{Tool: "bash", Field: "/justification",
			Rule: "required and non-empty when sandbox_permissions is require_escalated"}
	}
	if strings.TrimSpace(args.Command) == "" {
		return nil, &ValidationError{Tool: "bash", Field: "/command", Rule: "must not be blank"}
	}
	return &args, nil
}

// runMode says how a command runs.
type runMode int

const (
	runHost      runMode = iota // unsandboxed, full-access
	runSandboxed                // inside the OS sandbox
	runEscalated                // unsandboxed after an approved escalation
)

// Execute validates the arguments, applies the preset and runs the
// command. A command that ran returns a Result (an error result for a
// non-zero exit, a signal or a timeout); a refused or cancelled call
// returns an error.
func (b *Bash) Execute(ctx context.Context, call Call) (Result, error) {
	in, err := input[*bashArgs](call, b.Validate)
	if err != nil {
		return Result{}, err
	}
	args := *in
	escalate := args.SandboxPermissions == "require_escalated"
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("bash: cancelled before the command started: %w", err)
	}

	mode := runHost
	switch {
	case b.opts.Preset == FullAccess:
		// Already unsandboxed: an escalation request changes nothing.
	case escalate:
		if err := b.approveEscalation(ctx, call, args); err != nil {
			return Result{}, err
		}
		mode = runEscalated
	case b.opts.Sandbox == nil:
		return Result{}, fmt.Errorf("bash needs the OS sandbox under %s, and none is available here (%w%s); "+
			"the command did not run. The user can switch to the full-access preset, or the command can be "+
			"retried with sandbox_permissions \"require_escalated\" and a justification to ask for approval",
			b.opts.Preset, ErrNoSandbox, noSandboxHint)
	default:
		mode = runSandboxed
	}

	var timeout time.Duration
	if args.Timeout != nil {
		timeout = secondsToDuration(*args.Timeout)
	}
	call.started()
	return b.run(ctx, call, args, mode, timeout)
}

// secondsToDuration converts a timeout; one too large for a Duration
// (centuries) means no limit.
func secondsToDuration(s float64) time.Duration {
	if s*1e9 >= float64(1<<63-1) {
		return 0
	}
	return time.Duration(s * 1e9)
}

func (b *Bash) approveEscalation(ctx context.Context, call Call, args bashArgs) error {
	if b.opts.Approver == nil {
		return &PermissionError{Reason: "bash: running a command outside the sandbox needs the user's approval, " +
			"and there is no approval context here (standalone call); the command did not run"}
	}
	req := ApprovalRequest{
		Kind:          RequestEscalation,
		Tool:          "bash",
		CallID:        call.ID,
		Args:          call.Args,
		Command:       args.Command,
		Justification: args.Justification,
		Reason:        fmt.Sprintf("The command asks to run outside the sandbox of the %s preset", b.opts.Preset),
	}
	if err := b.opts.Approver.Approve(ctx, req); err != nil {
		return &PermissionError{Reason: fmt.Sprintf("bash: running the command outside the sandbox was not approved (%v); "+
			"the command did not run. Do not retry it unchanged", err)}
	}
	return nil
}

// command builds the process for mode.
func (b *Bash) command(ctx context.Context, command string, mode runMode) (SandboxedCommand, error) {
	env := b.opts.Env
	if env == nil {
		env = os.Environ()
	}
	if mode != runSandboxed {
		cmd := exec.Command(bashPath(), "-c", command)
		cmd.Dir = b.cwd
		cmd.Env = env
		return &hostCommand{cmd: cmd}, nil
	}
	req := SandboxRequest{
		Command:       command,
		Dir:           b.cwd,
		Preset:        b.opts.Preset,
		WritableRoots: append([]string{b.cwd}, b.opts.WritableRoots...),
		Env:           env,
	}
	if b.opts.DataDir != "" {
		req.Protected = []string{b.opts.DataDir}
	}
	sc, err := b.opts.Sandbox.Command(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("bash: setting up the OS sandbox failed; the command did not run: %w", err)
	}
	if sc == nil {
		return nil, errors.New("bash: the OS sandbox returned no command; the command did not run")
	}
	return sc, nil
}

// hostCommand is bash run without a sandbox, in its own process group.
type hostCommand struct {
	cmd    *exec.Cmd
	reaped bool
	err    error
}

func (h *hostCommand) Start(stdout, stderr *os.File) error {
	h.cmd.Stdin = nil // /dev/null
	h.cmd.Stdout, h.cmd.Stderr = stdout, stderr
	setProcessGroup(h.cmd)
	return h.cmd.Start()
}

func (h *hostCommand) Pid() int { return h.cmd.Process.Pid }

// Ended waits for the leader without reaping it where the platform
// allows, so that its process group ID cannot be reused before the group
// is killed.
func (h *hostCommand) Ended() {
	if !h.reaped && !waitNoReap(h.cmd.Process.Pid) {
		h.err = h.cmd.Wait()
		h.reaped = true
	}
}

func (h *hostCommand) Wait() (int, error) {
	if !h.reaped {
		h.err = h.cmd.Wait()
		h.reaped = true
	}
	state := h.cmd.ProcessState
	if state == nil {
		return -1, h.err
	}
	if sig, ok := exitSignal(state); ok {
		return -1, &signalError{sig}
	}
	return state.ExitCode(), nil
}

func (h *hostCommand) Close() {}

// signalError reports a command killed by a signal.
type signalError struct{ name string }

func (e *signalError) Error() string { return "killed by signal " + e.name }

// bashPath finds bash; "bash" lets exec report a clear error if missing.
func bashPath() string {
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	for _, p := range hostBashCandidates() {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	return "bash"
}

// stopReason says why the bash tool stopped a command.
type stopReason int

const (
	stopNone stopReason = iota
	stopCancelled
	stopTimeout
)

func (b *Bash) run(ctx context.Context, call Call, args bashArgs, mode runMode, timeout time.Duration) (Result, error) {
	slot, err := b.opts.Commands.acquire(ctx)
	if err != nil {
		return Result{}, err
	}
	defer slot()
	started := time.Now()
	cmd, err := b.command(ctx, args.Command, mode)
	if err != nil {
		return Result{}, err
	}
	defer cmd.Close()

	pr, pw, err := newOutputPipe()
	if err != nil {
		return Result{}, fmt.Errorf("bash: creating the output pipe: %w", err)
	}
	growPipe(pw)
	// One pipe for both keeps the arrival order.
	if err := cmd.Start(pw, pw); err != nil {
		pr.Close()
		pw.Close()
		return Result{}, fmt.Errorf("bash: starting the command: %w", err)
	}
	pw.Close()
	pid := cmd.Pid()

	out := &bashOutput{
		tail:    newTailBuffer(MaxLines, MaxBytes),
		store:   b.outputs,
		callID:  call.ID,
		notify:  make(chan struct{}, 1),
		logger:  b.opts.Logger,
		command: args.Command,
	}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		out.readFrom(pr)
	}()
	stopProgress := make(chan struct{})
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		if call.Progress != nil {
			out.deliverProgress(call.Progress, stopProgress)
		}
	}()

	exited := make(chan struct{})
	go func() {
		defer close(exited)
		cmd.Ended()
	}()

	var timeoutC <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timeoutC = t.C
	}
	reason := stopNone
	select {
	case <-exited:
	case <-ctx.Done():
		reason = stopCancelled
	case <-timeoutC:
		reason = stopTimeout
	}
	if reason != stopNone {
		killGroup(pid, sigTerm)
		grace := time.NewTimer(b.grace())
		select {
		case <-exited:
		case <-grace.C:
			killGroup(pid, sigKill)
			<-exited
		}
		grace.Stop()
	}
	// The command has ended: whatever it left running in its group
	// (background jobs, nohup) goes too.
	killGroup(pid, sigKill)
	exitCode, waitErr := cmd.Wait()

	// Every process of the group is dead, so the pipe's write end is
	// closed unless a process that left the group (setsid) holds it.
	drain := time.NewTimer(drainDelay)
	select {
	case <-readDone:
	case <-drain.C:
		pr.stop()
		<-readDone
	}
	drain.Stop()
	pr.Close()
	close(stopProgress)
	<-progressDone
	out.closeFile()

	duration := time.Since(started)
	return b.result(ctx, out, exitCode, waitErr, reason, mode, timeout, args, duration)
}

// result turns the end of a command into the tool's result or error.
func (b *Bash) result(ctx context.Context, out *bashOutput, exitCode int, waitErr error,
	reason stopReason, mode runMode, timeout time.Duration, args bashArgs, duration time.Duration) (Result, error) {
	text, details := out.summary()
	details["sandboxed"] = mode == runSandboxed
	details["escalated"] = mode == runEscalated
	details["durationMs"] = duration.Milliseconds()

	if exitCode >= 0 {
		details["exitCode"] = exitCode
	} else {
		details["exitCode"] = nil
	}

	switch reason {
	case stopCancelled:
		// Wrap ctx.Err() so that the kind stays "cancelled" whatever the
		// cause; name a distinct cause in the text.
		why := ""
		if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
			why = " (" + cause.Error() + ")"
		}
		output := ""
		if body := strings.TrimSuffix(text, "\n"); body != "" {
			output = "; output so far:\n" + body
		}
		return Result{}, fmt.Errorf("bash: the command was cancelled (%w)%s and its process group killed%s", ctx.Err(), why, output)
	case stopTimeout:
		details["timedOut"] = true
		return errorText(text, fmt.Sprintf("Command timed out after %ss", strconv.FormatFloat(timeout.Seconds(), 'g', -1, 64)), details), nil
	}
	var se *signalError
	if errors.As(waitErr, &se) {
		details["signal"] = se.name
		return errorText(text, "Command was killed by signal "+se.name, details), nil
	}
	if waitErr != nil {
		return Result{}, fmt.Errorf("bash: waiting for the command: %w", waitErr)
	}
	if exitCode != 0 {
		return errorText(text, fmt.Sprintf("Command exited with code %d", exitCode), details), nil
	}
	if text == "" {
		text = "(no output)"
	}
	return TextResult(text, details), nil
}

func errorText(text, status string, details map[string]any) Result {
	body := strings.TrimSuffix(text, "\n")
	if body == "" {
		body = "(no output)"
	}
	r := TextResult(body+"\n\n"+status, details)
	r.IsError = true
	return r
}

// bashOutput collects the output of one command: the tail in memory and,
// once the output exceeds the limits, all of it in a retained file.
type bashOutput struct {
	store   *OutputStore
	callID  string
	command string
	logger  *slog.Logger

	mu   sync.Mutex
	tail *tailBuffer // guarded by mu; written only by readFrom

	// Only readFrom touches these until closeFile, which runs after it.
	file     *os.File
	fileErr  error // why the full output is not (entirely) retained
	spilled  bool
	fullPath string

	notify chan struct{} // a signal per chunk, for progress
}

// readFrom reads the pipe until EOF or until its read deadline passes.
func (o *bashOutput) readFrom(r io.Reader) {
	buf := make([]byte, readChunk)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			o.write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

func (o *bashOutput) write(p []byte) {
	if !o.spilled && o.tail.wouldTruncate(p) {
		o.spill()
	}
	if o.file != nil {
		if _, err := o.file.Write(p); err != nil {
			o.fileErr = fmt.Errorf("writing %s: %w", o.fullPath, err)
			o.file.Close()
			o.file = nil
		}
	}
	o.mu.Lock()
	o.tail.Write(p)
	o.mu.Unlock()
	select {
	case o.notify <- struct{}{}:
	default:
	}
}

// spill starts the retained file with everything written so far, which
// the tail still holds whole because the limits were not exceeded yet.
func (o *bashOutput) spill() {
	o.spilled = true
	if o.store == nil {
		o.fileErr = errors.New("no data directory is configured")
		return
	}
	f, err := o.store.Create(o.callID)
	if err != nil {
		o.fileErr = err
		return
	}
	o.file, o.fullPath = f, f.Name()
	if _, err := f.Write(o.tail.held()); err != nil {
		o.fileErr = fmt.Errorf("writing %s: %w", o.fullPath, err)
		f.Close()
		o.file = nil
	}
}

func (o *bashOutput) closeFile() {
	if o.file == nil {
		return
	}
	if err := o.file.Close(); err != nil && o.fileErr == nil {
		o.fileErr = fmt.Errorf("closing %s: %w", o.fullPath, err)
	}
	o.file = nil
}

// deliverProgress calls progress with the live tail after output arrives,
// at most once per progressInterval, until stop is closed.
func (o *bashOutput) deliverProgress(progress func(Progress), stop <-chan struct{}) {
	var last time.Time
	timer := time.NewTimer(0)
	if !timer.Stop() {
		<-timer.C
	}
	for {
		select {
		case <-stop:
			return
		case <-o.notify:
		}
		if wait := progressInterval - time.Since(last); !last.IsZero() && wait > 0 {
			timer.Reset(wait)
			select {
			case <-stop:
				timer.Stop()
				return
			case <-timer.C:
			}
		}
		o.mu.Lock()
		text, _ := o.tail.Tail()
		total := o.tail.TotalBytes()
		o.mu.Unlock()
		progress(Progress{Tail: text, Bytes: total})
		last = time.Now()
	}
}

// summary returns the text for the model (annotation and tail) and the
// output part of the details. Call it after reading ended.
func (o *bashOutput) summary() (string, map[string]any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	text, lines := o.tail.Tail()
	details := map[string]any{
		"truncated":  o.tail.Truncated(),
		"totalBytes": o.tail.TotalBytes(),
		"totalLines": o.tail.TotalLines(),
	}
	if !o.tail.Truncated() {
		return text, details
	}
	shown := fmt.Sprintf("showing the last %d lines (%d of %d bytes)", lines, len(text), o.tail.TotalBytes())
	var note string
	switch {
	case o.fullPath != "" && o.fileErr == nil:
		details["fullOutputPath"] = o.fullPath
		note = fmt.Sprintf("[Output truncated: %s. Full output: %s]", shown, o.fullPath)
	case o.fullPath != "":
		details["fullOutputPath"] = o.fullPath
		note = fmt.Sprintf("[Output truncated: %s. Full output incomplete (%v): %s]", shown, o.fileErr, o.fullPath)
	default:
		note = fmt.Sprintf("[Output truncated: %s. The full output was not retained: %v]", shown, o.fileErr)
	}
	if o.logger != nil && o.fileErr != nil {
		o.logger.Warn("bash: full output not retained", "command", o.command, "err", o.fileErr)
	}
	return note + "\n" + text, details
}
