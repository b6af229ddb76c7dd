package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/coding-agent/coding-agent/tools"
)

// DefaultStartTimeout bounds a server's start: initialize plus the tool
// list.
const DefaultStartTimeout = 10 * time.Second

// DefaultGrace is how long a stdio server has between SIGTERM and SIGKILL
// when it is stopped.
const DefaultGrace = time.Second

// Options configure the servers of one [Set].
type Options struct {
	// Dir is the working directory of stdio servers (the session's cwd).
	Dir string
	// Environ is the agent's environment, which stdio servers get with the
	// configured variables on top; nil means os.Environ().
	Environ []string
	// StartTimeout bounds each server's start; 0 means DefaultStartTimeout.
	StartTimeout time.Duration
	// Grace is the time between SIGTERM and SIGKILL; 0 means DefaultGrace.
	Grace time.Duration
	// Executable is the binary re-executed as the stdio servers'
	// supervisor (it must call [MaybeRunSupervisor] first); empty means
	// this process's executable.
	Executable string
	// Outputs retains the full text of results cut for the model; nil
	// means the full text is not retained.
	Outputs *tools.OutputStore
	// Version is the agent's version, sent in initialize.
	Version string
	// Logger receives the servers' stderr and diagnostics; nil discards.
	Logger *slog.Logger
	// OnToolsChanged, if set, is called (from the connection's goroutine)
	// when a server sends notifications/tools/list_changed.
	OnToolsChanged func(server string)
}

func (o *Options) startTimeout() time.Duration {
	if o.StartTimeout > 0 {
		return o.StartTimeout
	}
	return DefaultStartTimeout
}

func (o *Options) grace() time.Duration {
	if o.Grace > 0 {
		return o.Grace
	}
	return DefaultGrace
}

func (o *Options) environ() []string {
	if o.Environ != nil {
		return o.Environ
	}
	return os.Environ()
}

// Failure is a server that did not start.
type Failure struct {
	Server string
	Err    error
}

func (f Failure) Error() string { return fmt.Sprintf("MCP server %q: %v", f.Server, f.Err) }

// Set is the MCP servers of one session. Its methods are safe for
// concurrent use.
type Set struct {
	opts     Options
	servers  []*server // started, in configuration order
	failures []Failure

	// mu guards the fields below.
	mu     sync.Mutex
	tools  []*Tool
	closed bool
}

// Start starts every server in parallel and returns when each has started
// or failed, within opts.StartTimeout (and ctx). It never fails as a
// whole: the servers that did not start are in [Set.Failures].
func Start(ctx context.Context, configs []ServerConfig, opts Options) *Set {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Set{opts: opts}
	servers := make([]*server, len(configs))
	errs := make([]error, len(configs))
	var wg sync.WaitGroup
	for i, c := range configs {
		srv := newServer(c, &s.opts)
		servers[i] = srv
		wg.Go(func() {
			start := time.Now()
			errs[i] = srv.start(ctx)
			if errs[i] != nil {
				srv.close()
				return
			}
			s.opts.Logger.Info("MCP server started", "mcpServer", c.Name, "transport", c.Type, "tools", len(srv.toolList()), "ms", time.Since(start).Milliseconds())
		})
	}
	wg.Wait()
	for i, srv := range servers {
		if errs[i] != nil {
			f := Failure{Server: configs[i].Name, Err: errors.New(plain(errs[i].Error()))}
			s.failures = append(s.failures, f)
			s.opts.Logger.Warn("MCP server did not start", "mcpServer", f.Server, "err", f.Err)
			continue
		}
		s.servers = append(s.servers, srv)
	}
	s.tools = s.buildTools()
	return s
}

// Failures lists the servers that did not start, in configuration order.
func (s *Set) Failures() []Failure {
	if s == nil {
		return nil
	}
	return s.failures
}

// Servers lists the names of the servers that started.
func (s *Set) Servers() []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, srv := range s.servers {
		out = append(out, srv.cfg.Name)
	}
	return out
}

// Tools returns the current tools of every started server, in a stable
// order (server, then tool). A server that announced a change since the
// last call has its list fetched again first.
func (s *Set) Tools(ctx context.Context) []*Tool {
	if s == nil {
		return nil
	}
	changed := false
	for _, srv := range s.servers {
		if srv.refresh(ctx) {
			changed = true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if changed && !s.closed {
		s.tools = s.buildTools()
	}
	return s.tools
}

// Lookup returns the tool with the model-facing name, among the tools of
// the last [Set.Tools].
func (s *Set) Lookup(name string) *Tool {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.tools {
		if t.name == name {
			return t
		}
	}
	return nil
}

// buildTools names the tools of every server.
func (s *Set) buildTools() []*Tool {
	var keys []toolKey
	for _, srv := range s.servers {
		for _, t := range srv.toolList() {
			keys = append(keys, toolKey{srv.cfg.Name, t.Name})
		}
	}
	names := assignNames(keys)
	var out []*Tool
	for _, srv := range s.servers {
		for _, t := range srv.toolList() {
			out = append(out, newTool(srv, t, names[toolKey{srv.cfg.Name, t.Name}]))
		}
	}
	return out
}

// Close stops every server: it closes the connections and kills stdio
// servers' process groups (SIGTERM, grace, SIGKILL), and returns when they
// are gone.
func (s *Set) Close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, srv := range s.servers {
		wg.Go(srv.close)
	}
	wg.Wait()
}
