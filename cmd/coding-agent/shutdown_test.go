//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestShutdownKillsChildren starts the real server, runs a long bash
// command through it, then ends the server by SIGTERM, SIGINT or end of
// stdin: it must exit 0 and leave no process behind.
func TestShutdownKillsChildren(t *testing.T) {
	for _, how := range []string{"SIGTERM", "SIGINT", "EOF"} {
		t.Run(how, func(t *testing.T) {
			ws := t.TempDir()
			pidFile := filepath.Join(ws, "pid")
			cmd := agentCmd(t, "serve", "--data-dir", t.TempDir())
			cmd.Dir = ws
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill() })
			send, waitID, lines := lineClient(t, stdin, stdout)
			send(1, "initialize", map[string]any{"protocolVersion": 1})
			waitID(1)
			send(2, "session/new", map[string]any{"cwd": ws, "mcpServers": []any{}, "_meta": map[string]any{"coding-agent": map[string]any{"preset": "full-access"}}})
			sid := waitID(2)["result"].(map[string]any)["sessionId"]
			// A TERM-ignoring shell with a detached grandchild in its group.
			command := fmt.Sprintf("trap '' TERM; sleep 1000 & echo $! > %s; echo started; wait", pidFile)
			send(3, "_coding-agent/tools/call", map[string]any{"sessionId": sid, "name": "bash", "arguments": map[string]any{"command": command}})
			for lines.Scan() {
				// The live output of the command, not its echo in rawInput.
				if strings.Contains(lines.Text(), `"text":"started`) {
					break
				}
			}
			go io.Copy(io.Discard, stdout)
			pid := strings.TrimSpace(readFile(t, pidFile))
			switch how {
			case "SIGTERM":
				cmd.Process.Signal(syscall.SIGTERM)
			case "SIGINT":
				cmd.Process.Signal(syscall.SIGINT)
			case "EOF":
				stdin.Close()
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Errorf("exit status %d after %s, want 0", ee.ExitCode(), how)
			} else if err != nil {
				t.Fatal(err)
			}
			if alive(pid) {
				t.Errorf("the command's child %s survived the server", pid)
				syscall.Kill(atoi(pid), syscall.SIGKILL)
			}
		})
	}
}

// alive reports whether pid names a live (not zombie) process.
func alive(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	// A zombie is dead; it only waits for its parent to reap it.
	return !strings.Contains(string(b), ") Z")
}

func atoi(s string) int {
	n := 0
	fmt.Sscan(s, &n)
	return n
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lineClient speaks NDJSON JSON-RPC to the agent on stdin/stdout: send
// writes a request; waitID reads until the answer to id (other messages
// are skipped) and fails the test if the output ends first; lines reads
// the rest.
func lineClient(t *testing.T, stdin io.Writer, stdout io.Reader) (send func(id int, method string, params any), waitID func(id int) map[string]any, lines *bufio.Scanner) {
	lines = bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<20)
	send = func(id int, method string, params any) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		stdin.Write(append(b, '\n'))
	}
	waitID = func(id int) map[string]any {
		for lines.Scan() {
			var m map[string]any
			json.Unmarshal(lines.Bytes(), &m)
			if m["id"] == float64(id) {
				return m
			}
		}
		t.Fatalf("no answer to request %d", id)
		return nil
	}
	return send, waitID, lines
}
