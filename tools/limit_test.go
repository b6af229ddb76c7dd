//go:build linux

package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// waitFor polls an in-memory or file-system condition that has no event
// to wait on, with a generous deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestCommandLimit: with a cap of 2, six concurrent commands run two at a
// time; a queued command cancelled returns at once having started nothing
// (no process, no output file); the others all run to the end.
func TestCommandLimit(t *testing.T) {
	limit := NewCommandLimit(2)
	b, dir := newTestBash(t, Options{Commands: limit})
	const n = 6
	for i := range n {
		if err := syscall.Mkfifo(filepath.Join(dir, "f"+strconv.Itoa(i)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	started := func(i int) bool { _, err := os.Lstat(filepath.Join(dir, "s"+strconv.Itoa(i))); return err == nil }
	running := func() int {
		c := 0
		for i := range n {
			if started(i) {
				c++
			}
		}
		return c
	}
	type res struct {
		r   Result
		err error
	}
	results := make([]chan res, n)
	cancels := make([]context.CancelFunc, n)
	for i := range n {
		results[i] = make(chan res, 1)
		ctx, cancel := context.WithCancel(context.Background())
		cancels[i] = cancel
		defer cancel()
		args := bashArgsJSON(t, map[string]any{"command": fmt.Sprintf("touch s%d; exec cat f%d", i, i)})
		go func() {
			r, err := b.Execute(ctx, Call{ID: "c" + strconv.Itoa(i), Args: args})
			results[i] <- res{r, err}
		}()
		if i < 2 {
			waitFor(t, "command "+strconv.Itoa(i)+" to start", func() bool { return started(i) })
		} else {
			waitFor(t, "command "+strconv.Itoa(i)+" to queue", func() bool { return limit.queued() == i-1 })
		}
	}
	if got := running(); got != 2 {
		t.Fatalf("%d commands started, want 2 (the cap)", got)
	}
	// Cancel a queued one: it returns without having started.
	cancels[4]()
	r := <-results[4]
	if r.err == nil || !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled queued command: %v, want context.Canceled", r.err)
	}
	if started(4) {
		t.Fatal("the cancelled queued command ran")
	}
	if q := limit.queued(); q != 3 {
		t.Fatalf("%d queued after the cancel, want 3", q)
	}
	// Let the commands end one by one; each frees a slot for the next.
	release := func(i int) {
		f, err := os.OpenFile(filepath.Join(dir, "f"+strconv.Itoa(i)), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("done " + strconv.Itoa(i) + "\n")
		f.Close()
	}
	done := map[int]bool{4: true}
	for _, i := range []int{0, 1, 2, 3, 5} {
		waitFor(t, "command "+strconv.Itoa(i)+" to start", func() bool { return started(i) })
		release(i)
		r := <-results[i]
		if r.err != nil || r.r.IsError {
			t.Fatalf("command %d: %v %+v", i, r.err, r.r)
		}
		done[i] = true
		live := 0
		for j := range n {
			if started(j) && !done[j] {
				live++
			}
		}
		if live > 2 {
			t.Fatalf("%d commands running at once, over the cap of 2", live)
		}
	}
	if started(4) {
		t.Fatal("the cancelled queued command ran later")
	}
	if q := limit.queued(); q != 0 {
		t.Fatalf("%d still queued", q)
	}
	if len(limit.slots) != 0 {
		t.Fatalf("%d slots still held", len(limit.slots))
	}
}
