package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coding-agent/coding-agent/session/models/modeltest"
)

// webBrowser returns the directory of the browser tests (test/web), skipping
// when chromium or the npm packages are missing (failing under CI).
func webBrowser(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../../test/web")
	if err != nil {
		t.Fatal(err)
	}
	missing := ""
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "puppeteer-core")); err != nil {
		missing = "test/web/node_modules is missing: run `npm ci` in test/web"
	} else if _, err := exec.LookPath("node"); err != nil {
		missing = "node is missing"
	} else if chromium() == "" {
		missing = "chromium is missing: apt-get install chromium"
	}
	if missing != "" {
		if os.Getenv("CI") != "" {
			t.Fatal(missing + " (.ci/run installs it)")
		}
		t.Skip(missing)
	}
	return dir
}

func chromium() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// startWeb starts `coding-agent web` with env and returns the URL it printed.
// The server is stopped (SIGINT, then waited for) when the test ends.
func startWeb(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := agentCmd(t, append([]string{"web", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = env
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("coding-agent web: %v\n%s", err, stderr.String())
			}
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("coding-agent web did not stop on SIGINT\n%s", stderr.String())
		}
		if t.Failed() {
			t.Logf("server log:\n%s", stderr.String())
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the URL: %v\n%s", err, stderr.String())
	}
	url := strings.TrimSpace(line)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.Contains(url, "/?token=") {
		t.Fatalf("stdout line %q is not the page's URL with its token", url)
	}
	return url
}

// onePixelPNG is the base64 of the PNG that test/web/e2e.mjs attaches.
const onePixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

// TestWebBrowser drives the web UI in Debian's chromium (puppeteer-core)
// against the real binary and a scripted model: see test/web/e2e.mjs for
// what each scenario checks.
func TestWebBrowser(t *testing.T) {
	dir := webBrowser(t)
	nonce := fmt.Sprintf("4242.%d", time.Now().UnixNano()%1000000)
	scenarios := []struct {
		name   string
		script modeltest.Script
		env    []string
	}{
		{"turn", modeltest.Script{
			{Steps: []modeltest.Step{
				modeltest.Text("I'll run two commands."),
				modeltest.Tool("c1", "bash", `{"comm`, `and":"echo hel`, `lo && echo wor`, `ld"}`),
				modeltest.Tool("c2", "bash", `{"command":"ls"}`),
			}},
			{Steps: []modeltest.Step{
				modeltest.Thinking("Both printed; summarize."),
				modeltest.Text("Done: **both** ran, see `ls`.\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"),
				modeltest.Text("```sh\necho hi\n```\n\n<img src=x onerror=alert(1)>\n\nok\x1b[31mred\rfake\u202eevil\u2028end"),
			}, Usage: modeltest.Usage{InputTokens: 1200, OutputTokens: 300}},
		}, nil},
		{"approve", modeltest.Script{
			{Steps: []modeltest.Step{modeltest.Tool("w1", "write", `{"path":"allowed.txt","content":"yes\n","justification":"Sie haben darum gebeten <b>bitte</b>"}`)}},
			{Steps: []modeltest.Step{modeltest.Text("Wrote it.")}},
			{Steps: []modeltest.Step{modeltest.Tool("w2", "write", `{"path":"rejected.txt","content":"no\n"}`)}},
			{Steps: []modeltest.Step{modeltest.Text("Not written.")}},
		}, nil},
		{"cancel", modeltest.Script{
			{Steps: []modeltest.Step{modeltest.Tool("s1", "bash", `{"command":"sleep `+nonce+`"}`)}},
		}, []string{"SLEEP_ARG=" + nonce}},
		{"image", modeltest.Script{
			{Steps: []modeltest.Step{modeltest.Text("A single pixel.")}},
		}, []string{"PIXEL_PNG=" + onePixelPNG}},
		{"markdown", nil, nil},
		{"tabs", modeltest.Script{
			{Steps: []modeltest.Step{modeltest.Text("Running it."), modeltest.Tool("t1", "bash", `{"command":"echo two-tabs"}`)}},
			{Steps: []modeltest.Step{modeltest.Text("Both tabs see this.")}},
		}, nil},
	}
	shots := os.Getenv("SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			ws := t.TempDir()
			srv := modeltest.NewAnthropicServer(t, sc.script)
			env := append(os.Environ(), asMainEnv+"=1", "OPENAI_API_KEY=", "OPENAI_BASE_URL=",
				"ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL="+srv.BaseURL, "CODING_AGENT_MODEL=anthropic/claude-sonnet-4-5")
			url := startWeb(t, env, "--cwd", ws, "--data-dir", t.TempDir())
			cmd := exec.Command("node", filepath.Join(dir, "e2e.mjs"), sc.name, url, ws)
			cmd.Env = append(os.Environ(), append(sc.env, "CHROMIUM="+chromium(), "SCREENSHOTS="+shots)...)
			out, err := cmd.CombinedOutput()
			t.Logf("%s", out)
			if err != nil {
				t.Fatalf("%s: %v", sc.name, err)
			}
			if sc.name == "image" {
				// The pasted image reached the model as an image block.
				reqs := srv.Requests()
				if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), `"type":"image"`) || !strings.Contains(string(reqs[0].Body), onePixelPNG) {
					t.Errorf("the model was not sent the image: %d requests", len(reqs))
				}
			}
		})
	}
}

// TestWebFlags: a non-loopback address needs --allow-remote; bad flags are
// usage errors.
func TestWebFlags(t *testing.T) {
	for _, args := range [][]string{
		{"web", "--addr", "0.0.0.0:0", "--data-dir", t.TempDir()},
		{"web", "--preset", "everything", "--data-dir", t.TempDir()},
		{"web", "--addr", "nonsense", "--data-dir", t.TempDir()},
		{"web", "extra"},
	} {
		code, out, stderr := runCLI(t, args...)
		if code != exitUsage || out != "" {
			t.Errorf("%v: exit %d, stdout %q; want 2 and nothing on stdout", args, code, out)
		}
		if args[1] == "--addr" && args[2] == "0.0.0.0:0" && !strings.Contains(stderr, "--allow-remote") {
			t.Errorf("%v: stderr %q does not name --allow-remote", args, stderr)
		}
	}
}
