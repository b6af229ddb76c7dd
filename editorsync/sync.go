package editorsync

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/coding-agent/coding-agent/sandbox/fspath"
)

// Defaults for [Options].
const (
	// DefaultQuiet is how long a burst must be quiet before its batch is
	// delivered.
	DefaultQuiet = 20 * time.Millisecond
	// DefaultMaxDelay caps how long after the first event of a burst its
	// batch is delivered, however busy the burst stays.
	DefaultMaxDelay = 50 * time.Millisecond
	// DefaultGrace is how long after [Sync.EndCall] changes are still
	// attributed to the call that ended: its last writes may still be in
	// the kernel's queue when it ends.
	DefaultGrace = 100 * time.Millisecond
	// DefaultMaxWatches is the number of directories of the session roots
	// one Sync watches at most (one inotify watch each).
	DefaultMaxWatches = 8192
	// HashLimit is the largest file whose SHA-256 is computed for a
	// [Change].
	HashLimit = 4 << 20
	// writeExpiry is how long a [Sync.RecordWrite] waits to be matched.
	writeExpiry = 10 * time.Second
)

// DefaultIgnore are the names of directories that are never watched nor
// reported, in addition to [Options.Ignore].
var DefaultIgnore = []string{".git", "node_modules"}

// Kind is what happened to a path during one burst.
type Kind string

// Kinds of change.
const (
	Created  Kind = "created"
	Modified Kind = "modified"
	Deleted  Kind = "deleted"
)

// Origin names the tool call that caused a change.
type Origin struct {
	ToolCallID string
	Tool       string
}

// Change is one entry of a batch: what happened to one path during one
// burst.
type Change struct {
	// Path is absolute, with symlinks in the session roots resolved.
	Path string
	// URI is the URI of the open document at Path, exactly as the editor
	// sent it, or else the file:// URI of Path.
	URI  string
	Kind Kind
	// Origin is the tool call the change is attributed to; nil means
	// external.
	Origin *Origin
	// Open reports whether Path is an open document.
	Open bool
	// SHA256 is the hex SHA-256 of the file's content after the burst, for
	// regular files of at most HashLimit bytes; empty otherwise.
	SHA256 string
}

// Options configure a [Sync].
type Options struct {
	// Roots are absolute directories watched recursively.
	Roots []string
	// Ignore are names of directories (and files) never watched nor
	// reported, in addition to DefaultIgnore.
	Ignore []string
	// Window is the quiet period that ends a burst; 0 means DefaultQuiet.
	Window time.Duration
	// MaxDelay caps the time from the first event of a burst to its
	// delivery; 0 means DefaultMaxDelay. When it is below Window, every
	// burst ends MaxDelay after its first event.
	MaxDelay time.Duration
	// Grace is how long after EndCall changes are still attributed to the
	// call; 0 means DefaultGrace, a negative value means none.
	Grace time.Duration
	// MaxWatches limits the directories watched under Roots; 0 means
	// DefaultMaxWatches. Directories of open documents are watched even
	// beyond it.
	MaxWatches int
	// OnChange receives each batch. Calls are sequential, from one
	// goroutine owned by the Sync, in the order the bursts ended. While it
	// runs, the next batches wait (back-pressure; events keep being read
	// and coalesced up to a queue of 16 batches). It must not call
	// [Sync.Close]. Nil discards batches.
	OnChange func([]Change)
	// Logger receives warnings (watch limit reached, event queue overflow)
	// and debug diagnostics; nil discards them.
	Logger *slog.Logger
	// CacheBytes bounds the cache of file contents used for bash diffs;
	// 0 means 16 MiB.
	CacheBytes int64
}

// Status describes the health of the watcher.
type Status struct {
	// Watches is the number of directories watched.
	Watches int
	// LimitHit reports that some directories are not watched because
	// Options.MaxWatches or the system's inotify limit was reached.
	LimitHit bool
	// Unwatched counts the directories that could not be watched.
	Unwatched int
	// Err, when not empty, says why watching is not working at all.
	Err string
}

// Sync is the editor sync state of one session: open documents, a watcher
// of the session roots and of the directories of open documents, and the
// attribution of changes to tool calls. Its methods are safe for concurrent
// use. Call Close when the session ends.
type Sync struct {
	docs       *Documents
	log        *slog.Logger
	onChange   func([]Change)
	quiet      time.Duration
	maxDelay   time.Duration
	grace      time.Duration
	maxWatches int
	ignore     map[string]bool
	roots      []string
	fw         *fsnotify.Watcher // nil when watching could not start
	cache      *contentCache

	quit      chan struct{}
	batches   chan []Change
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
	// npending is the number of paths in the burst in progress.
	npending atomic.Int64

	// mu guards the watch state below. Lock order: mu, then callMu, then
	// Documents.mu.
	mu sync.Mutex
	// entries lists, for each watched directory, the names in it and
	// whether each is a directory: "existed before" for kind resolution.
	entries   map[string]map[string]bool
	dirs      map[string]*dirWatch
	status    Status
	warnedCap bool

	// callMu guards the attribution state below.
	callMu  sync.Mutex
	running []Origin
	ended   Origin
	endedAt time.Time
	writes  map[string]recordedWrite
	tracks  map[string]*callTrack // calls whose diffs are recorded

	warmed chan struct{} // closed when warmCache is done

	// barrierDir is a private watched directory: a file created there is
	// a marker in the one inotify queue, so when the loop reads it, every
	// event queued before it has been read (see [Sync.Barrier]). Empty
	// when it could not be set up.
	barrierDir string
	// barrierMu guards the fields below.
	barrierMu   sync.Mutex
	barrierSeq  int
	barrierWait map[string]chan struct{}
}

type dirWatch struct {
	tree    bool // part of a root's tree: every change in it is reported
	docs    int  // open documents in it
	watched bool // an fsnotify watch is set
}

type recordedWrite struct {
	sum    string
	origin Origin
	at     time.Time
}

type pending struct {
	origin *Origin
	// last is when the path's latest event of the burst was read.
	last time.Time
	// carried marks a path already carried over once from a capped burst;
	// it is not carried again, so a busy new file is still reported.
	carried bool
}

// New starts the sync state of a session: it watches opts.Roots and starts
// delivering batches to opts.OnChange. An error means a root is not an
// absolute directory. Running out of inotify watches or instances is not an
// error: it is logged, reported by Status, and what could be watched is.
func New(opts Options) (*Sync, error) {
	s := &Sync{
		docs:       NewDocuments(),
		log:        opts.Logger,
		onChange:   opts.OnChange,
		quiet:      opts.Window,
		maxDelay:   opts.MaxDelay,
		grace:      opts.Grace,
		maxWatches: opts.MaxWatches,
		ignore:     map[string]bool{},
		quit:       make(chan struct{}),
		batches:    make(chan []Change, 16),
		entries:    map[string]map[string]bool{},
		dirs:       map[string]*dirWatch{},
		writes:     map[string]recordedWrite{},
		tracks:     map[string]*callTrack{},
		warmed:     make(chan struct{}),
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.quiet <= 0 {
		s.quiet = DefaultQuiet
	}
	if s.maxDelay <= 0 {
		s.maxDelay = DefaultMaxDelay
	}
	if s.grace == 0 {
		s.grace = DefaultGrace
	}
	if s.maxWatches <= 0 {
		s.maxWatches = DefaultMaxWatches
	}
	s.cache = newContentCache(opts.CacheBytes)
	for _, n := range DefaultIgnore {
		s.ignore[n] = true
	}
	for _, n := range opts.Ignore {
		s.ignore[n] = true
	}
	for i, r := range opts.Roots {
		if !filepath.IsAbs(r) {
			return nil, fmt.Errorf("roots[%d]: %q is not an absolute path", i, r)
		}
		fi, err := os.Stat(r)
		if err != nil {
			return nil, fmt.Errorf("roots[%d]: %w", i, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("roots[%d]: %q is not a directory", i, r)
		}
		s.roots = append(s.roots, fspath.CanonicalOr(r))
	}
	s.docs.watch = s.watchDoc
	s.docs.unwatch = s.unwatchDoc

	fw, err := fsnotify.NewWatcher()
	if err != nil {
		// Typically EMFILE: the user's inotify instances are used up.
		s.status.Err = fmt.Sprintf("starting the file watcher: %v", err)
		close(s.warmed)
		s.log.Warn("editorsync: file changes will not be reported", "error", err)
	} else {
		s.fw = fw
		s.mu.Lock()
		for _, r := range s.roots {
			s.addTreeLocked(r, nil, nil)
		}
		s.mu.Unlock()
		s.startBarrier()
		s.wg.Add(2)
		go s.loop()
		go s.warmCache()
	}
	s.wg.Add(1)
	go s.deliver()
	return s, nil
}

// Documents returns the session's open documents.
func (s *Sync) Documents() *Documents { return s.docs }

// Unsaved reports whether the editor holds unsaved changes to the file at
// the absolute path; see [Documents.Unsaved].
func (s *Sync) Unsaved(path string) bool { return s.docs.Unsaved(path) }

// Status returns the health of the watcher.
func (s *Sync) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// Close stops watching, delivers the batch of the burst in progress, waits
// for OnChange to return, and releases the watcher. It is safe to call more
// than once.
func (s *Sync) Close() error {
	s.closeOnce.Do(func() {
		close(s.quit)
		if s.fw == nil {
			close(s.batches)
		}
		s.wg.Wait()
		if s.fw != nil {
			s.closeErr = s.fw.Close()
		}
		if s.barrierDir != "" {
			os.RemoveAll(s.barrierDir)
		}
	})
	return s.closeErr
}

// startBarrier creates and watches the barrier directory.
func (s *Sync) startBarrier() {
	dir, err := os.MkdirTemp("", "coding-agent-sync-")
	if err == nil {
		err = s.fw.Add(dir)
	}
	if err != nil {
		s.log.Warn("editorsync: no barrier; changes right after a tool call may be misattributed", "error", err)
		if dir != "" {
			os.RemoveAll(dir)
		}
		return
	}
	s.barrierDir = dir
	s.barrierWait = map[string]chan struct{}{}
}

// Barrier returns once the watcher has read every event the kernel queued
// before the call, so that ending a tool call right after Barrier
// attributes exactly the changes the call made: no grace period needed. It
// gives up after a second or when ctx ends, and returns at once when no
// barrier could be set up.
func (s *Sync) Barrier(ctx context.Context) {
	if s.barrierDir == "" {
		return
	}
	s.barrierMu.Lock()
	s.barrierSeq++
	name := filepath.Join(s.barrierDir, strconv.Itoa(s.barrierSeq))
	ch := make(chan struct{})
	s.barrierWait[name] = ch
	s.barrierMu.Unlock()
	defer func() {
		s.barrierMu.Lock()
		delete(s.barrierWait, name)
		s.barrierMu.Unlock()
		os.Remove(name)
	}()
	f, err := os.Create(name)
	if err != nil {
		return
	}
	f.Close()
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
		s.log.Debug("editorsync: barrier timed out")
	case <-ctx.Done():
	case <-s.quit:
	}
}

// passBarrier handles an event in the barrier directory.
func (s *Sync) passBarrier(ev fsnotify.Event) {
	if !ev.Has(fsnotify.Create) {
		return
	}
	s.barrierMu.Lock()
	defer s.barrierMu.Unlock()
	if ch, ok := s.barrierWait[ev.Name]; ok {
		close(ch)
		delete(s.barrierWait, ev.Name)
	}
}

// BeginCall marks the start of a tool call. Changes observed while it runs
// are attributed to it. Calls may overlap: changes are attributed to the
// most recently begun call that is still running.
func (s *Sync) BeginCall(callID, tool string) {
	s.callMu.Lock()
	defer s.callMu.Unlock()
	s.running = append(s.running, Origin{ToolCallID: callID, Tool: tool})
}

// EndCall marks the end of a tool call. Changes observed within
// Options.Grace after it, while no other call runs, are still attributed to
// it: a command's last writes can still be queued in the kernel when it
// returns. The flip side, documented: an external change within that grace
// is attributed to the call too.
func (s *Sync) EndCall(callID string) {
	s.callMu.Lock()
	defer s.callMu.Unlock()
	for i := len(s.running) - 1; i >= 0; i-- {
		if s.running[i].ToolCallID == callID {
			s.ended = s.running[i]
			s.endedAt = time.Now()
			s.running = slices.Delete(s.running, i, i+1)
			return
		}
	}
}

// FinishCall ends a tool call like [Sync.EndCall] but without the grace:
// for calls whose own writes are all announced with [Sync.RecordWrite]
// (edit, write), so that an external change right after them is never
// attributed to them.
func (s *Sync) FinishCall(callID string) {
	s.callMu.Lock()
	defer s.callMu.Unlock()
	for i := len(s.running) - 1; i >= 0; i-- {
		if s.running[i].ToolCallID == callID {
			s.running = slices.Delete(s.running, i, i+1)
			return
		}
	}
}

// RecordWrite tells the Sync that a tool call is about to write content
// whose hex SHA-256 is sum to path. A change of path whose resulting content
// has that hash is attributed to the call, even when it is observed after
// EndCall. Call it before the file is renamed into place; a record is
// matched once and expires after ten seconds.
func (s *Sync) RecordWrite(path, sum, callID, tool string) {
	path = fspath.CanonicalOr(path)
	s.callMu.Lock()
	defer s.callMu.Unlock()
	s.writes[path] = recordedWrite{sum: sum, origin: Origin{ToolCallID: callID, Tool: tool}, at: time.Now()}
}

func (s *Sync) originAt(t time.Time) *Origin {
	s.callMu.Lock()
	defer s.callMu.Unlock()
	if n := len(s.running); n > 0 {
		o := s.running[n-1]
		return &o
	}
	if !s.endedAt.IsZero() && s.grace > 0 && t.Sub(s.endedAt) <= s.grace {
		o := s.ended
		return &o
	}
	return nil
}

// loop reads raw events, collects them per path and flushes a burst when
// it has been quiet for s.quiet or s.maxDelay after its first event.
func (s *Sync) loop() {
	defer s.wg.Done()
	defer close(s.batches)
	pend := map[string]*pending{}
	var first time.Time
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	flush := func() {
		timer.Stop()
		s.flush(pend)
		pend = map[string]*pending{}
		first = time.Time{}
		s.npending.Store(0)
	}
	// capFlush ends a burst that is still busy at the cap. A path created
	// during the burst and still active (a temp file about to be renamed
	// into place) is carried into the next burst rather than reported: it
	// will most likely be gone by then, and a temp file must not show up
	// as created and then deleted.
	capFlush := func(now time.Time) {
		carry := map[string]*pending{}
		s.mu.Lock()
		for path, p := range pend {
			dir, name := filepath.Split(path)
			if _, before := s.entries[filepath.Clean(dir)][name]; !before && !p.carried && now.Sub(p.last) < s.quiet {
				p.carried = true
				carry[path] = p
				delete(pend, path)
			}
		}
		s.mu.Unlock()
		flush()
		if len(carry) > 0 {
			pend = carry
			first = now
			s.npending.Store(int64(len(pend)))
			timer.Reset(s.quiet)
		}
	}
	for {
		select {
		case ev, ok := <-s.fw.Events:
			if !ok {
				flush()
				return
			}
			if ev.Op == fsnotify.Chmod {
				continue // attributes only (touch, chmod): the content is the same
			}
			if s.barrierDir != "" && filepath.Dir(ev.Name) == s.barrierDir {
				if ev.Has(fsnotify.Create) {
					// A tool call is ending: what it changed is complete,
					// so its burst ends here (and its diffs can be made).
					flush()
				}
				s.passBarrier(ev)
				continue
			}
			if s.ignore[filepath.Base(ev.Name)] {
				continue
			}
			now := time.Now()
			p := pend[ev.Name]
			if p == nil {
				p = &pending{}
				pend[ev.Name] = p
			}
			if p.origin == nil {
				p.origin = s.originAt(now)
			}
			p.last = now
			if first.IsZero() {
				first = now
			}
			s.npending.Store(int64(len(pend)))
			// Check the cap here rather than only through the timer: a
			// Reset discards a timer that fired but was not received yet, so
			// a steady stream of events must not keep postponing the flush.
			rem := first.Add(s.maxDelay).Sub(now)
			if rem <= 0 {
				capFlush(now)
				continue
			}
			timer.Reset(min(s.quiet, rem))
		case err, ok := <-s.fw.Errors:
			if !ok {
				flush()
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// The kernel dropped events. Compare the directory
				// listings with what we know, so creations and deletions
				// are still reported; modifications in the gap are lost.
				s.log.Warn("editorsync: the kernel's event queue overflowed; rescanning the watched directories", "error", err)
				s.rescan(pend)
				if first.IsZero() {
					first = time.Now()
				}
				timer.Reset(0)
				continue
			}
			s.log.Warn("editorsync: watcher error", "error", err)
		case <-timer.C:
			// Quiet (nothing is carried then) or at the cap.
			capFlush(time.Now())
		case <-s.quit:
			flush()
			return
		}
	}
}

// deliver runs OnChange for each batch, sequentially.
func (s *Sync) deliver() {
	defer s.wg.Done()
	for b := range s.batches {
		if s.onChange != nil && len(b) > 0 {
			s.onChange(b)
		}
	}
}

// flush resolves one burst into changes and queues them for delivery.
func (s *Sync) flush(pend map[string]*pending) {
	if len(pend) == 0 {
		return
	}
	paths := make([]string, 0, len(pend))
	for p := range pend {
		paths = append(paths, p)
	}
	// Shorter paths first, so a new directory is seen before its files.
	slices.Sort(paths)
	var out []Change
	seen := map[string]bool{}
	s.mu.Lock()
	for _, p := range paths {
		if !seen[p] {
			s.resolveLocked(p, pend[p].origin, &out, seen)
		}
	}
	s.mu.Unlock()
	now := time.Now()
	s.recordOld(out)
	for i := range out {
		c := &out[i]
		if c.Kind != Deleted {
			c.SHA256 = s.hashAndCache(c.Path)
		} else {
			s.cache.drop(c.Path)
		}
		if c.Open {
			s.docs.diskChanged(c.Path)
		}
	}
	s.callMu.Lock()
	for i := range out {
		c := &out[i]
		if w, ok := s.writes[c.Path]; ok && c.SHA256 != "" && w.sum == c.SHA256 {
			o := w.origin
			c.Origin = &o
			delete(s.writes, c.Path)
		}
	}
	for p, w := range s.writes {
		if now.Sub(w.at) > writeExpiry {
			delete(s.writes, p)
		}
	}
	s.callMu.Unlock()
	slices.SortFunc(out, func(a, b Change) int {
		switch {
		case a.Path < b.Path:
			return -1
		case a.Path > b.Path:
			return 1
		}
		return 0
	})
	if len(out) > 0 {
		s.batches <- out
	}
}

// resolveLocked decides what happened to path during the burst by comparing
// what we knew (entries) with what is there now, and appends the result.
func (s *Sync) resolveLocked(path string, origin *Origin, out *[]Change, seen map[string]bool) {
	seen[path] = true
	dir, name := filepath.Split(path)
	dir = filepath.Clean(dir)
	parent := s.entries[dir]
	wasDir, before := parent[name]
	fi, err := os.Lstat(path)
	exists := err == nil
	if exists && fi.IsDir() {
		if before && wasDir {
			return // a directory's listing changed: its entries report for themselves
		}
		if before {
			s.emitLocked(out, path, Deleted, origin) // a file replaced by a directory
		}
		if parent != nil {
			parent[name] = true
		}
		if dw := s.dirs[dir]; dw != nil && dw.tree && !s.ignore[name] {
			s.addTreeLocked(path, origin, out)
		}
		return
	}
	if before && wasDir {
		s.dropTreeLocked(path, origin, out, seen)
		before = false
	} else if !before && s.dirs[path] != nil {
		// A watched directory itself (a root, or the directory of an open
		// document) is gone.
		s.dropTreeLocked(path, origin, out, seen)
	}
	if parent == nil {
		return
	}
	switch {
	case before && exists:
		s.emitLocked(out, path, Modified, origin)
	case !before && exists:
		parent[name] = false
		s.emitLocked(out, path, Created, origin)
	case before && !exists:
		delete(parent, name)
		s.emitLocked(out, path, Deleted, origin)
	}
}

// emitLocked appends a change for path if it is to be reported: it lies in
// a root's tree, or it is an open document.
func (s *Sync) emitLocked(out *[]Change, path string, kind Kind, origin *Origin) {
	uri, open := s.docs.isOpen(path)
	if dw := s.dirs[filepath.Dir(path)]; !open && (dw == nil || !dw.tree) {
		return
	}
	if !open {
		uri = PathToURI(path)
	}
	var o *Origin
	if origin != nil {
		c := *origin
		o = &c
	}
	*out = append(*out, Change{Path: path, URI: uri, Kind: kind, Origin: o, Open: open})
}

// addTreeLocked watches root and the directories below it, breadth first
// so that the limit, when reached, leaves the deepest directories out. With
// out non-nil, files not known before are reported as created.
func (s *Sync) addTreeLocked(root string, origin *Origin, out *[]Change) {
	queue := []string{root}
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		if !s.watchDirLocked(dir, true) {
			continue
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			s.log.Debug("editorsync: listing a watched directory", "dir", dir, "error", err)
			continue
		}
		m := s.entries[dir]
		if m == nil {
			m = make(map[string]bool, len(ents))
			s.entries[dir] = m
		}
		for _, e := range ents {
			name := e.Name()
			if s.ignore[name] {
				continue
			}
			_, had := m[name]
			m[name] = e.IsDir()
			child := filepath.Join(dir, name)
			if e.IsDir() {
				queue = append(queue, child)
			} else if !had && out != nil {
				s.emitLocked(out, child, Created, origin)
			}
		}
	}
}

// dropTreeLocked forgets dir and everything known below it, reporting the
// files as deleted.
func (s *Sync) dropTreeLocked(dir string, origin *Origin, out *[]Change, seen map[string]bool) {
	for name, isDir := range s.entries[dir] {
		child := filepath.Join(dir, name)
		if isDir {
			s.dropTreeLocked(child, origin, out, seen)
			continue
		}
		if !seen[child] {
			seen[child] = true
			s.emitLocked(out, child, Deleted, origin)
		}
	}
	delete(s.entries, dir)
	if dw := s.dirs[dir]; dw != nil {
		if dw.watched {
			// The kernel drops the watch of a deleted directory by itself;
			// a directory moved away keeps it, so remove it by name.
			_ = s.fw.Remove(dir)
			s.status.Watches--
		}
		delete(s.dirs, dir)
	}
	if parent := s.entries[filepath.Dir(dir)]; parent != nil {
		delete(parent, filepath.Base(dir))
	}
}

// watchDirLocked sets a watch on dir. tree marks dir as part of a root's
// tree, which counts against MaxWatches.
func (s *Sync) watchDirLocked(dir string, tree bool) bool {
	if dw := s.dirs[dir]; dw != nil {
		dw.tree = dw.tree || tree
		return dw.watched
	}
	if s.fw == nil {
		return false
	}
	if tree && s.status.Watches >= s.maxWatches {
		s.limitLocked(dir, fmt.Errorf("Options.MaxWatches (%d) reached", s.maxWatches))
		return false
	}
	if err := s.fw.Add(dir); err != nil {
		if errors.Is(err, syscall.ENOSPC) {
			s.limitLocked(dir, fmt.Errorf("the system's inotify watch limit (fs.inotify.max_user_watches) is reached: %w", err))
		} else {
			s.log.Debug("editorsync: watching a directory", "dir", dir, "error", err)
		}
		return false
	}
	s.status.Watches++
	s.dirs[dir] = &dirWatch{tree: tree, watched: true}
	return true
}

func (s *Sync) limitLocked(dir string, err error) {
	s.status.LimitHit = true
	s.status.Unwatched++
	if !s.warnedCap {
		s.warnedCap = true
		s.log.Warn("editorsync: some directories are not watched; changes in them will not be reported", "first", dir, "error", err)
	}
}

// watchDoc watches the directory of a document that was just opened.
func (s *Sync) watchDoc(path string) {
	// The file's text on disk is the "before" of its next change: keep it
	// so that a command that changes an open document has its diff.
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Size() <= DefaultMaxFileBytes {
		s.readText(path, keyOf(fi), DefaultMaxFileBytes)
	}
	dir := filepath.Dir(fspath.CanonicalOr(path))
	s.mu.Lock()
	defer s.mu.Unlock()
	if dw := s.dirs[dir]; dw != nil {
		dw.docs++
		return
	}
	if !s.watchDirLocked(dir, false) {
		s.dirs[dir] = &dirWatch{docs: 1}
		return
	}
	s.dirs[dir].docs = 1
	m := map[string]bool{}
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents {
			if !s.ignore[e.Name()] {
				m[e.Name()] = e.IsDir()
			}
		}
	}
	s.entries[dir] = m
}

// unwatchDoc drops the watch of a closed document's directory when nothing
// else needs it.
func (s *Sync) unwatchDoc(path string) {
	dir := filepath.Dir(fspath.CanonicalOr(path))
	s.mu.Lock()
	defer s.mu.Unlock()
	dw := s.dirs[dir]
	if dw == nil {
		return
	}
	dw.docs--
	if dw.docs > 0 || dw.tree {
		return
	}
	if dw.watched {
		_ = s.fw.Remove(dir)
		s.status.Watches--
		delete(s.entries, dir)
	}
	delete(s.dirs, dir)
}

// rescan compares every watched directory's listing with what is known and
// adds the differences to pend.
func (s *Sync) rescan(pend map[string]*pending) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for dir := range s.dirs {
		ents, err := os.ReadDir(dir)
		if err != nil {
			pend[dir] = &pending{}
			continue
		}
		known := s.entries[dir]
		now := map[string]bool{}
		for _, e := range ents {
			if s.ignore[e.Name()] {
				continue
			}
			now[e.Name()] = true
			if _, ok := known[e.Name()]; !ok {
				pend[filepath.Join(dir, e.Name())] = &pending{}
			}
		}
		for name := range known {
			if !now[name] {
				pend[filepath.Join(dir, name)] = &pending{}
			}
		}
	}
}

// hashAndCache returns the hex SHA-256 of a regular file of at most
// HashLimit bytes, and keeps small text files in the content cache.
func (s *Sync) hashAndCache(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > HashLimit {
		return ""
	}
	if fi.Size() <= DefaultMaxFileBytes {
		b, err := io.ReadAll(io.LimitReader(f, DefaultMaxFileBytes+1))
		if err != nil || int64(len(b)) > DefaultMaxFileBytes {
			return ""
		}
		sum := sha256.Sum256(b)
		if isText(b) && int64(len(b)) == fi.Size() {
			s.cache.put(path, keyOf(fi), string(b))
		}
		return hex.EncodeToString(sum[:])
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}
