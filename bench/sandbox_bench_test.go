//go:build unix

package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/coding-agent/coding-agent/sandbox"
	"github.com/coding-agent/coding-agent/session/mcp"
	"github.com/coding-agent/coding-agent/session/mcp/mcptest"
)

// TestMain lets this test binary serve as the sandbox helper: the sandbox
// re-executes /proc/self/exe.
func TestMain(m *testing.M) {
	sandbox.MaybeRunHelper()
	mcp.MaybeRunSupervisor()
	mcptest.MaybeRunFixture()
	os.Exit(m.Run())
}

// BenchmarkSandboxBashTrue measures `bash -c true` run the way the bash
// tool runs it (own process group, output on a pipe), without the sandbox
// and sandboxed under both presets, in one run; it reports the median per
// command (ms-median) besides the mean. The sandboxed runs come twice:
// "ready", where the helper the sandbox keeps started is ready when the
// command comes (as between an agent's commands, which are seconds apart),
// and "back-to-back", where each command follows the previous one at once
// and may have to wait for (or start) its helper.
//
//	go test ./bench -run '^$' -bench 'Sandbox' -benchtime 200x
func BenchmarkSandboxBashTrue(b *testing.B) {
	ctx := context.Background()
	s := sandbox.New(sandbox.Options{})
	defer s.Close()
	st := s.Probe(ctx)
	if !st.Available {
		b.Skipf("no sandbox here: %s", st.Reason)
	}
	ws := b.TempDir()
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		b.Fatalf("%v %s", err, out)
	}
	os.WriteFile(filepath.Join(ws, "f.txt"), []byte("x\n"), 0o644)
	env := os.Environ()
	plain := func() error {
		c := exec.CommandContext(ctx, "/bin/bash", "-c", "true")
		c.Dir, c.Env = ws, env
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		_, err := c.CombinedOutput()
		return err
	}
	sandboxed := func(preset sandbox.Preset) func() error {
		return func() error {
			c, err := s.Command(ctx, sandbox.Policy{Preset: preset, WritableRoots: []string{ws}}, "true", ws, env)
			if err != nil {
				return err
			}
			out, code, err := c.Output()
			if err == nil && code != 0 {
				err = fmt.Errorf("exit %d: %s", code, out)
			}
			return err
		}
	}
	runs := []struct {
		name  string
		ready bool
		run   func() error
	}{
		{"plain", false, plain},
		{"read-only/ready", true, sandboxed(sandbox.ReadOnly)},
		{"workspace-write/ready", true, sandboxed(sandbox.WorkspaceWrite)},
		{"workspace-write/back-to-back", false, sandboxed(sandbox.WorkspaceWrite)},
	}
	for _, r := range runs {
		b.Run(r.name, func(b *testing.B) {
			times := make([]time.Duration, 0, b.N)
			for b.Loop() {
				if r.ready {
					b.StopTimer()
					if err := s.Prewarm(ctx); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				t0 := time.Now()
				if err := r.run(); err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(t0))
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-median")
		})
	}
}
