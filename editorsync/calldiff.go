package editorsync

import (
	"io"
	"os"
	"strings"
	"time"
)

// Diffs of a tool call. The watcher already sees every file a command
// changes; what it needs to show a diff is the text each file had before.
// That comes from the content cache, which is filled in the background
// when the Sync starts (small text files under the roots, up to the cache's
// size) and kept current as the watcher sees changes. So a bash command
// costs no walk of the tree before or after it, however large the tree:
// a file whose old text was not cached is reported as changed without a
// diff.

// Defaults for [DiffLimits].
const (
	DefaultMaxFileBytes  = 256 << 10
	DefaultMaxTotalBytes = 8 << 20
)

// DiffLimits bound the cost of [Sync.CallDiffs].
type DiffLimits struct {
	// MaxFileBytes is the size of the largest file whose text is diffed;
	// 0 means DefaultMaxFileBytes.
	MaxFileBytes int64
	// MaxTotalBytes bounds the new text read for one call's diffs; 0 means
	// DefaultMaxTotalBytes.
	MaxTotalBytes int64
}

func (l DiffLimits) withDefaults() DiffLimits {
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = DefaultMaxTotalBytes
	}
	return l
}

// FileDiff is how one file changed during a tool call.
type FileDiff struct {
	Path string
	// OldText is the text before; nil when the file did not exist or its
	// text is not known (see OldUnknown).
	OldText *string
	// NewText is the text now; nil when the file was deleted or its text
	// is not read (see Binary, TooLarge).
	NewText *string
	// OldUnknown reports that the file existed but its old text was not in
	// the content cache.
	OldUnknown bool
	// Line is the first changed line, 1-based, when both texts are known
	// (1 for a created file with text); 0 when it is not known.
	Line int
	// Binary reports that the new content has a NUL byte.
	Binary bool
	// TooLarge reports that the new content is over MaxFileBytes, or the
	// call's MaxTotalBytes budget was spent.
	TooLarge bool
}

// callTrack records, for one tracked call, the files it changed in the
// order first seen, and what each held before.
type callTrack struct {
	order []string
	old   map[string]oldText
}

type oldText struct {
	existed bool
	known   bool
	text    string
}

// TrackCall starts recording the files the running call callID changes,
// with their text before the change, for [Sync.CallDiffs]. Call it right
// after [Sync.BeginCall] and before the call changes anything. While the
// start-up fill of the content cache is still running (a fresh session),
// it waits for it, at most a second, so that the first command's diffs
// have their old text too.
func (s *Sync) TrackCall(callID string) {
	t := time.NewTimer(time.Second)
	select {
	case <-s.warmed:
	case <-t.C:
	}
	t.Stop()
	s.callMu.Lock()
	defer s.callMu.Unlock()
	s.tracks[callID] = &callTrack{old: map[string]oldText{}}
}

// recordOld notes, for changes attributed to a tracked call, the text the
// file had before: it runs in flush, before the cache learns the new text.
func (s *Sync) recordOld(out []Change) {
	s.callMu.Lock()
	defer s.callMu.Unlock()
	if len(s.tracks) == 0 {
		return
	}
	for _, c := range out {
		if c.Origin == nil {
			continue
		}
		tr := s.tracks[c.Origin.ToolCallID]
		if tr == nil {
			continue
		}
		if _, seen := tr.old[c.Path]; seen {
			continue // an earlier burst of the call already saw the old text
		}
		o := oldText{existed: c.Kind != Created}
		if o.existed {
			o.text, o.known = s.cache.peek(c.Path)
		}
		tr.old[c.Path] = o
		tr.order = append(tr.order, c.Path)
	}
}

// CallDiffs returns how the files the tracked call callID changed differ
// from before it, and stops tracking it. Call it after [Sync.Barrier], so
// that every change of the call has been seen. Files whose text is
// unchanged (touched, or changed and changed back) are left out.
func (s *Sync) CallDiffs(callID string, limits DiffLimits) []FileDiff {
	limits = limits.withDefaults()
	s.callMu.Lock()
	tr := s.tracks[callID]
	delete(s.tracks, callID)
	s.callMu.Unlock()
	if tr == nil {
		return nil
	}
	budget := limits.MaxTotalBytes
	var diffs []FileDiff
	for _, p := range tr.order {
		o := tr.old[p]
		d := FileDiff{Path: p}
		if o.existed {
			if o.known {
				d.OldText = &o.text
			} else {
				d.OldUnknown = true
			}
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			switch {
			case fi.Size() > limits.MaxFileBytes || fi.Size() > budget:
				d.TooLarge = true
			default:
				text, bin, ok := s.readText(p, keyOf(fi), limits.MaxFileBytes)
				d.Binary = bin
				if ok {
					d.NewText = &text
					budget -= int64(len(text))
				}
			}
		} else if err == nil {
			continue // a directory or a special file: its entries report for themselves
		}
		switch {
		case d.OldText != nil && d.NewText != nil:
			if *d.OldText == *d.NewText {
				continue
			}
			d.Line = firstChangedLine(*d.OldText, *d.NewText)
		case d.NewText != nil && !d.OldUnknown:
			d.Line = 1
		case !o.existed && d.NewText == nil && !d.Binary && !d.TooLarge:
			continue // created and gone again
		}
		diffs = append(diffs, d)
	}
	return diffs
}

// warmCache reads the small text files under the roots into the content
// cache, until the cache is full, so that a later change has its old text.
// It runs once in the background when the Sync starts.
func (s *Sync) warmCache() {
	defer s.wg.Done()
	defer close(s.warmed)
	s.mu.Lock()
	var files []string
	for dir, names := range s.entries {
		if dw := s.dirs[dir]; dw == nil || !dw.tree {
			continue
		}
		for name, isDir := range names {
			if !isDir {
				files = append(files, dir+string(os.PathSeparator)+name)
			}
		}
	}
	s.mu.Unlock()
	var read int64
	for _, p := range files {
		select {
		case <-s.quit:
			return
		default:
		}
		if read >= s.cache.max {
			return
		}
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > DefaultMaxFileBytes {
			continue
		}
		if _, ok := s.cache.get(p, keyOf(fi)); ok {
			continue
		}
		if text, _, ok := s.readText(p, keyOf(fi), DefaultMaxFileBytes); ok {
			read += int64(len(text))
		}
	}
}

// Warmed is closed once the content cache has been filled at start-up (or
// the Sync closed first): from then on, every file the cache could hold
// has its old text for [Sync.CallDiffs].
func (s *Sync) Warmed() <-chan struct{} { return s.warmed }

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
