// Package session runs coding-agent sessions: the state behind one ACP
// connection ([NewAgent], which implements rpc.Agent) and the public Go SDK
// for hosts that embed the agent ([Env.NewSession]).
//
// An [Env] holds what every session of one process shares: the data
// directory, the logger, the OS sandbox, the mutation queue that serializes
// edits of one file across sessions, and the store of retained outputs.
//
// The SDK speaks in its own terms, not ACP's: a host registers a session
// handler (Options.OnEvent) that receives [Event]s — message and thought
// chunks, tool calls started, updated and finished with their diffs and
// locations, usage, mode and config changes — and an approval handler
// (Options.Approve) that answers each [ApprovalRequest] with a [Decision].
// Prompts are [Content] blocks. The ACP adapter ([NewAgent]) is one such
// host: it translates events to session/update notifications and approval
// requests to session/request_permission.
package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/coding-agent/coding-agent/sandbox"
	"github.com/coding-agent/coding-agent/sandbox/fspath"
	"github.com/coding-agent/coding-agent/session/models"
	"github.com/coding-agent/coding-agent/tools"
)

// Env is the process-wide environment of sessions. Set the exported fields,
// then use it; its methods are safe for concurrent use.
type Env struct {
	// Version is the agent's version, reported by initialize.
	Version string
	// DataDir is the data directory (see [ResolveDataDir]).
	DataDir string
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Model is the default model as provider/model (the --model flag);
	// empty means $CODING_AGENT_MODEL, else the one provider with
	// credentials (PROTOCOL.md §11).
	Model string
	// ModelOptions tune the model clients (retries, timeouts).
	ModelOptions models.Options
	// Preset is the permission preset of new sessions that ask for none
	// (serve --preset); empty means "preset" in config.json, else
	// read-only. Clients can still change a session's preset.
	Preset tools.Preset
	// ApprovalTimeout bounds each permission request of sessions that set
	// none (serve --approval-timeout); 0 means "approvalTimeoutSeconds" in
	// config.json, else DefaultApprovalTimeout.
	ApprovalTimeout time.Duration
	// MCPExecutable is the binary re-executed as the supervisor of stdio
	// MCP servers (it must call mcp.MaybeRunSupervisor first); empty means
	// this process's executable.
	MCPExecutable string
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// MaxCommands caps the bash commands running at once across every
	// session of the Env; the rest wait (cancellable). 0 means
	// tools.DefaultMaxCommands.
	MaxCommands int

	cfgOnce sync.Once
	cfg     Config
	cfgErr  error

	once    sync.Once
	queue   *tools.MutationQueue
	outputs *tools.OutputStore
	cmds    *tools.CommandLimit

	// modelMu guards the default model, chosen on first use and again
	// after the stored credentials change.
	modelMu     sync.Mutex
	modelChosen bool
	model       models.Model
	modelErr    error
	// servedMu guards served: what the OpenAI-compatible server at
	// served.base lists (GET /models), asked once per base URL.
	servedMu sync.Mutex
	served   struct {
		base string
		list []string
	}

	probeStart sync.Once
	sbOnce     sync.Once
	sb         *sandbox.Sandbox
	sbStatus   sandbox.Status
	probed     chan struct{} // closed when sbStatus is set

	// cacheMu guards the fields below: the probe cache on disk, read
	// once and updated by saveProbe.
	cacheMu   sync.Mutex
	cacheRead bool
	cached    sandbox.Status
	cachedOK  bool

	// life ends with Shutdown; goroutines counts the goroutines the
	// environment started (the sandbox probe and its delayed start), which
	// Shutdown joins.
	life       context.Context
	stopLife   context.CancelFunc
	goroutines sync.WaitGroup

	// openMu serializes creating, opening and attaching sessions, so that
	// an id is open once.
	openMu sync.Mutex

	// mu guards the fields below.
	mu       sync.Mutex
	open     map[string]*state // the open sessions, by id
	shutdown bool
	cancels  map[*context.CancelFunc]struct{}
}

func (e *Env) init() {
	e.once.Do(func() {
		if e.Logger == nil {
			e.Logger = slog.New(slog.DiscardHandler)
		}
		e.queue = tools.NewMutationQueue()
		e.cmds = tools.NewCommandLimit(e.MaxCommands)
		e.probed = make(chan struct{})
		e.life, e.stopLife = context.WithCancel(context.Background())
		if e.DataDir != "" {
			e.outputs = tools.NewOutputStore(tools.OutputDir(e.DataDir))
		}
	})
}

// Start prepares the environment for serving: it chooses the default
// model and starts the sandbox probe (bounded, about 2 s at most) in the
// background, so that it is done before the first command needs it. When a
// valid result of an earlier probe is cached, the probe waits until
// initialize has been answered (or 200 ms): the helper process it starts
// would otherwise compete with the answer an editor is waiting for.
func (e *Env) Start(ctx context.Context) error {
	e.init()
	if _, err := e.config(); err != nil {
		return err
	}
	e.defaultModel()
	if _, ok := e.cachedProbe(); ok {
		e.goroutines.Go(func() {
			t := time.NewTimer(200 * time.Millisecond)
			defer t.Stop()
			select {
			case <-t.C:
				e.startProbe()
			case <-e.life.Done():
			}
		})
	} else {
		e.startProbe()
	}
	return nil
}

// startProbe runs the sandbox probe in the background, once.
func (e *Env) startProbe() {
	e.init()
	e.probeStart.Do(func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.shutdown {
			return
		}
		e.goroutines.Go(func() {
			st := e.sandboxStatus(e.life)
			if !st.Available {
				e.Logger.Warn("OS sandbox unavailable: bash will refuse to run under read-only and workspace-write", "reason", st.Reason)
				return
			}
			// A server runs many commands: have the sandbox's helpers
			// started before the first one.
			if err := e.sb.Prewarm(e.life); err != nil {
				e.Logger.Debug("sandbox: no helper started ahead", "err", err)
			}
		})
	})
}

// Shutdown cancels the work of every session of this environment, closes
// the open sessions and waits for them, stops the sandbox probe and waits
// for it: when it returns, no goroutine of the environment or of its
// sessions runs.
func (e *Env) Shutdown() {
	e.init()
	e.mu.Lock()
	e.shutdown = true
	cs := e.cancels
	e.cancels = nil
	open := make([]*state, 0, len(e.open))
	for _, st := range e.open {
		open = append(open, st)
	}
	e.mu.Unlock()
	for c := range cs {
		(*c)()
	}
	e.stopLife()
	var wg sync.WaitGroup
	for _, st := range open {
		wg.Go(st.finish)
	}
	wg.Wait()
	e.goroutines.Wait()
	e.mu.Lock()
	sb := e.sb
	e.mu.Unlock()
	if sb != nil {
		sb.Close() // the helper kept ready for the next command
	}
}

// sandboxStatus probes the sandbox once and caches the result.
func (e *Env) sandboxStatus(ctx context.Context) sandbox.Status {
	e.sbOnce.Do(func() {
		e.init()
		cfg, _ := e.config() // a bad file was reported by Start
		sb := sandbox.New(sandbox.Options{
			Logger:        e.Logger,
			ExtraWritable: cfg.Sandbox.ExtraWritable,
			EnvAllow:      cfg.Sandbox.EnvAllow,
			KeepVisible:   cfg.Sandbox.KeepVisible,
		})
		e.mu.Lock()
		e.sb = sb
		if e.shutdown {
			sb.Close()
		}
		e.mu.Unlock()
		e.sbStatus = sb.Probe(ctx)
		e.saveProbe(e.sbStatus)
		close(e.probed)
	})
	return e.sbStatus
}

// toolSandbox returns the sandbox the bash tool uses. The probe runs (or
// is waited for) only when a sandboxed command is about to run, so reads,
// edits and full-access commands never pay for it; when it found no
// sandbox, the command fails with the probe's reason and does not run.
func (e *Env) toolSandbox() tools.Sandbox { return lazySandbox{e} }

type lazySandbox struct{ e *Env }

func (l lazySandbox) Command(ctx context.Context, req tools.SandboxRequest) (tools.SandboxedCommand, error) {
	l.e.sandboxStatus(ctx)
	return ToolSandbox(l.e.sb).Command(ctx, req)
}

// toolOptions returns tools.Options for a call under preset in cwd.
func (e *Env) toolOptions(preset tools.Preset, roots []string) tools.Options {
	e.init()
	return tools.Options{
		Preset:        preset,
		WritableRoots: roots,
		DataDir:       e.DataDir,
		Queue:         e.queue,
		Outputs:       e.outputs,
		Commands:      e.cmds,
		Sandbox:       e.toolSandbox(),
		// A second of grace keeps a shutdown with a TERM-ignoring
		// command within PROTOCOL.md's 2 s.
		KillGrace: time.Second,
		Logger:    e.Logger,
	}
}

// ParamError reports a bad parameter of a request: a field and what is
// wrong with it. The rpc layer answers it with -32602; the CLI exits 2.
type ParamError struct {
	Field string
	Msg   string
}

func (e *ParamError) Error() string { return e.Field + ": " + e.Msg }

// ToolRequest is one standalone tool call.
type ToolRequest struct {
	Name      string
	Arguments []byte
	// Cwd must be an absolute existing directory (the CLI passes the
	// current directory).
	Cwd string
	// Preset defaults to read-only.
	Preset string
	// CallID names the call; empty gets a fresh one.
	CallID string
}

// RunTool runs one tool standalone: no session, so no approval context
// (a mutation outside the preset fails) and no editor buffers. A bad name,
// cwd or preset is a *ParamError; a failed tool is a result with IsError.
func (e *Env) RunTool(ctx context.Context, req ToolRequest) (tools.Result, error) {
	e.init()
	if _, err := tools.Select([]string{req.Name}); err != nil {
		return tools.Result{}, &ParamError{Field: "name", Msg: err.Error()}
	}
	cwd, err := checkDir("cwd", req.Cwd)
	if err != nil {
		return tools.Result{}, err
	}
	preset, err := tools.ParsePreset(req.Preset)
	if err != nil {
		return tools.Result{}, &ParamError{Field: "preset", Msg: err.Error()}
	}
	t, err := tools.New(req.Name, cwd, e.toolOptions(preset, nil))
	if err != nil {
		return tools.Result{}, err
	}
	id := req.CallID
	if id == "" {
		id = newID("call")
	}
	ctx, done := e.track(ctx)
	defer done()
	return tools.Run(ctx, t, tools.Call{ID: id, Args: req.Arguments}), nil
}

// track registers ctx's work so that Shutdown cancels it.
func (e *Env) track(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	e.mu.Lock()
	if e.shutdown {
		e.mu.Unlock()
		cancel()
		return ctx, cancel
	}
	if e.cancels == nil {
		e.cancels = map[*context.CancelFunc]struct{}{}
	}
	key := &cancel
	e.cancels[key] = struct{}{}
	e.mu.Unlock()
	return ctx, func() {
		e.mu.Lock()
		delete(e.cancels, key)
		e.mu.Unlock()
		cancel()
	}
}

// checkRoot is checkDir for a session root (cwd, an additional
// directory): it may not be in git's storage as the sandbox and the file
// tools define it (sandbox.GitStorage: a .git directory or what is below
// it, a bare repository, a gitdir), or the session's writes and commands
// would reach git's config and hooks.
func checkRoot(field, path string) (string, error) {
	d, err := checkDir(field, path)
	if err != nil {
		return "", err
	}
	if g, ok := sandbox.GitStorage(fspath.CanonicalOr(d)); ok {
		return "", &ParamError{Field: field, Msg: fmt.Sprintf(
			"%s is inside git's storage %s; a session cannot work there (use the repository's work tree instead)", path, g)}
	}
	return d, nil
}

// checkDir checks that path is an absolute, existing directory.
func checkDir(field, path string) (string, error) {
	if path == "" {
		return "", &ParamError{Field: field, Msg: "required"}
	}
	if !filepath.IsAbs(path) {
		return "", &ParamError{Field: field, Msg: fmt.Sprintf("must be an absolute path, got %q", path)}
	}
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", &ParamError{Field: field, Msg: fmt.Sprintf("directory %s does not exist", path)}
		}
		return "", &ParamError{Field: field, Msg: err.Error()}
	}
	if !fi.IsDir() {
		return "", &ParamError{Field: field, Msg: fmt.Sprintf("%s is not a directory", path)}
	}
	return filepath.Clean(path), nil
}

// defaultPreset is the preset of a new session that asks for none.
func (e *Env) defaultPreset() tools.Preset {
	if e.Preset != "" {
		return e.Preset
	}
	if cfg, err := e.config(); err == nil && cfg.Preset != "" {
		return tools.Preset(cfg.Preset)
	}
	return tools.ReadOnly
}

// defaultApprovalTimeout bounds the permission requests of a session that
// sets no timeout of its own.
func (e *Env) defaultApprovalTimeout() time.Duration {
	if e.ApprovalTimeout > 0 {
		return e.ApprovalTimeout
	}
	if cfg, err := e.config(); err == nil && cfg.ApprovalTimeoutSeconds > 0 {
		return time.Duration(cfg.ApprovalTimeoutSeconds * float64(time.Second))
	}
	return DefaultApprovalTimeout
}
