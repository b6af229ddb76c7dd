package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coding-agent/coding-agent/editorsync"
)

// BenchmarkEditorsyncLatency measures the time from a write on disk to the
// OnChange callback that reports it, with the default batching (20 ms quiet
// period, 50 ms cap). One iteration is one write and its report; p50 and p99
// are over all iterations (run with -benchtime=200x).
func BenchmarkEditorsyncLatency(b *testing.B) {
	root := b.TempDir()
	got := make(chan time.Time, 16)
	s, err := editorsync.New(editorsync.Options{Roots: []string{root}, OnChange: func([]editorsync.Change) {
		got <- time.Now()
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	path := filepath.Join(root, "f.txt")
	var lat []time.Duration
	i := 0
	for b.Loop() {
		start := time.Now()
		if err := os.WriteFile(path, []byte(strconv.Itoa(i)), 0o644); err != nil {
			b.Fatal(err)
		}
		select {
		case at := <-got:
			lat = append(lat, at.Sub(start))
		case <-time.After(5 * time.Second):
			b.Fatal("no report within 5 s")
		}
		i++
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[int(float64(len(lat)-1)*p)].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}

// makeTree creates files files in directories of 20 files each, two levels
// deep, and returns the root.
func makeTree(b *testing.B, files int) string {
	root := b.TempDir()
	for i := range files {
		dir := filepath.Join(root, fmt.Sprintf("d%02d", i/2000), fmt.Sprintf("e%03d", (i/20)%100))
		if i%20 == 0 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		text := fmt.Sprintf("package p\n\n// file %d\nvar X%d = %d\n", i, i, i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.go", i)), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return root
}

func rssBytes() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb * 1024
		}
	}
	return 0
}

func heapBytes() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc)
}

// BenchmarkEditorsyncWatch20k measures starting a Sync on a tree of 20,000
// files in 1,011 directories (one inotify watch each): the time of New, and
// the heap a live Sync holds.
func BenchmarkEditorsyncWatch20k(b *testing.B) {
	root := makeTree(b, 20_000)
	var heap, rss float64
	var watches int
	for b.Loop() {
		h0, r0 := heapBytes(), rssBytes()
		s, err := editorsync.New(editorsync.Options{Roots: []string{root}})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		heap += heapBytes() - h0
		rss += rssBytes() - r0
		watches = s.Status().Watches
		s.Close()
		b.StartTimer()
	}
	b.ReportMetric(heap/float64(b.N)/(1<<20), "heap-MiB")
	b.ReportMetric(rss/float64(b.N)/(1<<20), "rss-delta-MiB")
	b.ReportMetric(float64(watches), "watches")
}

// BenchmarkEditorsyncCallDiff20k measures what diffs cost a bash command
// on a tree of 20,000 files: one file changed under a tracked call, then
// Barrier and CallDiffs, with the content cache warm (the steady state).
func BenchmarkEditorsyncCallDiff20k(b *testing.B) {
	root := makeTree(b, 20_000)
	s, err := editorsync.New(editorsync.Options{Roots: []string{root}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	<-s.Warmed()
	ctx := context.Background()
	target := filepath.Join(root, "d00", "e000", "f0.go")
	i := 0
	for b.Loop() {
		id := fmt.Sprintf("call-%d", i)
		s.BeginCall(id, "bash")
		s.TrackCall(id)
		os.WriteFile(target, []byte(fmt.Sprintf("package p\n// %d\n", i)), 0o644)
		s.Barrier(ctx)
		s.FinishCall(id)
		diffs := s.CallDiffs(id, editorsync.DiffLimits{})
		if len(diffs) != 1 || diffs[0].OldText == nil {
			b.Fatalf("CallDiffs = %+v", diffs)
		}
		i++
	}
}
