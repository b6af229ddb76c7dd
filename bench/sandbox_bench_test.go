package bench

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/coding-agent/coding-agent/sandbox"
)

// TestMain lets this test binary serve as the sandbox helper: the sandbox
// re-executes /proc/self/exe.
func TestMain(m *testing.M) {
	sandbox.MaybeRunHelper()
	os.Exit(m.Run())
}

// BenchmarkSandboxBashTrue measures `bash -c true` run the way the bash
// tool runs it (own process group, output on a pipe), without the sandbox
// and sandboxed under both presets, in one run; it reports the median per
// command (ms-median) besides the mean.
//
//	go test ./bench -run '^$' -bench 'Sandbox' -benchtime 200x
func BenchmarkSandboxBashTrue(b *testing.B) {
	ctx := context.Background()
	s := sandbox.New(sandbox.Options{})
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
	runs := []struct {
		name string
		cmd  func() (*exec.Cmd, func(), error)
	}{
		{"plain", func() (*exec.Cmd, func(), error) {
			c := exec.CommandContext(ctx, "/bin/bash", "-c", "true")
			c.Dir, c.Env = ws, env
			c.SysProcAttr = &syscall.SysProcAttr{}
			return c, func() {}, nil
		}},
		{"read-only", func() (*exec.Cmd, func(), error) {
			return s.Command(ctx, sandbox.Policy{Preset: sandbox.ReadOnly, WritableRoots: []string{ws}}, "true", ws, env)
		}},
		{"workspace-write", func() (*exec.Cmd, func(), error) {
			return s.Command(ctx, sandbox.Policy{Preset: sandbox.WorkspaceWrite, WritableRoots: []string{ws}}, "true", ws, env)
		}},
	}
	for _, r := range runs {
		b.Run(r.name, func(b *testing.B) {
			times := make([]time.Duration, 0, b.N)
			for b.Loop() {
				t0 := time.Now()
				c, cleanup, err := r.cmd()
				if err != nil {
					b.Fatal(err)
				}
				c.SysProcAttr.Setpgid = true
				if out, err := c.CombinedOutput(); err != nil {
					b.Fatalf("%v %s", err, out)
				}
				cleanup()
				times = append(times, time.Since(t0))
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms-median")
		})
	}
}

// BenchmarkSandboxProbe measures a fresh probe (a Sandbox caches its
// result; this is the cost paid once at start-up).
func BenchmarkSandboxProbe(b *testing.B) {
	for b.Loop() {
		st := sandbox.New(sandbox.Options{}).Probe(context.Background())
		if !st.Available {
			b.Skipf("no sandbox here: %s", st.Reason)
		}
	}
}
