//go:build linux

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/coding-agent/coding-agent/sandbox"
	"github.com/coding-agent/coding-agent/session"
	"github.com/coding-agent/coding-agent/tools"
)

// BenchmarkConcurrentCommandsFDs starts many sandboxed bash calls at once
// through the bash tool, each waiting for a file to appear, and reports
// the agent's descriptors (/proc/self/fd) once as many as may run are
// running: "capped" shares a tools.CommandLimit of the default size, as
// session.Env does, with 1,000 calls; "uncapped" runs 300 with no limit,
// which gives the descriptors each running command holds.
//
//	go test ./bench -run '^$' -bench ConcurrentCommandsFDs -benchtime 1x
func BenchmarkConcurrentCommandsFDs(b *testing.B) {
	s := sandbox.New(sandbox.Options{})
	defer s.Close()
	if st := s.Probe(context.Background()); !st.Available {
		b.Skipf("no sandbox here: %s", st.Reason)
	}
	for _, c := range []struct {
		name  string
		calls int
		limit *tools.CommandLimit
	}{
		{"capped", 1000, tools.NewCommandLimit(0)},
		{"uncapped", 300, nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				ws := b.TempDir()
				bash, err := tools.NewBash(ws, tools.Options{Preset: tools.WorkspaceWrite, Sandbox: session.ToolSandbox(s), Commands: c.limit})
				if err != nil {
					b.Fatal(err)
				}
				base := countFDs()
				running := c.calls
				if c.limit != nil {
					running = c.limit.Max()
				}
				var wg sync.WaitGroup
				errs := make(chan error, c.calls)
				for i := range c.calls {
					args, _ := json.Marshal(map[string]any{"command": fmt.Sprintf("touch s%d; until [ -e go ]; do sleep 0.05; done", i)})
					wg.Go(func() {
						r, err := bash.Execute(context.Background(), tools.Call{ID: "c" + strconv.Itoa(i), Args: args})
						if err == nil && r.IsError {
							err = fmt.Errorf("call %d: %+v", i, r)
						}
						if err != nil {
							errs <- err
						}
					})
				}
				deadline := time.Now().Add(10 * time.Minute)
				for started(ws) < running {
					if time.Now().After(deadline) {
						b.Fatalf("%d of %d started", started(ws), running)
					}
					time.Sleep(20 * time.Millisecond)
				}
				peak := countFDs()
				os.WriteFile(filepath.Join(ws, "go"), nil, 0o644)
				wg.Wait()
				close(errs)
				for err := range errs {
					b.Fatal(err)
				}
				after := countFDs()
				b.ReportMetric(float64(peak), "fds-peak")
				b.ReportMetric(float64(peak-base)/float64(running), "fds/running-command")
				b.ReportMetric(float64(running), "running")
				b.ReportMetric(float64(after-base), "fds-left")
			}
		})
	}
}

func countFDs() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	return len(ents)
}

func started(ws string) int {
	ents, _ := os.ReadDir(ws)
	n := 0
	for _, e := range ents {
		if len(e.Name()) > 1 && e.Name()[0] == 's' {
			n++
		}
	}
	return n
}
