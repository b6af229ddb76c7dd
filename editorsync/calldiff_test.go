package editorsync

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCallDiffs runs one shell command that changes files every way, under
// a tracked call, and checks each file's diff.
func TestCallDiffs(t *testing.T) {
	root := realDir(t)
	write := func(name, text string) { writeFile(t, filepath.Join(root, name), text) }
	write("mod.txt", "a\nb\nc\n")
	write("del.txt", "gone\n")
	write("touch.txt", "same\n")
	write("bin2text.dat", "x\x00y")
	write("big.txt", "small\n")
	os.Mkdir(filepath.Join(root, "node_modules"), 0o755)
	h := newHarness(t, Options{Roots: []string{root}})
	<-h.s.Warmed()

	h.s.BeginCall("c1", "bash")
	h.s.TrackCall("c1")
	script := strings.Join([]string{
		"printf 'a\\nB\\nc\\n' > mod.txt",
		"rm del.txt",
		"printf 'new\\n' > new.txt",
		"printf 'x\\0' > newbin.dat",
		"touch touch.txt",
		"printf tmp > tmp.txt && rm tmp.txt",
		"printf 'text now\\n' > bin2text.dat",
		"head -c 300000 /dev/zero | tr '\\0' x > big.txt",
		"printf ignored > node_modules/x.js",
	}, "; ")
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	h.s.Barrier(context.Background())
	h.s.FinishCall("c1")
	diffs := h.s.CallDiffs("c1", DiffLimits{})

	got := map[string]FileDiff{}
	for _, d := range diffs {
		got[filepath.Base(d.Path)] = d
	}
	str := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	for _, test := range []struct {
		name, old, new string
		line           int
		unknown, bin   bool
		large          bool
	}{
		{name: "mod.txt", old: "a\nb\nc\n", new: "a\nB\nc\n", line: 2},
		{name: "del.txt", old: "gone\n", new: "<nil>"},
		{name: "new.txt", old: "<nil>", new: "new\n", line: 1},
		{name: "newbin.dat", old: "<nil>", new: "<nil>", bin: true},
		{name: "bin2text.dat", old: "<nil>", new: "text now\n", unknown: true},
		{name: "big.txt", old: "small\n", new: "<nil>", large: true},
	} {
		d, ok := got[test.name]
		if !ok {
			t.Errorf("%s: no diff (got %d diffs: %v)", test.name, len(diffs), got)
			continue
		}
		if str(d.OldText) != test.old || str(d.NewText) != test.new || d.Line != test.line ||
			d.OldUnknown != test.unknown || d.Binary != test.bin || d.TooLarge != test.large {
			t.Errorf("%s: %+v (old %q new %q), want %+v", test.name, d, str(d.OldText), str(d.NewText), test)
		}
	}
	for _, name := range []string{"touch.txt", "tmp.txt", "x.js"} {
		if _, ok := got[name]; ok {
			t.Errorf("%s: reported although its text did not change or it is ignored", name)
		}
	}
	if again := h.s.CallDiffs("c1", DiffLimits{}); again != nil {
		t.Errorf("a second CallDiffs returned %v", again)
	}
}

// TestCallDiffsOnlyTheCall: changes outside the tracked call are not in its
// diffs, and an untracked call has none.
func TestCallDiffsOnlyTheCall(t *testing.T) {
	root := realDir(t)
	writeFile(t, filepath.Join(root, "f.txt"), "1\n")
	h := newHarness(t, Options{Roots: []string{root}})
	<-h.s.Warmed()
	writeFile(t, filepath.Join(root, "before.txt"), "x")
	h.sentinel(root)
	h.s.BeginCall("c2", "bash")
	h.s.TrackCall("c2")
	writeFile(t, filepath.Join(root, "f.txt"), "2\n")
	h.s.Barrier(context.Background())
	h.s.FinishCall("c2")
	writeFile(t, filepath.Join(root, "after.txt"), "y")
	h.sentinel(root)
	diffs := h.s.CallDiffs("c2", DiffLimits{})
	if len(diffs) != 1 || filepath.Base(diffs[0].Path) != "f.txt" || *diffs[0].OldText != "1\n" {
		t.Errorf("diffs %+v, want only f.txt from 1 to 2", diffs)
	}
	if d := h.s.CallDiffs("never-tracked", DiffLimits{}); d != nil {
		t.Errorf("untracked call: %v", d)
	}
}
