//go:build unix

// Package bench holds the benchmarks of issue 2: each tool against a
// baseline on the same machine, with the peak RSS of our process.
package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coding-agent/coding-agent/tools"
)

// The bash benchmarks of issue 2: large outputs through the tool, against
// the same command redirected to a file.
var bashCommands = []struct {
	name    string
	command string
	bytes   int64
}{
	{"seq20M", "seq 1 20000000", 168888897},
	{"yes500MB", "yes | head -c 500000000", 500000000},
}

// runBashTool runs command once through the bash tool under full-access,
// with retained outputs in dataDir, and checks the full output was kept.
func runBashTool(tb testing.TB, command string, want int64, dataDir string) {
	tb.Helper()
	bash, err := tools.NewBash(dataDir, tools.Options{Preset: tools.FullAccess, DataDir: dataDir})
	if err != nil {
		tb.Fatal(err)
	}
	args, _ := json.Marshal(map[string]any{"command": command})
	res, err := bash.Execute(context.Background(), tools.Call{ID: "bench", Args: args})
	if err != nil {
		tb.Fatal(err)
	}
	if res.IsError || res.Details["totalBytes"] != want {
		tb.Fatalf("result: isError %v, details %v", res.IsError, res.Details)
	}
	path, _ := res.Details["fullOutputPath"].(string)
	fi, err := os.Stat(path)
	if err != nil || fi.Size() != want {
		tb.Fatalf("retained output %q: %v (size %d, want %d)", path, err, sizeOf(fi), want)
	}
	os.Remove(path)
}

func sizeOf(fi os.FileInfo) int64 {
	if fi == nil {
		return -1
	}
	return fi.Size()
}

// BenchmarkBash runs each command through the tool, then the same command
// redirected to a file (the baseline: the tool's output also goes to a
// file, plus the tail), and reports the peak RSS of a process that ran
// the tool once.
func BenchmarkBash(b *testing.B) {
	for _, c := range bashCommands {
		b.Run(c.name+"/tool", func(b *testing.B) {
			dir := b.TempDir()
			b.SetBytes(c.bytes)
			cpu := startCPU()
			for b.Loop() {
				runBashTool(b, c.command, c.bytes, dir)
			}
			cpu.report(b)
		})
		b.Run(c.name+"/redirect", func(b *testing.B) {
			out := filepath.Join(b.TempDir(), "out")
			b.SetBytes(c.bytes)
			cpu := startCPU()
			for b.Loop() {
				cmd := exec.Command("bash", "-c", c.command+" > "+out)
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
				os.Remove(out)
			}
			cpu.report(b)
		})
		b.Run(c.name+"/rss", func(b *testing.B) {
			var kib int64
			for b.Loop() {
				kib = childPeakRSS(b, c.command, c.bytes)
			}
			b.ReportMetric(float64(kib)/1024, "peak-MiB")
		})
	}
}

// cpuClock measures the CPU time (user and system) of this process and
// its waited-for children: on a shared machine wall time swings with the
// load, CPU time much less.
type cpuClock struct{ self, children time.Duration }

func cpuNow() cpuClock {
	var s, c syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &s)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &c)
	d := func(ru syscall.Rusage) time.Duration {
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return cpuClock{d(s), d(c)}
}

func startCPU() cpuClock { return cpuNow() }

// report adds the CPU seconds per operation: ours, and the whole tree's.
func (start cpuClock) report(b *testing.B) {
	end := cpuNow()
	self := end.self - start.self
	all := self + end.children - start.children
	b.ReportMetric(self.Seconds()/float64(b.N), "self-cpu-s/op")
	b.ReportMetric(all.Seconds()/float64(b.N), "total-cpu-s/op")
}

const childEnv = "CODING_AGENT_BENCH_BASH_CHILD"

// childPeakRSS re-runs this test binary as a child that runs the tool
// once, and returns the child's peak RSS in KiB (its own, not bash's).
func childPeakRSS(tb testing.TB, command string, want int64) int64 {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestBashChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+command, childEnv+"_BYTES="+strconv.FormatInt(want, 10),
		childEnv+"_DIR="+tb.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("child: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "maxrss-kib "); ok {
			kib, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return kib
		}
	}
	tb.Fatalf("child printed no maxrss:\n%s", out)
	return 0
}

// TestBashChildProcess is the child of childPeakRSS; it does nothing in
// an ordinary test run.
func TestBashChildProcess(t *testing.T) {
	command := os.Getenv(childEnv)
	if command == "" {
		t.Skip("runs only as the child of the bash RSS benchmark")
	}
	want, _ := strconv.ParseInt(os.Getenv(childEnv+"_BYTES"), 10, 64)
	runBashTool(t, command, want, os.Getenv(childEnv+"_DIR"))
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("maxrss-kib %d\n", ru.Maxrss) // KiB on Linux
}
