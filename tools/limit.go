package tools

import (
	"context"
	"fmt"
	"sync"
)

// DefaultMaxCommands is the cap on concurrent bash commands that
// [NewCommandLimit] gives for n <= 0. Each running command holds a few
// descriptors in the agent (its output pipe, and for a sandboxed one the
// helper's socket and pidfd); the cap keeps a burst of commands far from
// the process's descriptor limit.
const DefaultMaxCommands = 256

// CommandLimit caps the bash commands that run at once, across every tool
// that shares it (one per process: session.Env holds one). A command over
// the cap waits for a slot before anything of it is set up, and leaves the
// queue at once, having started nothing, when its context is done.
type CommandLimit struct {
	slots chan struct{}

	mu      sync.Mutex
	waiting int
}

// NewCommandLimit returns a limit of n concurrent commands
// (DefaultMaxCommands for n <= 0).
func NewCommandLimit(n int) *CommandLimit {
	if n <= 0 {
		n = DefaultMaxCommands
	}
	return &CommandLimit{slots: make(chan struct{}, n)}
}

// Max is the number of commands that may run at once.
func (l *CommandLimit) Max() int { return cap(l.slots) }

// acquire waits for a slot; a nil limit has no cap.
func (l *CommandLimit) acquire(ctx context.Context) (release func(), err error) {
	if l == nil {
		return func() {}, nil
	}
	select {
	case l.slots <- struct{}{}:
		return l.release, nil
	default:
	}
	l.mu.Lock()
	l.waiting++
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.waiting--
		l.mu.Unlock()
	}()
	select {
	case l.slots <- struct{}{}:
		return l.release, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("bash: cancelled while waiting for one of the %d command slots (that many commands were running); "+
			"the command did not run: %w", cap(l.slots), ctx.Err())
	}
}

func (l *CommandLimit) release() { <-l.slots }

// queued is the number of commands waiting for a slot.
func (l *CommandLimit) queued() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waiting
}
