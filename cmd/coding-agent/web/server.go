// Package web is the browser front end of coding-agent (`coding-agent web`):
// an HTTP server on loopback that serves an embedded page (plain ES modules
// and CSS, no build step) and a WebSocket at /acp on which the page speaks
// ACP JSON-RPC to the same agent that serves editors (session.NewAgent
// behind rpc.Serve), with the _coding-agent extensions opted in.
//
// Security: the server can run commands on the user's machine, so every
// request needs the random token of this start (in the URL once, then in an
// HttpOnly SameSite=Strict cookie); the Host header must name the listening
// address (DNS rebinding); the WebSocket's Origin must be the page's own; and
// the page runs under a Content-Security-Policy without inline script or
// remote assets. Everything a model or a tool produced is put into the page
// as text, with control characters neutralized.
package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/coding-agent/coding-agent/rpc"
	"github.com/coding-agent/coding-agent/session"
)

//go:embed static
var static embed.FS

// Options configures a [Server].
type Options struct {
	// Env is the sessions' environment, shared by every tab.
	Env *session.Env
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Cwd is the directory the page proposes for a new session.
	Cwd string
	// Preset is the preset the page proposes for a new session ("" for the
	// agent's default).
	Preset string
	// Token is the access token; "" means a random one.
	Token string
	// RPC configures each connection's JSON-RPC server.
	RPC rpc.Options
}

// Server is the web UI's HTTP server. Create it with [New], then call
// [Server.Serve].
type Server struct {
	opts   Options
	logger *slog.Logger
	hub    *hub
	token  string
	ln     net.Listener
	hosts  map[string]bool // accepted Host headers
	origin string          // the page's own origin
	cookie string          // the token cookie's name (one per port)
	assets fs.FS

	wg sync.WaitGroup // the WebSocket connections
}

// New listens on addr. An address that is not loopback is refused unless
// allowRemote is set.
func New(addr string, allowRemote bool, opts Options) (*Server, error) {
	if opts.Env == nil {
		return nil, errors.New("web: Options.Env is required")
	}
	if err := CheckAddr(addr, allowRemote); err != nil {
		return nil, err
	}
	host, _, _ := net.SplitHostPort(addr)
	loopback := isLoopback(host)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	token := opts.Token
	if token == "" {
		b := make([]byte, 32)
		rand.Read(b)
		token = base64.RawURLEncoding.EncodeToString(b)
	}
	assets, _ := fs.Sub(static, "static")
	s := &Server{opts: opts, logger: logger, token: token, ln: ln, assets: assets, hosts: map[string]bool{}}
	port := ln.Addr().(*net.TCPAddr).Port
	shown := ln.Addr().String()
	if host != "" && !isUnspecified(host) {
		shown = net.JoinHostPort(host, fmt.Sprint(port))
	}
	s.hosts[shown] = true
	if loopback {
		s.hosts[net.JoinHostPort("localhost", fmt.Sprint(port))] = true
	}
	s.origin = "http://" + shown
	s.cookie = fmt.Sprintf("coding-agent-%d", port)
	s.hub = newHub(opts.Env, logger)
	return s, nil
}

// CheckAddr reports what is wrong with a listening address: not HOST:PORT,
// or not loopback without allowRemote.
func CheckAddr(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %v (want HOST:PORT, e.g. 127.0.0.1:8080)", addr, err)
	}
	if !isLoopback(host) && !allowRemote {
		return fmt.Errorf("--addr %q is not a loopback address: anyone who can reach it could run commands as you; pass --allow-remote to accept that", addr)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

func isUnspecified(host string) bool {
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsUnspecified()
}

// URL is the page's address with the access token, to open in a browser.
func (s *Server) URL() string { return s.origin + "/?token=" + s.token }

// Addr is the listening address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve serves until ctx ends, then closes every connection and session and
// returns once they are gone.
func (s *Server) Serve(ctx context.Context) error {
	base, cancel := context.WithCancel(ctx)
	defer cancel()
	srv := &http.Server{
		Handler:           s.handler(base),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelDebug),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(s.ln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	cancel() // ends the WebSocket connections
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer scancel()
	_ = srv.Shutdown(sctx)
	s.wg.Wait()
	s.hub.close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// handler is the whole HTTP surface: the page, its assets, its defaults
// and the ACP WebSocket, each behind the Host and token checks.
func (s *Server) handler(base context.Context) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.index)
	mux.HandleFunc("GET /static/{file}", s.asset)
	mux.HandleFunc("GET /defaults.json", s.defaults)
	mux.HandleFunc("GET /acp", func(w http.ResponseWriter, r *http.Request) { s.acp(base, w, r) })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", s.csp())
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		if !s.hosts[r.Host] {
			// A page of another site whose name was rebound to our
			// address: its requests carry its own name.
			http.Error(w, "forbidden: Host "+quote(r.Host)+" is not this server's address", http.StatusForbidden)
			return
		}
		if !s.authorized(r) {
			http.Error(w, "unauthorized: open the URL that `coding-agent web` printed (it carries the access token)", http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// csp is the page's Content-Security-Policy: its own scripts and styles
// only, images only from the page itself or pasted (data:, blob:), and
// connections only back to this server.
func (s *Server) csp() string {
	ws := "ws" + strings.TrimPrefix(s.origin, "http")
	return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
		"connect-src 'self' " + ws + "; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

// authorized reports whether r carries this start's token, in the cookie or
// in the token query parameter.
func (s *Server) authorized(r *http.Request) bool {
	if t := r.URL.Query().Get("token"); t != "" {
		return s.tokenOK(t)
	}
	c, err := r.Cookie(s.cookie)
	return err == nil && s.tokenOK(c.Value)
}

func (s *Server) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) == 1
}

// index serves the page. The first visit, with ?token=, stores the token
// in the cookie and redirects to the bare URL, so the token leaves the
// address bar and the history.
func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Has("token") {
		http.SetCookie(w, &http.Cookie{
			Name: s.cookie, Value: s.token, Path: "/",
			HttpOnly: true, SameSite: http.SameSiteStrictMode,
		})
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	s.serveFile(w, "index.html")
}

func (s *Server) asset(w http.ResponseWriter, r *http.Request) {
	s.serveFile(w, r.PathValue("file"))
}

func (s *Server) serveFile(w http.ResponseWriter, name string) {
	b, err := fs.ReadFile(s.assets, name)
	if err != nil {
		http.NotFound(w, nil)
		return
	}
	ct := mime.TypeByExtension(path.Ext(name))
	if path.Ext(name) == ".js" {
		ct = "text/javascript; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	_, _ = w.Write(b)
}

// defaults tells the page what the command line chose.
func (s *Server) defaults(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"cwd": s.opts.Cwd, "preset": s.opts.Preset, "version": s.opts.Env.Version})
}

// acp upgrades to a WebSocket and serves ACP on it until either side
// closes it or the server stops. Messages are NDJSON lines: each WebSocket
// text message carries whole lines.
func (s *Server) acp(base context.Context, w http.ResponseWriter, r *http.Request) {
	o := r.Header.Get("Origin")
	if host, ok := strings.CutPrefix(o, "http://"); !ok || !s.hosts[host] {
		http.Error(w, "forbidden: Origin "+quote(o)+" is not this page's", http.StatusForbidden)
		return
	}
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		s.logger.Debug("websocket upgrade failed", "err", err)
		return
	}
	s.wg.Add(1)
	defer s.wg.Done()
	max := s.opts.RPC.MaxMessageBytes
	if max <= 0 {
		max = rpc.DefaultMaxMessageBytes
	}
	ws.SetReadLimit(max + 1)
	ctx, cancel := context.WithCancel(base)
	defer cancel()
	nc := websocket.NetConn(ctx, ws, websocket.MessageText)
	opts := s.opts.RPC
	opts.Framing = rpc.FramingNDJSON
	opts.Logger = s.logger
	c := &conn{h: s.hub}
	err = rpc.Serve(ctx, nc, nc, func(cl rpc.Client) rpc.Agent {
		c.client = cl
		c.out = newOutbox(cl, func() {
			s.logger.Warn("a tab stopped reading and fell too far behind; disconnecting it (reloading it replays the session)")
			cancel()
		})
		return c
	}, opts)
	s.hub.leave(c)
	if c.out != nil {
		c.out.close()
	}
	s.logger.Debug("web connection ended", "err", err)
}
