package tools

import (
	"context"
	"sync"
)

// MutationQueue serializes mutations per canonical path, first come first
// served. Tools that may touch the same files must share one queue.
//
// The zero value is not usable; call [NewMutationQueue].
type MutationQueue struct {
	mu    sync.Mutex
	paths map[string]*pathLine

	// onWait, if set (by tests), is called after a caller joined the
	// waiters of path.
	onWait func(path string)
}

// pathLine is the queue of one path: whether a holder runs, and who waits.
// It is deleted from the map as soon as nobody holds or waits, so the map
// only grows with the number of paths in use at the same moment.
type pathLine struct {
	held    bool
	waiters []*waiter
}

type waiter struct {
	ready   chan struct{}
	granted bool // set under MutationQueue.mu before ready is closed
}

// NewMutationQueue returns an empty queue.
func NewMutationQueue() *MutationQueue {
	return &MutationQueue{paths: make(map[string]*pathLine)}
}

// Acquire waits until the caller holds path, in FIFO order with the other
// callers of the same path. The path should be canonical (see
// [CanonicalPath]) so that aliases share one line.
//
// If ctx is done before the path is granted, Acquire returns ctx's error at
// once and the caller never holds the path. Otherwise the caller must call
// release exactly once when done; later calls of release do nothing.
func (q *MutationQueue) Acquire(ctx context.Context, path string) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q.mu.Lock()
	line := q.paths[path]
	if line == nil {
		line = &pathLine{}
		q.paths[path] = line
	}
	if !line.held && len(line.waiters) == 0 {
		line.held = true
		q.mu.Unlock()
		return q.releaser(path, line), nil
	}
	w := &waiter{ready: make(chan struct{})}
	line.waiters = append(line.waiters, w)
	q.mu.Unlock()
	if q.onWait != nil {
		q.onWait(path)
	}

	select {
	case <-w.ready:
		return q.releaser(path, line), nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	if w.granted {
		// Granted at the same moment ctx was cancelled: the slot is ours,
		// so hand it on to the next waiter instead of running.
		q.mu.Unlock()
		q.releaser(path, line)()
		return nil, ctx.Err()
	}
	for i, x := range line.waiters {
		if x == w {
			line.waiters = append(line.waiters[:i], line.waiters[i+1:]...)
			break
		}
	}
	q.mu.Unlock()
	return nil, ctx.Err()
}

// releaser returns the function that passes path on; see passOn.
func (q *MutationQueue) releaser(path string, line *pathLine) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			q.mu.Lock()
			defer q.mu.Unlock()
			q.passOn(path, line)
		})
	}
}

// passOn hands path to the next waiter, or frees the line when nobody
// waits. q.mu must be held.
func (q *MutationQueue) passOn(path string, line *pathLine) {
	if len(line.waiters) > 0 {
		next := line.waiters[0]
		line.waiters[0] = nil
		line.waiters = line.waiters[1:]
		next.granted = true
		close(next.ready)
		return
	}
	line.held = false
	delete(q.paths, path)
}

// pending reports how many paths have a holder or waiters; for tests.
func (q *MutationQueue) pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.paths)
}
