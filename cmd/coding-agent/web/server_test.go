package web

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/coding-agent/coding-agent/session"
)

// start runs a server on a free loopback port until the test ends.
func start(t *testing.T) *Server {
	t.Helper()
	env := &session.Env{DataDir: t.TempDir(), Version: "test"}
	s, err := New("127.0.0.1:0", false, Options{Env: env, Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		env.Shutdown()
	})
	return s
}

func get(t *testing.T, raw string, header http.Header, host string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if host != "" {
		req.Host = host
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// TestAccess attacks the server's gate: no token, a wrong token, a
// rebound Host, a foreign Origin on the WebSocket; and checks that the
// right token gives an HttpOnly SameSite=Strict cookie that then opens
// the page and the WebSocket.
func TestAccess(t *testing.T) {
	s := start(t)
	base := s.origin
	ws := "ws" + strings.TrimPrefix(base, "http") + "/acp"

	for _, path := range []string{"/", "/static/app.js", "/defaults.json", "/acp", "/?token=wrong"} {
		if r := get(t, base+path, nil, ""); r.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without the token: %d, want 401", path, r.StatusCode)
		}
	}
	ctx := context.Background()
	if _, r, err := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {base}}}); err == nil || r == nil || r.StatusCode != http.StatusUnauthorized {
		t.Errorf("WebSocket without the token: %v, %v; want 401", err, r)
	}

	r := get(t, s.URL(), nil, "")
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/" {
		t.Fatalf("GET with the token: %d, Location %q; want 303 to /", r.StatusCode, r.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range r.Cookies() {
		if c.Name == s.cookie {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Value != s.token {
		t.Fatalf("token cookie %+v: want HttpOnly, SameSite=Strict, the token", cookie)
	}
	csp := r.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "http:") || strings.Contains(csp, "https:") {
		t.Errorf("CSP %q allows inline or remote code", csp)
	}
	withCookie := http.Header{"Cookie": {cookie.Name + "=" + cookie.Value}}
	if r := get(t, base+"/", withCookie, ""); r.StatusCode != http.StatusOK {
		t.Errorf("GET / with the cookie: %d", r.StatusCode)
	}
	// DNS rebinding: a page of evil.example whose name now resolves to
	// 127.0.0.1 sends Host: evil.example:PORT, token or not.
	port := s.Addr().(interface{ String() string }).String()
	port = port[strings.LastIndex(port, ":"):]
	for _, host := range []string{"evil.example" + port, "127.0.0.1:1", "evil.example"} {
		if r := get(t, s.URL(), withCookie, host); r.StatusCode != http.StatusForbidden {
			t.Errorf("Host %q: %d, want 403", host, r.StatusCode)
		}
	}
	if r := get(t, base+"/", withCookie, "localhost"+port); r.StatusCode != http.StatusOK {
		t.Errorf("Host localhost%s: %d, want 200", port, r.StatusCode)
	}

	for _, origin := range []string{"http://evil.example", "http://evil.example" + port, "null", "", "https://127.0.0.1" + port, "http://127.0.0.1" + port + ".evil.example"} {
		h := withCookie.Clone()
		if origin != "" {
			h.Set("Origin", origin)
		}
		c, r, err := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPHeader: h})
		if err == nil {
			c.CloseNow()
			t.Errorf("WebSocket with Origin %q was accepted", origin)
			continue
		}
		if r == nil || r.StatusCode != http.StatusForbidden {
			t.Errorf("WebSocket with Origin %q: %v, want 403", origin, err)
		}
	}

	// The page's own origin with the cookie speaks ACP.
	h := withCookie.Clone()
	h.Set("Origin", base)
	c, _, err := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		t.Fatalf("WebSocket from the page's origin: %v", err)
	}
	defer c.CloseNow()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.Write(wctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`+"\n")); err != nil {
		t.Fatal(err)
	}
	_, msg, err := c.Read(wctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(msg), `"protocolVersion":1`) || !strings.Contains(string(msg), `"id":1`) {
		t.Errorf("initialize answer %s", msg)
	}
}

// TestRemoteNeedsFlag: a non-loopback address is refused without the
// explicit flag.
func TestRemoteNeedsFlag(t *testing.T) {
	env := &session.Env{DataDir: t.TempDir()}
	_, err := New("0.0.0.0:0", false, Options{Env: env})
	if err == nil || !strings.Contains(err.Error(), "--allow-remote") {
		t.Fatalf("0.0.0.0 without --allow-remote: %v", err)
	}
	s, err := New("0.0.0.0:0", true, Options{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	s.ln.Close()
}

// TestAssetsAreStatic keeps the page free of inline script and remote
// assets, which the CSP would block anyway.
func TestAssetsAreStatic(t *testing.T) {
	entries, err := os.ReadDir("static")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("static", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "http://", "https://"} {
			if strings.Contains(text, bad) && !(bad == "https://" && e.Name() == "markdown.js") && !(bad == "http://" && (e.Name() == "icon.svg" || e.Name() == "markdown.js")) {
				t.Errorf("%s contains %q", e.Name(), bad)
			}
		}
		if e.Name() == "index.html" && strings.Contains(text, "<script>") {
			t.Errorf("index.html has an inline script")
		}
	}
}
