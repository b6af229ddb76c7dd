package editorsync

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Defaults for [SnapshotLimits].
const (
	DefaultMaxFiles      = 50_000
	DefaultMaxFileBytes  = 256 << 10
	DefaultMaxTotalBytes = 8 << 20
)

// SnapshotLimits bound the cost of [Sync.Snapshot] and [Sync.Diff].
type SnapshotLimits struct {
	// MaxFiles is how many entries a walk of the roots records at most;
	// 0 means DefaultMaxFiles.
	MaxFiles int
	// MaxFileBytes is the size of the largest file whose text is kept or
	// diffed; 0 means DefaultMaxFileBytes.
	MaxFileBytes int64
	// MaxTotalBytes bounds the text a snapshot keeps, and separately the
	// new text a Diff reads; 0 means DefaultMaxTotalBytes.
	MaxTotalBytes int64
}

func (l SnapshotLimits) withDefaults() SnapshotLimits {
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = DefaultMaxTotalBytes
	}
	return l
}

// Snapshot is the state of the session roots before a bash command: the
// stat of every file (cheap) and the text of as many small text files as
// the limits allow.
type Snapshot struct {
	roots  []string
	limits SnapshotLimits
	files  map[string]statKey
	text   map[string]string
	binary map[string]bool
	// Truncated reports that the walk stopped at MaxFiles: Diff then only
	// reports files that exist in both walks.
	Truncated bool
}

// FileDiff is how one file changed between a snapshot and now.
type FileDiff struct {
	Path string
	// OldText is the text before; nil when the file did not exist or its
	// text is not known (see OldUnknown, Binary, TooLarge).
	OldText *string
	// NewText is the text now; nil when the file was deleted or its text
	// is not read (see Binary, TooLarge).
	NewText *string
	// OldUnknown reports that the file existed but its old text was not
	// kept by the snapshot (over the budget, or not a regular file).
	OldUnknown bool
	// Line is the first changed line, 1-based, when both texts are known
	// (1 for a created file with text); 0 when it is not known.
	Line int
	// Binary reports that the old or new content has a NUL byte.
	Binary bool
	// TooLarge reports that the old or new content is over MaxFileBytes,
	// or the Diff's MaxTotalBytes budget was spent.
	TooLarge bool
}

// Snapshot records the state of roots before a bash command.
//
// Cost: one walk of the roots with a stat of every entry (ignored
// directories are skipped), at most MaxFiles entries. Text is kept for
// regular text files of at most MaxFileBytes, open documents first, up to
// MaxTotalBytes in all; text already in the Sync's content cache (files
// changed recently, files kept by earlier snapshots) is reused without
// reading, so on an unchanged tree only the first snapshot reads files.
func (s *Sync) Snapshot(ctx context.Context, roots []string, limits SnapshotLimits) (*Snapshot, error) {
	limits = limits.withDefaults()
	snap := &Snapshot{limits: limits, text: map[string]string{}, binary: map[string]bool{}}
	for _, r := range roots {
		snap.roots = append(snap.roots, canonical(filepath.Clean(r)))
	}
	files, order, truncated, err := s.walk(ctx, snap.roots, limits.MaxFiles)
	if err != nil {
		return nil, err
	}
	snap.files, snap.Truncated = files, truncated
	// Open documents first: they are what the user is looking at.
	var first []string
	for _, d := range s.docs.List() {
		if _, ok := files[d.Path]; ok {
			first = append(first, d.Path)
		}
	}
	budget := limits.MaxTotalBytes
	for _, list := range [][]string{first, order} {
		for _, p := range list {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if _, done := snap.text[p]; done || snap.binary[p] {
				continue
			}
			k := files[p]
			if !k.mode.IsRegular() || k.size > limits.MaxFileBytes || k.size > budget {
				continue
			}
			text, ok := s.cache.get(p, k)
			if !ok {
				var bin bool
				text, bin, ok = s.readText(p, k, limits.MaxFileBytes)
				if bin {
					snap.binary[p] = true
				}
				if !ok {
					continue
				}
			}
			snap.text[p] = text
			budget -= int64(len(text))
		}
	}
	return snap, nil
}

// Diff returns the files under the snapshot's roots that changed since it
// was taken, sorted by path. A file whose stat changed but whose text is
// known on both sides and equal is left out.
func (s *Sync) Diff(ctx context.Context, snap *Snapshot) ([]FileDiff, error) {
	limits := snap.limits
	now, _, truncated, err := s.walk(ctx, snap.roots, limits.MaxFiles)
	if err != nil {
		return nil, err
	}
	partial := truncated || snap.Truncated
	var paths []string
	for p, k := range now {
		old, ok := snap.files[p]
		if (ok && old != k) || (!ok && !partial) {
			paths = append(paths, p)
		}
	}
	if !partial {
		for p := range snap.files {
			if _, ok := now[p]; !ok {
				paths = append(paths, p)
			}
		}
	}
	slices.Sort(paths)
	budget := limits.MaxTotalBytes
	var diffs []FileDiff
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d := FileDiff{Path: p}
		if old, existed := snap.files[p]; existed {
			if t, ok := snap.text[p]; ok {
				d.OldText = &t
			} else {
				d.OldUnknown = true
				d.Binary = snap.binary[p]
				d.TooLarge = old.mode.IsRegular() && old.size > limits.MaxFileBytes
			}
		}
		if k, exists := now[p]; exists && k.mode.IsRegular() {
			switch {
			case k.size > limits.MaxFileBytes || k.size > budget:
				d.TooLarge = true
			default:
				text, bin, ok := s.readText(p, k, limits.MaxFileBytes)
				if bin {
					d.Binary = true
				}
				if ok {
					d.NewText = &text
					budget -= int64(len(text))
				}
			}
		}
		switch {
		case d.OldText != nil && d.NewText != nil:
			if *d.OldText == *d.NewText {
				continue
			}
			d.Line = firstChangedLine(*d.OldText, *d.NewText)
		case d.NewText != nil && !d.OldUnknown:
			d.Line = 1
		}
		diffs = append(diffs, d)
	}
	return diffs, nil
}

// walk lists the entries under roots with their stat, skipping ignored
// names, in walk order, at most max entries.
func (s *Sync) walk(ctx context.Context, roots []string, max int) (map[string]statKey, []string, bool, error) {
	files := map[string]statKey{}
	var order []string
	errFull := fmt.Errorf("full")
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == root {
					return err
				}
				return nil // unreadable: skip, as the watcher does
			}
			if s.ignore[d.Name()] && p != root {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				return ctx.Err()
			}
			if _, dup := files[p]; dup {
				return nil // nested roots
			}
			if len(files) >= max {
				return errFull
			}
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			files[p] = keyOf(fi)
			order = append(order, p)
			return nil
		})
		if err == errFull {
			return files, order, true, nil
		}
		if err != nil {
			return nil, nil, false, fmt.Errorf("walking %s: %w", root, err)
		}
	}
	return files, order, false, nil
}

// readText reads a regular file of at most max bytes whose stat still
// matches k. It reports binary content (a NUL byte) and keeps text in the
// cache.
func (s *Sync) readText(path string, k statKey, max int64) (text string, binary, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil || int64(len(b)) > max {
		return "", false, false
	}
	if !isText(b) {
		return "", true, false
	}
	text = string(b)
	if fi, err := f.Stat(); err == nil && keyOf(fi) == k {
		s.cache.put(path, k, text)
	}
	return text, false, true
}

// firstChangedLine returns the 1-based line where a and b first differ.
func firstChangedLine(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	return strings.Count(a[:i], "\n") + 1
}
