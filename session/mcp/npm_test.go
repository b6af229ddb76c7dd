package mcp

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coding-agent/coding-agent/session/mcp/mcptest"
)

// npmServer returns node and the entry point of a pinned MCP server from
// test/mcp (bash .ci/run installs them). Without them the test skips, but
// under CI=true it fails.
func npmServer(t testing.TB, pkg string) (node, script string) {
	t.Helper()
	missing := func(why string) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s: %s (run npm ci in test/mcp)", pkg, why)
		}
		t.Skipf("%s: %s (run npm ci in test/mcp)", pkg, why)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node not found")
	}
	script, _ = filepath.Abs(filepath.Join("..", "..", "test", "mcp", "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js"))
	if _, err := os.Stat(script); err != nil {
		missing(err.Error())
	}
	return node, script
}

// everythingHTTP runs server-everything over HTTP (mode "streamableHttp"
// or "sse") on a free port and returns its base URL; it is stopped when
// the test ends.
func everythingHTTP(t testing.TB, mode string) string {
	t.Helper()
	node, script := npmServer(t, "server-everything")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(node, script, mode)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	stderr, _ := cmd.StderrPipe()
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), fmt.Sprint(port)) {
				close(ready)
				break
			}
		}
		for sc.Scan() {
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatalf("server-everything %s did not listen on %d", mode, port)
	}
	return fmt.Sprintf("http://127.0.0.1:%d", port)
}

func everythingStdio(t testing.TB, name string, env ...string) ServerConfig {
	node, script := npmServer(t, "server-everything")
	return ServerConfig{Name: name, Type: Stdio, Command: node, Args: []string{script, "stdio"}, Env: env}
}

func TestServerEverything(t *testing.T) {
	m := mcptest.Marker(t)
	stdio := everythingStdio(t, "everything", m)
	httpURL := everythingHTTP(t, "streamableHttp")
	sseURL := everythingHTTP(t, "sse")
	configs := []ServerConfig{
		stdio,
		{Name: "everything-http", Type: HTTP, URL: httpURL + "/mcp", Headers: map[string]string{"X-Test": "1"}},
		{Name: "everything-sse", Type: SSE, URL: sseURL + "/sse"},
	}
	set := Start(context.Background(), configs, testOptions(t, nil))
	defer func() { set.Close(); mcptest.WaitGone(t, m) }()
	if f := set.Failures(); len(f) > 0 {
		t.Fatalf("failures: %v", f)
	}
	for _, srv := range []string{"everything", "everything-http", "everything-sse"} {
		t.Run(srv, func(t *testing.T) {
			p := "mcp__" + strings.ReplaceAll(srv, ".", "_") + "__"
			echo := toolNamed(t, set, p+"echo")
			if !echo.ReadOnly() {
				t.Error("echo is readOnlyHint")
			}
			if res, err := call(t, echo, `{"message":"hi"}`); err != nil || !strings.Contains(res.Text, "hi") {
				t.Errorf("echo = %+v, %v", res, err)
			}
			if _, err := echo.Validate([]byte(`{"message":3}`)); err == nil {
				t.Error("echo accepted a number as its message")
			}
			if res, err := call(t, toolNamed(t, set, p+"get-sum"), `{"a":2,"b":40}`); err != nil || !strings.Contains(res.Text, "42") {
				t.Errorf("get-sum = %+v, %v", res, err)
			}
			res, err := call(t, toolNamed(t, set, p+"get-tiny-image"), `{}`)
			hasImage := false
			for _, c := range res.Content {
				hasImage = hasImage || (c.Type == "image" && c.MimeType == "image/png" && c.Data != "")
			}
			if err != nil || !hasImage {
				t.Errorf("get-tiny-image = %+v, %v", res.Content, err)
			}
			res, err = call(t, toolNamed(t, set, p+"get-structured-content"), `{"location":"New York"}`)
			if err != nil || !strings.Contains(string(res.Structured), "temperature") {
				t.Errorf("get-structured-content = %+v, %v", res, err)
			}
			res, err = call(t, toolNamed(t, set, p+"get-resource-reference"), `{"resourceType":"Text","resourceId":1}`)
			if err != nil {
				t.Errorf("get-resource-reference: %v", err)
			}
			if toolNamed(t, set, p+"toggle-simulated-logging").ReadOnly() {
				t.Error("toggle-simulated-logging is not read-only")
			}
		})
	}
}

func TestServerEverythingLongRunningCancel(t *testing.T) {
	set := Start(context.Background(), []ServerConfig{everythingStdio(t, "everything")}, testOptions(t, nil))
	defer set.Close()
	long := toolNamed(t, set, "mcp__everything__trigger-long-running-operation")
	args, err := long.Validate([]byte(`{"duration":60,"steps":60}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	progress := make(chan string, 100)
	done := make(chan error, 1)
	go func() {
		_, err := long.Call(ctx, Call{ID: "c", Args: args, Progress: func(s string) { progress <- s }})
		done <- err
	}()
	select {
	case p := <-progress:
		if p != "1/60" {
			t.Errorf("progress = %q", p)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no progress notification")
	}
	cancel()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "cancelled") {
			t.Errorf("err = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancel did not end the call")
	}
	// The connection still works after the cancellation.
	if res, err := call(t, toolNamed(t, set, "mcp__everything__echo"), `{"message":"still here"}`); err != nil || !strings.Contains(res.Text, "still here") {
		t.Errorf("echo after cancel = %+v, %v", res, err)
	}
}

func TestServerFilesystem(t *testing.T) {
	node, script := npmServer(t, "server-filesystem")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644)
	set := Start(context.Background(), []ServerConfig{{Name: "fs", Type: Stdio, Command: node, Args: []string{script, dir}}}, testOptions(t, nil))
	defer set.Close()
	if f := set.Failures(); len(f) > 0 {
		t.Fatal(f)
	}
	read := toolNamed(t, set, "mcp__fs__read_text_file")
	if !read.ReadOnly() {
		t.Error("read_text_file is readOnlyHint")
	}
	if res, err := call(t, read, fmt.Sprintf(`{"path":%q}`, filepath.Join(dir, "a.txt"))); err != nil || !strings.Contains(res.Text, "alpha") {
		t.Errorf("read = %+v, %v", res, err)
	}
	write := toolNamed(t, set, "mcp__fs__write_file")
	if write.ReadOnly() {
		t.Error("write_file is not read-only")
	}
	if _, err := write.Validate([]byte(`{"path":"x"}`)); err == nil {
		t.Error("write_file without content passed the schema")
	}
	if res, err := call(t, read, `{"path":"/etc/passwd"}`); err != nil || !res.IsError {
		t.Errorf("read outside the allowed directory = %+v, %v; want isError", res, err)
	}
}
