package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// umask reads the process umask without changing it.
func umask(t *testing.T) os.FileMode {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("cannot read the umask: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Umask:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			if err != nil {
				t.Fatal(err)
			}
			return os.FileMode(n)
		}
	}
	t.Skip("no Umask in /proc/self/status")
	return 0
}

func TestWriteFileAtomicModes(t *testing.T) {
	dir := t.TempDir()
	for _, mode := range []os.FileMode{0o600, 0o755, 0o444, 0o640 | os.ModeSetgid} {
		p := filepath.Join(dir, fmt.Sprintf("f%o", mode))
		putFile(t, p, "old")
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := writeFileAtomic(context.Background(), p, "new"); err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(p)
		if fi.Mode() != mode {
			t.Errorf("mode %v, want %v", fi.Mode(), mode)
		}
		if readBack(t, p) != "new" {
			t.Error("not replaced")
		}
	}
	assertNoTemp(t, dir)
}

// countdownCtx is a context that reports cancellation from its n-th Err
// call on, to cancel a write at a chosen point.
type countdownCtx struct {
	context.Context
	n atomic.Int32
}

func (c *countdownCtx) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

func TestWriteFileAtomicCancelled(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 3*writeChunk/16+7)
	// Err is called at the start, before each of the 4 chunks and before
	// the rename: cancel at the start, between chunks, and just before the
	// rename.
	for _, n := range []int32{0, 1, 3, 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "f")
			putFile(t, p, "old")
			ctx := &countdownCtx{Context: context.Background()}
			ctx.n.Store(n)
			err := writeFileAtomic(ctx, p, string(data))
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, want context.Canceled", err)
			}
			if readBack(t, p) != "old" {
				t.Fatal("target changed")
			}
			assertNoTemp(t, dir)
		})
	}
}

func TestWriteFileAtomicRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	mkfifo(t, filepath.Join(dir, "fifo"))
	if err := writeFileAtomic(context.Background(), filepath.Join(dir, "fifo"), "x"); err == nil {
		t.Fatal("replaced a named pipe")
	}
	if err := writeFileAtomic(context.Background(), dir, "x"); err == nil {
		t.Fatal("replaced a directory")
	}
	assertNoTemp(t, dir)
}

func TestMkdirAllRemovable(t *testing.T) {
	dir := t.TempDir()
	d, made, err := mkdirAllAt(filepath.Join(dir, "a", "b", "c"))
	if err != nil {
		t.Fatal(err)
	}
	defer made.close()
	if len(made.names) != 3 || d.path != filepath.Join(dir, "a", "b", "c") {
		t.Fatalf("created %v, handle %s", made.names, d.path)
	}
	made.undo()
	if _, err := os.Stat(filepath.Join(dir, "a")); err == nil {
		t.Fatal("created directories not removed")
	}
}

const childEnv = "CODING_AGENT_TOOLS_ATOMIC_CHILD"

// TestAtomicWriteChild is the child process of TestWriteKilledMidWrite: it
// replaces the file alternately with two large contents, announcing each
// write on stdout, until it is killed.
func TestAtomicWriteChild(t *testing.T) {
	path := os.Getenv(childEnv)
	if path == "" {
		t.Skip("child process of TestWriteKilledMidWrite")
	}
	a, b := killContents()
	for i := 0; ; i++ {
		data := a
		if i%2 == 1 {
			data = b
		}
		fmt.Printf("writing %d\n", i)
		if err := writeFileAtomic(context.Background(), path, string(data)); err != nil {
			fmt.Println("error:", err)
			os.Exit(3)
		}
	}
}

func killContents() ([]byte, []byte) {
	return bytes.Repeat([]byte("A"), 6<<20), bytes.Repeat([]byte("b\n"), 2<<20)
}

// TestWriteKilledMidWrite kills a process while it replaces a file, at
// several points: the file must hold the old or the new content, whole.
func TestWriteKilledMidWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	a, b := killContents()
	dir := t.TempDir()
	p := filepath.Join(dir, "target")
	putFile(t, p, string(a))
	midWrite := 0
	for round := range 4 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAtomicWriteChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), childEnv+"="+p)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		// Kill just after a write starts, later in each round.
		want := fmt.Sprintf("writing %d", round+1)
		for sc.Scan() {
			if sc.Text() == want {
				break
			}
		}
		cmd.Process.Kill()
		cmd.Wait()
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, a) && !bytes.Equal(got, b) {
			t.Fatalf("round %d: target holds %d bytes that are neither the old nor the new content", round, len(got))
		}
		midWrite = len(temps(t, dir))
	}
	t.Logf("%d temp files left by 4 kills", midWrite)

	// The next mutation in the directory, once they are stale, sweeps
	// them: only them.
	putFile(t, filepath.Join(dir, ".notes.tmp-keepme"), "mine")
	w := newWrite(t, dir, Options{})
	w.m.sweeper.now = func() time.Time { return time.Now().Add(staleTempAge + time.Minute) }
	if _, err := execTool(t, w, map[string]any{"path": "other.txt", "content": "x"}); err != nil {
		t.Fatal(err)
	}
	if left := temps(t, dir); len(left) != 1 || left[0] != ".notes.tmp-keepme" {
		t.Fatalf("after the sweep: %v", left)
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, a) && !bytes.Equal(got, b) {
		t.Fatal("the sweep damaged the target")
	}
}

// temps lists the names in dir that contain ".tmp-".
func temps(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestSweepStaleTemps checks what a mutation sweeps from its directory:
// only regular files named like its temp files and unmodified for
// staleTempAge, at most once per directory per staleTempAge.
func TestSweepStaleTemps(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	old := now.Add(-staleTempAge - time.Second)
	for _, f := range []struct {
		name  string
		mtime time.Time
	}{
		{".a.txt.tmp-0123456789ab", old},     // stale: swept
		{".b.tmp-abcdefabcdef", old},         // stale: swept
		{".young.tmp-0123456789ab", now},     // a write in progress: kept
		{".a.txt.tmp-0123456789AB", old},     // not our pattern (upper case): kept
		{".a.txt.tmp-0123456789a", old},      // too short: kept
		{"a.txt.tmp-0123456789ab", old},      // no leading dot: kept
		{".a.txt.tmp-0123456789abc", old},    // too long: kept
		{"x/.a.txt.tmp-0123456789ab", old},   // another directory: kept
		{".dir.tmp-0123456789ab/keep", old},  // a directory: kept
		{".a.txt.tmp-0123456789ab.bak", old}, // kept
	} {
		p := filepath.Join(dir, f.name)
		putFile(t, p, "x")
		if err := os.Chtimes(p, f.mtime, f.mtime); err != nil {
			t.Fatal(err)
		}
	}
	os.Chtimes(filepath.Join(dir, ".dir.tmp-0123456789ab"), old, old)
	outside := filepath.Join(t.TempDir(), "target")
	putFile(t, outside, "outside")
	os.Chtimes(outside, old, old)
	if err := os.Symlink(outside, filepath.Join(dir, ".link.tmp-0123456789ab")); err != nil {
		t.Fatal(err)
	}
	w := newWrite(t, dir, Options{})
	clock := now
	w.m.sweeper.now = func() time.Time { return clock }
	if _, err := execTool(t, w, map[string]any{"path": "a.txt", "content": "1"}); err != nil {
		t.Fatal(err)
	}
	got := temps(t, dir)
	want := []string{".a.txt.tmp-0123456789AB", ".a.txt.tmp-0123456789a", ".a.txt.tmp-0123456789ab.bak",
		".a.txt.tmp-0123456789abc", ".dir.tmp-0123456789ab", ".link.tmp-0123456789ab", ".young.tmp-0123456789ab", "a.txt.tmp-0123456789ab"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("left %v\nwant %v", got, want)
	}
	if readBack(t, filepath.Join(dir, "x", ".a.txt.tmp-0123456789ab")) != "x" || readBack(t, outside) != "outside" {
		t.Fatal("swept outside the directory")
	}
	// Once swept, the directory is not listed again until staleTempAge
	// has passed.
	young := filepath.Join(dir, ".young.tmp-0123456789ab")
	os.Chtimes(young, old, old)
	if _, err := execTool(t, w, map[string]any{"path": "a.txt", "content": "2"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(young); err != nil {
		t.Fatal("swept twice within staleTempAge")
	}
	clock = now.Add(staleTempAge)
	if _, err := execTool(t, w, map[string]any{"path": "a.txt", "content": "3"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(young); err == nil {
		t.Fatal("not swept again after staleTempAge")
	}
}
