package editorsync

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSnapshotDiff(t *testing.T) {
	root := realDir(t)
	big := strings.Repeat("b", 300<<10)
	files := map[string]string{
		"keep.txt":          "same\n",
		"mod.txt":           "a\nb\nc\n",
		"del.txt":           "gone\n",
		"bin.dat":           "x\x00y",
		"big.txt":           big,
		"touched.txt":       "unchanged\n",
		"sub/inner.txt":     "1\n",
		".git/HEAD":         "ref\n",
		"node_modules/m.js": "m\n",
	}
	for name, text := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		writeFile(t, p, text)
	}
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	snap, err := s.Snapshot(ctx, []string{root}, SnapshotLimits{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := snap.text[filepath.Join(root, ".git/HEAD")]; ok {
		t.Fatal("snapshot read .git")
	}

	writeFile(t, filepath.Join(root, "mod.txt"), "a\nB\nc\n")
	os.Remove(filepath.Join(root, "del.txt"))
	writeFile(t, filepath.Join(root, "new.txt"), "fresh\n")
	writeFile(t, filepath.Join(root, "bin.dat"), "x\x00z")
	writeFile(t, filepath.Join(root, "big.txt"), big+"!")
	writeFile(t, filepath.Join(root, "touched.txt"), "unchanged\n") // stat changes, text does not
	writeFile(t, filepath.Join(root, "sub/inner.txt"), "1\n2\n")
	writeFile(t, filepath.Join(root, ".git/HEAD"), "other\n")
	writeFile(t, filepath.Join(root, "node_modules/m.js"), "changed\n")

	diffs, err := s.Diff(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	want := []FileDiff{
		{Path: "big.txt", OldUnknown: true, TooLarge: true},
		{Path: "bin.dat", OldUnknown: true, Binary: true},
		{Path: "del.txt", OldText: str("gone\n")},
		{Path: "mod.txt", OldText: str("a\nb\nc\n"), NewText: str("a\nB\nc\n"), Line: 2},
		{Path: "new.txt", NewText: str("fresh\n"), Line: 1},
		{Path: "sub/inner.txt", OldText: str("1\n"), NewText: str("1\n2\n"), Line: 2},
	}
	if len(diffs) != len(want) {
		t.Fatalf("Diff = %s, want %d files", fmtDiffs(diffs), len(want))
	}
	for i, w := range want {
		w.Path = filepath.Join(root, w.Path)
		if fmtDiffs([]FileDiff{diffs[i]}) != fmtDiffs([]FileDiff{w}) {
			t.Errorf("diff %d = %s\nwant %s", i, fmtDiffs(diffs[i:i+1]), fmtDiffs([]FileDiff{w}))
		}
	}
}

func fmtDiffs(ds []FileDiff) string {
	var b strings.Builder
	p := func(s *string) string {
		if s == nil {
			return "nil"
		}
		return "\"" + *s + "\""
	}
	for _, d := range ds {
		b.WriteString("\n  " + d.Path + " old=" + p(d.OldText) + " new=" + p(d.NewText))
		if d.OldUnknown {
			b.WriteString(" oldUnknown")
		}
		if d.Binary {
			b.WriteString(" binary")
		}
		if d.TooLarge {
			b.WriteString(" tooLarge")
		}
		b.WriteString(" line=" + string(rune('0'+d.Line)))
	}
	return b.String()
}

func TestSnapshotBudgetAndCache(t *testing.T) {
	root := realDir(t)
	for _, n := range []string{"a", "b", "c", "d"} {
		writeFile(t, filepath.Join(root, n), strings.Repeat(n, 100))
	}
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	// Open document first, then walk order, until 250 bytes are kept.
	if err := s.Documents().Open(PathToURI(filepath.Join(root, "d")), "text", 1, strings.Repeat("d", 100)); err != nil {
		t.Fatal(err)
	}
	limits := SnapshotLimits{MaxTotalBytes: 250}
	snap, err := s.Snapshot(ctx, []string{root}, limits)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for p := range snap.text {
		kept = append(kept, filepath.Base(p))
	}
	if len(kept) != 2 || snap.text[filepath.Join(root, "d")] == "" || snap.text[filepath.Join(root, "a")] == "" {
		t.Fatalf("kept %v, want the open document d and then a", kept)
	}
	// Kept text goes to the cache, so the next snapshot need not read it.
	if _, ok := s.cache.get(filepath.Join(root, "a"), snap.files[filepath.Join(root, "a")]); !ok {
		t.Fatal("snapshot text not cached")
	}
	for _, n := range []string{"a", "c"} {
		writeFile(t, filepath.Join(root, n), "new "+n)
	}
	diffs, err := s.Diff(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 2 || diffs[0].OldText == nil || !diffs[1].OldUnknown || diffs[1].NewText == nil || *diffs[1].NewText != "new c" {
		t.Fatalf("Diff = %s, want a with old text and c without", fmtDiffs(diffs))
	}
	// The cache is bounded.
	small := newContentCache(10)
	small.put("x", statKey{}, "123456")
	small.put("y", statKey{}, "123456")
	if _, ok := small.get("x", statKey{}); ok || small.total != 6 {
		t.Fatalf("cache over its bound: total %d", small.total)
	}
}

func TestSnapshotTruncated(t *testing.T) {
	root := realDir(t)
	for _, n := range []string{"a", "b", "c"} {
		writeFile(t, filepath.Join(root, n), n)
	}
	s, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	snap, err := s.Snapshot(ctx, []string{root}, SnapshotLimits{MaxFiles: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !snap.Truncated || len(snap.files) != 2 {
		t.Fatalf("Truncated=%v files=%d", snap.Truncated, len(snap.files))
	}
	writeFile(t, filepath.Join(root, "a"), "A")
	writeFile(t, filepath.Join(root, "0"), "new, shifts the cut")
	diffs, err := s.Diff(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 1 || diffs[0].Path != filepath.Join(root, "a") {
		t.Fatalf("Diff = %s, want only the modification of a", fmtDiffs(diffs))
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Snapshot(cctx, []string{root}, SnapshotLimits{}); err == nil {
		t.Fatal("Snapshot with a cancelled context succeeded")
	}
}
