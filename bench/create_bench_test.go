//go:build linux

package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkCreateManyFiles runs three file-creating commands plain (bash
// on the host, own process group, output on a pipe), and through the
// server (_coding-agent/tools/call bash in a session) under full-access and
// workspace-write, in one run: `tar xf` of 10,000 small files, `cp -r` of a
// 5,000-file tree, and `git archive | tar x` of 2,000 files. Each run
// writes into a new directory of the session's root; the sources lie in the
// root too, so the sandbox can read them.
//
//	go test ./bench -run '^$' -bench CreateManyFiles -benchtime 3x
func BenchmarkCreateManyFiles(b *testing.B) {
	ws := b.TempDir()
	setup := `set -e
mkdir -p src/tree src/repo
for d in $(seq 0 99); do mkdir -p src/tree/d$d; for f in $(seq 0 49); do echo "file $d $f" > src/tree/d$d/f$f.txt; done; done
mkdir -p src/t10k; for d in $(seq 0 199); do mkdir -p src/t10k/d$d; for f in $(seq 0 49); do echo "file $d $f" > src/t10k/d$d/f$f.txt; done; done
tar cf src/10k.tar -C src t10k && rm -rf src/t10k
cd src/repo && git init -q . && for d in $(seq 0 39); do mkdir -p d$d; for f in $(seq 0 49); do echo "file $d $f" > d$d/f$f.txt; done; done
git add -A && git -c user.name=b -c user.email=b@x commit -qm init`
	sc := exec.Command("/bin/bash", "-c", setup)
	sc.Dir = ws
	if out, err := sc.CombinedOutput(); err != nil {
		b.Fatalf("%v %s", err, out)
	}
	works := []struct{ name, cmd string }{
		{"tar-10k", "mkdir OUT && tar xf src/10k.tar -C OUT"},
		{"cp-5k", "cp -r src/tree OUT"},
		{"git-archive-2k", "mkdir OUT && git -C src/repo archive HEAD | tar x -C OUT"},
	}
	n := 0
	out := func() string { n++; return "out" + strconv.Itoa(n) }
	for _, w := range works {
		b.Run(w.name+"/plain", func(b *testing.B) {
			for b.Loop() {
				o := out()
				c := exec.Command("/bin/bash", "-c", expand(w.cmd, o))
				c.Dir = ws
				c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
				if got, err := c.CombinedOutput(); err != nil {
					b.Fatalf("%v %s", err, got)
				}
				b.StopTimer()
				os.RemoveAll(filepath.Join(ws, o))
				b.StartTimer()
			}
		})
		for _, preset := range []string{"full-access", "workspace-write"} {
			b.Run(w.name+"/server-"+preset, func(b *testing.B) {
				c := startServer(b, ws)
				c.call(b, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{
					"_meta": map[string]any{"coding-agent": map[string]any{"extensions": true}}}})
				sid := c.call(b, "session/new", map[string]any{"cwd": ws, "mcpServers": []any{},
					"_meta": map[string]any{"coding-agent": map[string]any{"preset": preset}}})["sessionId"]
				call := func(cmd string) {
					r := c.call(b, "_coding-agent/tools/call", map[string]any{"sessionId": sid, "name": "bash", "arguments": map[string]any{"command": cmd}})
					if r["isError"] == true {
						b.Fatalf("%s: %v", cmd, r)
					}
				}
				call("true")
				for b.Loop() {
					o := out()
					call(expand(w.cmd, o))
					b.StopTimer()
					os.RemoveAll(filepath.Join(ws, o))
					time.Sleep(300 * time.Millisecond) // the watcher's events of the removal, and a spare helper, settle
					b.StartTimer()
				}
			})
		}
	}
}

func expand(cmd, out string) string { return strings.ReplaceAll(cmd, "OUT", out) }
