//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coding-agent/coding-agent/session/models/modeltest"
)

// chatPane is `coding-agent chat` running in a tmux pane of its own.
type chatPane struct {
	tm  *tmux
	t   *testing.T
	dir string
}

// startChat starts the real binary's chat in a w×h tmux pane against the
// scripted model, with extra environment variables and arguments.
func startChat(t *testing.T, tm *tmux, name string, w, h int, script modeltest.Script, extraEnv []string, args ...string) *chatPane {
	t.Helper()
	dir := t.TempDir()
	var sh strings.Builder
	sh.WriteString("exec env")
	env := modelEnv(t, "anthropic", script)
	env = append(env, "TERM=tmux-256color")
	env = append(env, extraEnv...)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "TMUX") || (k == "NO_COLOR" && !contains(extraEnv, "NO_COLOR=")) {
			continue
		}
		fmt.Fprintf(&sh, " %s", shellQuote(kv))
	}
	for _, a := range append([]string{os.Args[0], "chat"}, args...) {
		fmt.Fprintf(&sh, " %s", shellQuote(a))
	}
	sh.WriteString("\n")
	runSh := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(runSh, []byte(sh.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := "sh -c '" + runSh + " 2>" + dir + "/stderr; echo EXITED=$?; exec sleep 600'"
	if name == "t" {
		tm.run("new-session", "-d", "-s", "t", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), cmd)
	} else {
		tm.run("new-window", "-t", "t", "-n", name, cmd)
	}
	return &chatPane{tm: tm, t: t, dir: dir}
}

func contains(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// screen is the pane as a person sees it, with the scrollback.
func (p *chatPane) screen() string {
	p.t.Helper()
	out, err := exec.Command("tmux", "-S", p.tm.sock, "capture-pane", "-p", "-J", "-t", "t", "-S", "-").CombinedOutput()
	if err != nil {
		b, _ := os.ReadFile(filepath.Join(p.dir, "stderr"))
		p.t.Fatalf("tmux capture-pane: %v: %s; the program's stderr: %s", err, out, b)
	}
	return string(out)
}

// waitFor polls the screen until cond holds, or fails after a generous
// deadline.
func (p *chatPane) waitFor(what string, cond func(screen string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := p.screen()
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(p.dir, "stderr"))
			p.t.Fatalf("waiting for %s; stderr: %s\nscreen:\n%s", what, b, s)
		}
		time.Sleep(20 * time.Millisecond) // a poll interval, not a wait for the condition
	}
}

func (p *chatPane) waitText(s string) string {
	p.t.Helper()
	return p.waitFor(fmt.Sprintf("%q", s), func(sc string) bool { return strings.Contains(sc, s) })
}

// waitCount waits until s is on the screen n times.
func (p *chatPane) waitCount(s string, n int) string {
	p.t.Helper()
	return p.waitFor(fmt.Sprintf("%d× %q", n, s), func(sc string) bool { return strings.Count(sc, s) >= n })
}

func (p *chatPane) typeLine(s string) {
	p.tm.run("send-keys", "-t", "t", "-l", s)
	p.tm.run("send-keys", "-t", "t", "Enter")
}

func (p *chatPane) keys(k ...string) { p.tm.run(append([]string{"send-keys", "-t", "t"}, k...)...) }

// statusLines counts the prompts shown (each prompt has a status line
// naming the preset above it).
const promptMark = "› "

// TestChatApprovalsAndEscapes: a write the preset does not allow is asked
// inline; "y" writes the file (checked on disk), "n" leaves the disk
// alone. A model text carrying escape sequences is shown neutralized.
func TestChatApprovalsAndEscapes(t *testing.T) {
	tm := startTmux(t)
	ws, data := t.TempDir(), t.TempDir()
	script := modeltest.Script{
		{Steps: []modeltest.Step{modeltest.Text("Writing **a.txt**.\n"), modeltest.Tool("c1", "write", `{"path":"a.txt","content":"alpha\n","justification":"Save the note."}`)}},
		{Steps: []modeltest.Step{modeltest.Text("Wrote it.")}},
		{Steps: []modeltest.Step{modeltest.Tool("c2", "write", `{"path":"b.txt","content":"beta\n"}`)}},
		{Steps: []modeltest.Step{modeltest.Text("Fine, not written.\n\x1b[2J\x1b[31mRED\r$ fake prompt")}},
		{Steps: []modeltest.Step{modeltest.Tool("c3", "write", `{"path":"c.txt","content":"one\n"}`)}},
		{Steps: []modeltest.Step{modeltest.Tool("c4", "write", `{"path":"c.txt","content":"two\n"}`)}},
		{Steps: []modeltest.Step{modeltest.Text("Both written.")}},
	}
	p := startChat(t, tm, "t", 100, 40, script, nil, "--cwd", ws, "--data-dir", data, "--preset", "read-only", "--tools", "read,write")
	p.waitText(promptMark)
	p.typeLine("write a")
	sc := p.waitText("[y] allow once")
	for _, want := range []string{"Write wants to change a file", "+alpha", "target:  " + filepath.Join(canonicalDir(ws), "a.txt"), "policy:  ", "Save the note."} {
		if !strings.Contains(sc, want) {
			t.Errorf("the approval does not show %q:\n%s", want, sc)
		}
	}
	p.keys("y")
	p.waitText("Wrote it.")
	if b, err := os.ReadFile(filepath.Join(ws, "a.txt")); err != nil || string(b) != "alpha\n" {
		t.Errorf("a.txt after y: %q, %v", b, err)
	}
	p.typeLine("write b")
	p.waitCount("[y] allow once", 2)
	p.keys("n")
	sc = p.waitText("Fine, not written.")
	if _, err := os.Stat(filepath.Join(ws, "b.txt")); err == nil {
		t.Error("b.txt was written after n")
	}
	sc = p.waitText(`\x1b[31mRED\r$ fake prompt`)
	for _, l := range strings.Split(sc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "$ fake prompt") {
			t.Errorf("the escape sequences reached the screen: %q\n%s", l, sc)
		}
	}
	if !strings.Contains(sc, "rejected") || !strings.Contains(sc, "allowed once") {
		t.Errorf("the decisions are not shown:\n%s", sc)
	}
	// "a" allows the same change again without asking.
	p.typeLine("write c twice")
	p.waitCount("[y] allow once", 3)
	p.keys("a")
	sc = p.waitText("Both written.")
	if n := strings.Count(sc, "[y] allow once"); n != 3 {
		t.Errorf("asked %d times, want 3 (the second write to c.txt is allowed for the session):\n%s", n, sc)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "c.txt")); string(b) != "two\n" {
		t.Errorf("c.txt = %q", b)
	}
	p.keys("C-d")
	p.waitText("EXITED=0")
}

// TestChatCancelCommand: Ctrl-C during a running command cancels the
// turn, the command's process is gone (checked in /proc), and the prompt
// comes back; a second Ctrl-C at the empty prompt exits with 0.
func TestChatCancelCommand(t *testing.T) {
	tm := startTmux(t)
	ws, data := t.TempDir(), t.TempDir()
	marker := fmt.Sprintf("%d", 900000+os.Getpid()%99999)
	script := modeltest.Script{
		{Steps: []modeltest.Step{modeltest.Tool("c1", "bash", fmt.Sprintf(`{"command":"echo started; exec sleep %s"}`, marker))}},
		{Steps: []modeltest.Step{modeltest.Text("unused")}},
	}
	p := startChat(t, tm, "t", 80, 24, script, nil, "--cwd", ws, "--data-dir", data, "--preset", "workspace-write", "--tools", "bash")
	p.waitText(promptMark)
	p.typeLine("run it")
	p.waitText("Bash")
	deadline := time.Now().Add(60 * time.Second)
	for len(procsWith(marker)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the command never ran; screen:\n%s", p.screen())
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.keys("C-c")
	sc := p.waitText("Cancelled.")
	for len(procsWith(marker)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the command outlived the cancel: %v", procsWith(marker))
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The prompt is back below the cancel.
	sc = p.waitFor("the prompt after the cancel", func(s string) bool {
		i := strings.LastIndex(s, "Cancelled.")
		return i >= 0 && strings.Contains(s[i:], promptMark)
	})
	_ = sc
	p.keys("C-c")
	p.waitText("Ctrl-C again")
	p.keys("C-c")
	p.waitText("EXITED=")
	sc = p.screen()
	if !strings.Contains(sc, "EXITED=0") {
		t.Errorf("exit status:\n%s", sc)
	}
}

// procsWith lists the host processes whose command line contains s.
func procsWith(s string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		cl := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(cl, "sleep "+s) {
			out = append(out, e.Name()+": "+cl)
		}
	}
	return out
}

// TestChatPresetAndContinue: /preset switches the preset (the status line
// shows it); a later `chat --continue` shows the earlier turn and keeps
// the preset.
func TestChatPresetAndContinue(t *testing.T) {
	tm := startTmux(t)
	ws, data := t.TempDir(), t.TempDir()
	script := modeltest.Script{
		{Steps: []modeltest.Step{modeltest.Text("Hello from the first turn.")}},
	}
	p := startChat(t, tm, "t", 80, 24, script, nil, "--cwd", ws, "--data-dir", data)
	p.waitText("read-only")
	p.typeLine("/preset workspace-write")
	p.waitText("preset is now workspace-write")
	p.typeLine("say hello")
	p.waitText("Hello from the first turn.")
	p.keys("C-d")
	p.waitText("EXITED=0")
	p = startChat(t, startTmux(t), "t", 80, 24, nil, nil, "--cwd", ws, "--data-dir", data, "--continue")
	sc := p.waitText("end of history")
	for _, want := range []string{"say hello", "Hello from the first turn.", "workspace-write"} {
		if !strings.Contains(sc, want) {
			t.Errorf("--continue does not show %q:\n%s", want, sc)
		}
	}
	// The history of prompts survived the restart: Up recalls the last.
	p.waitText(promptMark)
	p.keys("Up")
	p.waitFor("the recalled prompt", func(s string) bool { return strings.Count(s, "say hello") >= 2 })
	p.keys("C-u", "C-d")
	p.waitText("EXITED=0")
}

// TestChatNoColor: with NO_COLOR set, the screen has no colour or style
// sequences at all (capture-pane -e keeps them when there are).
func TestChatNoColor(t *testing.T) {
	ws, data := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(ws, "f.txt"), []byte("content\n"), 0o644)
	script := modeltest.Script{
		{Steps: []modeltest.Step{modeltest.Thinking("Let me look."), modeltest.Text("**Bold** and `code`:\n```\nx := 1\n```\n"), modeltest.Tool("c1", "read", `{"path":"f.txt"}`), modeltest.Tool("c2", "read", `{"path":"f.txt"}`)}},
		{Steps: []modeltest.Step{modeltest.Text("- done")}},
	}
	for _, mode := range []string{"color", "NO_COLOR", "TERM=dumb"} {
		t.Run(mode, func(t *testing.T) {
			var env []string
			noColor := mode != "color"
			switch mode {
			case "NO_COLOR":
				env = []string{"NO_COLOR=1"}
			case "TERM=dumb":
				env = []string{"TERM=dumb"}
			}
			p := startChat(t, startTmux(t), "t", 80, 24, script, env, "--cwd", ws, "--data-dir", data, "--tools", "read")
			p.waitText(promptMark)
			p.typeLine("look")
			p.waitText("• done")
			sc := p.tm.run("capture-pane", "-e", "-p", "-t", "t", "-S", "-")
			if !strings.Contains(sc, "Read 2 files") {
				t.Errorf("no batch heading:\n%s", sc)
			}
			has := strings.Contains(sc, "\x1b[")
			if noColor && has {
				t.Errorf("colour sequences with %s:\n%q", mode, sc)
			}
			if mode == "TERM=dumb" && !strings.Contains(sc, "→ Read") {
				t.Errorf("TERM=dumb: no line for a call when it starts:\n%s", sc)
			}
			if !noColor && !has {
				t.Errorf("no colour at all without NO_COLOR (the check could not fail):\n%q", sc)
			}
			p.keys("C-d")
			p.waitText("EXITED=0")
		})
	}
}

// TestChatNeedsATerminal: without a terminal, chat says what to use instead.
func TestChatNeedsATerminal(t *testing.T) {
	code, _, stderr := runCLI(t, "chat")
	if code != exitUsage || !strings.Contains(stderr, "--print") || !strings.Contains(stderr, "serve") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestChatMultiLineInput: a pasted block (bracketed paste), Alt-Enter and
// a trailing backslash each make one prompt of several lines; the model
// gets the lines intact.
func TestChatMultiLineInput(t *testing.T) {
	tm := startTmux(t)
	ws, data := t.TempDir(), t.TempDir()
	srv := modeltest.NewAnthropicServer(t, modeltest.Script{
		{Steps: []modeltest.Step{modeltest.Text("Got the paste.")}},
		{Steps: []modeltest.Step{modeltest.Text("Got alt-enter.")}},
		{Steps: []modeltest.Step{modeltest.Text("Got backslash.")}},
	})
	p := startChat(t, tm, "t", 80, 24, nil, []string{"ANTHROPIC_BASE_URL=" + srv.BaseURL}, "--cwd", ws, "--data-dir", data)
	p.waitText(promptMark)
	tm.run("set-buffer", "-b", "x", "pasted one\n  pasted two\npasted three")
	tm.run("paste-buffer", "-p", "-b", "x", "-t", "t")
	p.keys("Enter")
	p.waitText("Got the paste.")
	p.keys("-l", "first")
	p.keys("M-Enter")
	p.keys("-l", "second")
	p.keys("Enter")
	p.waitText("Got alt-enter.")
	p.typeLine(`upper \`)
	p.typeLine("lower")
	p.waitText("Got backslash.")
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	for i, want := range []string{`pasted one\n  pasted two\npasted three`, `first\nsecond`, `upper \nlower`} {
		if !strings.Contains(string(reqs[i].Body), want) {
			t.Errorf("request %d lacks %q: %s", i+1, want, reqs[i].Body)
		}
	}
	p.keys("C-d")
	p.waitText("EXITED=0")
}
