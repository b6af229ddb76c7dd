package sandbox

import (
	"context"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestZZWarm(t *testing.T) {
	ctx := context.Background()
	s := New(Options{})
	s.Probe(ctx)
	ws := t.TempDir()
	exec.Command("git", "init", "-q", ws).Run()
	for i := 0; i < 8; i++ {
		if err := s.Prewarm(ctx); err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		c, err := s.Command(ctx, Policy{Preset: WorkspaceWrite, WritableRoots: []string{ws}}, "true", ws, os.Environ())
		if err != nil {
			t.Fatal(err)
		}
		t1 := time.Since(t0)
		r, w, _ := os.Pipe()
		if err := c.Start(w, w); err != nil {
			t.Fatal(err)
		}
		w.Close()
		t2 := time.Since(t0)
		out, _ := io.ReadAll(r)
		t3 := time.Since(t0)
		code, err := c.Wait()
		t4 := time.Since(t0)
		c.Close()
		t.Logf("command %v start %v eof %v wait %v code %d err %v out %q", t1, t2, t3, t4, code, err, out)
	}
}
