package mcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// server is one connected MCP server.
type server struct {
	cfg    ServerConfig
	opts   *Options
	logger *slog.Logger

	client *sdk.Client
	cs     *sdk.ClientSession
	proc   *process        // stdio only
	http   *http.Transport // http and sse only
	stderr chan struct{}   // closed when the stderr reader ended (stdio)
	tail   stderrTail

	// life is the connection's context, cancelled by close (or by the
	// start timeout).
	life      context.Context
	closeLife context.CancelFunc

	tokens atomic.Int64
	// mu guards the fields below.
	mu       sync.Mutex
	tools    []*sdk.Tool
	stale    bool // a tools/list_changed arrived since tools was listed
	progress map[string]func(*sdk.ProgressNotificationParams)
}

func newServer(cfg ServerConfig, opts *Options) *server {
	s := &server{cfg: cfg, opts: opts, logger: opts.Logger.With("mcpServer", cfg.Name), progress: map[string]func(*sdk.ProgressNotificationParams){}}
	s.client = sdk.NewClient(&sdk.Implementation{Name: "coding-agent", Version: opts.Version}, &sdk.ClientOptions{
		Logger: s.logger,
		// Roots, sampling and elicitation are not offered.
		Capabilities: &sdk.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			s.mu.Lock()
			s.stale = true
			s.mu.Unlock()
			s.logger.Debug("MCP server's tools changed; the list is refreshed before the next model request")
			if opts.OnToolsChanged != nil {
				opts.OnToolsChanged(cfg.Name)
			}
		},
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			tok := fmt.Sprint(req.Params.ProgressToken)
			s.mu.Lock()
			f := s.progress[tok]
			s.mu.Unlock()
			if f != nil {
				f(req.Params)
			}
		},
	})
	return s
}

func (s *server) startTimeout() time.Duration {
	if s.cfg.StartTimeout > 0 {
		return s.cfg.StartTimeout
	}
	return s.opts.startTimeout()
}

// start connects to the server and lists its tools, within the start
// timeout and ctx. The connection itself lives on until close: the SSE
// transport's event stream is bound to the context it was opened with.
func (s *server) start(ctx context.Context) error {
	s.life, s.closeLife = context.WithCancel(context.Background())
	timer := time.AfterFunc(s.startTimeout(), s.closeLife)
	stop := context.AfterFunc(ctx, s.closeLife)
	defer stop()
	err := s.connect(s.life)
	if !timer.Stop() {
		return fmt.Errorf("timed out after %s (no answer to initialize and tools/list)", s.startTimeout())
	}
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("start cancelled: %w", context.Cause(ctx))
	}
	return err
}

func (s *server) connect(ctx context.Context) error {
	transport, err := s.transport()
	if err != nil {
		return err
	}
	cs, err := s.client.Connect(ctx, transport, nil)
	if err != nil {
		return s.startError(ctx, "initialize", err)
	}
	s.cs = cs
	tools, err := s.list(ctx)
	if err != nil {
		return s.startError(ctx, "tools/list", err)
	}
	s.mu.Lock()
	s.tools = tools
	s.mu.Unlock()
	return nil
}

// startError says why the start failed: the timeout, the server's exit
// status and the end of its stderr, or the protocol error.
func (s *server) startError(ctx context.Context, step string, err error) error {
	if s.proc != nil {
		// A server that exited explains itself on stderr.
		t := time.NewTimer(time.Second)
		select {
		case <-s.proc.exited:
			t.Stop()
			<-s.stderr
			msg := "exited at start"
			if s.proc.waitErr != nil {
				msg += " (" + s.proc.waitErr.Error() + ")"
			}
			if tail := s.tail.String(); tail != "" {
				msg += ": " + tail
			}
			return errors.New(msg)
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	return fmt.Errorf("%s failed: %v", step, err)
}

func (s *server) transport() (sdk.Transport, error) {
	switch s.cfg.Type {
	case HTTP, SSE:
		// A transport of its own: its connections end with the server.
		s.http = http.DefaultTransport.(*http.Transport).Clone()
		hc := &http.Client{Transport: headerTransport{headers: s.cfg.Headers, base: s.http}}
		if s.cfg.Type == SSE {
			return &sdk.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: hc}, nil
		}
		return &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: hc}, nil
	}
	env := mergeEnv(s.opts.environ(), s.cfg.Env)
	path, err := lookPath(s.cfg.Command, env, s.opts.Dir)
	if err != nil {
		return nil, err
	}
	exe := s.opts.Executable
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("finding the agent's executable for the supervisor: %v", err)
		}
	}
	p, err := startProcess(path, s.cfg.Args, env, s.opts.Dir, exe, s.opts.grace())
	if err != nil {
		return nil, fmt.Errorf("starting %s: %v", s.cfg.Command, err)
	}
	s.proc = p
	s.stderr = make(chan struct{})
	go s.readStderr()
	return &sdk.IOTransport{Reader: p.stdout, Writer: p.stdin}, nil
}

// readStderr sends the server's stderr to the log, one record a line,
// keeping the last lines for start errors.
func (s *server) readStderr() {
	defer close(s.stderr)
	sc := bufio.NewScanner(s.proc.stderr)
	sc.Buffer(make([]byte, 4096), 64<<10)
	for sc.Scan() {
		line := sc.Text()
		s.tail.add(line)
		s.logger.Info("MCP server stderr: "+s.cfg.Name, "line", line)
	}
}

// list lists the server's tools.
func (s *server) list(ctx context.Context) ([]*sdk.Tool, error) {
	var out []*sdk.Tool
	for t, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// refresh lists the tools again when the server said they changed; it
// reports whether the list was replaced.
func (s *server) refresh(ctx context.Context) bool {
	s.mu.Lock()
	stale := s.stale && s.cs != nil
	s.stale = false
	s.mu.Unlock()
	if !stale {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, s.startTimeout())
	defer cancel()
	tools, err := s.list(ctx)
	if err != nil {
		s.logger.Warn("MCP server: listing the changed tools failed; keeping the old list", "err", err)
		return false
	}
	s.mu.Lock()
	s.tools = tools
	s.mu.Unlock()
	s.logger.Debug("MCP server's tools listed again", "tools", len(tools))
	return true
}

func (s *server) toolList() []*sdk.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools
}

// call calls one tool; progress, if not nil, receives the server's
// progress notifications for the call.
func (s *server) call(ctx context.Context, name string, args map[string]any, progress func(*sdk.ProgressNotificationParams)) (*sdk.CallToolResult, error) {
	params := &sdk.CallToolParams{Name: name, Arguments: args}
	if progress != nil {
		tok := "coding-agent-" + strconv.FormatInt(s.tokens.Add(1), 10)
		params.SetProgressToken(tok)
		s.mu.Lock()
		s.progress[tok] = progress
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			delete(s.progress, tok)
			s.mu.Unlock()
		}()
	}
	return s.cs.CallTool(ctx, params)
}

// close ends the connection and stops the process.
func (s *server) close() {
	if s.closeLife != nil {
		defer s.closeLife()
	}
	if s.cs != nil {
		if err := s.cs.Close(); err != nil {
			s.logger.Debug("closing the MCP session", "err", err)
		}
	}
	if s.http != nil {
		s.http.CloseIdleConnections()
	}
	if s.proc != nil {
		s.proc.stop(s.opts.grace())
		s.proc.stdout.Close()
		t := time.NewTimer(time.Second)
		select {
		case <-s.stderr:
		case <-t.C:
			// A descendant we could not kill holds stderr: stop reading.
			s.proc.stderr.Close()
			<-s.stderr
		}
		t.Stop()
		s.proc.stderr.Close()
	}
}

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
	}
	return t.base.RoundTrip(req)
}

// lookPath finds command the way a shell would with env's PATH; a name
// with a slash is taken relative to dir.
func lookPath(command string, env []string, dir string) (string, error) {
	if strings.ContainsRune(command, filepath.Separator) || strings.ContainsRune(command, '/') {
		p := command
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if err := executable(p); err != nil {
			return "", fmt.Errorf("command %s: %v", command, err)
		}
		return p, nil
	}
	pathEnv := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathEnv = v
		}
	}
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, command)
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if executable(p) == nil {
			return p, nil
		}
	}
	if pathEnv == "" {
		return "", fmt.Errorf("command %q not found: PATH is empty", command)
	}
	return "", fmt.Errorf("command %q not found in PATH", command)
}

// stderrTail keeps the last lines of a server's stderr.
type stderrTail struct {
	mu    sync.Mutex
	lines []string
}

const tailLines = 8

func (t *stderrTail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	// A server's stderr ends up on terminals and in editors: no control
	// character (escape sequences) of it survives.
	line = plain(line)
	if len(line) > 500 {
		line = line[:500] + "…"
	}
	t.lines = append(t.lines, line)
	if len(t.lines) > tailLines {
		t.lines = t.lines[1:]
	}
}

func (t *stderrTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(strings.Join(t.lines, "\n"))
}

// plain replaces control characters (escape sequences included) with
// U+FFFD: text from a server is shown on terminals and in editors.
func plain(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' {
			return r
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '\uFFFD'
		}
		return r
	}, s)
}
