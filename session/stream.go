package session

import (
	"context"
	"sync"
)

// One event stream per session, several subscribers (issue 10 #6).
//
// Every event of a session goes, in order, to:
//   - the handler of the host that created the session (Options.OnEvent),
//     called synchronously: the ACP adapter writes each event to its
//     client before the operation goes on, so that a client reads the
//     updates of a turn before its answer;
//   - every subscriber ([Session.Subscribe]) and every later opener that
//     attached to the open session ([Env.OpenSession]), each through a
//     queue of its own, delivered by a goroutine of its own.
//
// A queue holds at most maxQueueEvents events and maxQueueBytes of their
// content (one larger event is still taken when the queue is empty). When
// an event does not fit, the subscriber is behind: the events it has not
// read yet are dropped, and before the next one it gets a *Lagged naming
// how many it missed, so it can rebuild its view from [Session.History].
// So a slow subscriber never blocks the agent loop, and it never holds
// more than a bounded amount of memory.

const (
	maxQueueEvents = 1024
	maxQueueBytes  = 32 << 20
)

// sink is one receiver of a session's events.
type sink struct {
	fn func(Event)
	// direct sinks are called by the publisher; the others through their
	// queue.
	direct bool

	mu      sync.Mutex
	queue   []Event
	bytes   int
	missed  int
	flushes []chan struct{}
	stopped bool

	wake chan struct{} // capacity 1
	stop chan struct{}
	done chan struct{}
}

func directSink(fn func(Event)) *sink { return &sink{fn: fn, direct: true} }

// queuedSink starts the goroutine that delivers a queue to fn; stopSink
// stops and joins it.
func queuedSink(fn func(Event)) *sink {
	k := &sink{fn: fn, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go k.run()
	return k
}

// push queues ev without blocking; when it does not fit, what was queued
// is dropped (see above).
func (k *sink) push(ev Event) {
	n := eventSize(ev)
	k.mu.Lock()
	if k.stopped {
		k.mu.Unlock()
		return
	}
	if len(k.queue) > 0 && (len(k.queue) >= maxQueueEvents || k.bytes+n > maxQueueBytes) {
		k.missed += len(k.queue)
		clear(k.queue)
		k.queue, k.bytes = k.queue[:0], 0
	}
	k.queue = append(k.queue, ev)
	k.bytes += n
	k.mu.Unlock()
	k.signal()
}

func (k *sink) signal() {
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

func (k *sink) run() {
	defer close(k.done)
	for {
		select {
		case <-k.wake:
		case <-k.stop:
			return
		}
		for {
			k.mu.Lock()
			batch, missed, flushes := k.queue, k.missed, k.flushes
			k.queue, k.bytes, k.missed, k.flushes = nil, 0, 0, nil
			k.mu.Unlock()
			if len(batch) == 0 && missed == 0 && len(flushes) == 0 {
				break
			}
			if missed > 0 {
				k.fn(&Lagged{Missed: missed})
			}
			for _, ev := range batch {
				select {
				case <-k.stop:
					return
				default:
				}
				k.fn(ev)
			}
			for _, f := range flushes {
				close(f)
			}
		}
	}
}

// flush waits until every event queued before the call has been
// delivered (or dropped), or ctx ends.
func (k *sink) flush(ctx context.Context) {
	if k == nil || k.direct {
		return
	}
	f := make(chan struct{})
	k.mu.Lock()
	if k.stopped {
		k.mu.Unlock()
		return
	}
	k.flushes = append(k.flushes, f)
	k.mu.Unlock()
	k.signal()
	select {
	case <-f:
	case <-k.done:
	case <-ctx.Done():
	}
}

// close stops a queued sink and waits for its goroutine: fn is not called
// after it returns. Events still queued are dropped.
func (k *sink) close() {
	if k == nil || k.direct {
		return
	}
	k.mu.Lock()
	if k.stopped {
		k.mu.Unlock()
		<-k.done
		return
	}
	k.stopped = true
	k.queue = nil
	k.mu.Unlock()
	close(k.stop)
	<-k.done
}

// eventSize estimates the memory an event holds, for the queue's bound.
func eventSize(ev Event) int {
	n := 64
	switch ev := ev.(type) {
	case *UserMessage:
		n += len(ev.Content.Text) + len(ev.Content.Data)
		if r := ev.Content.Resource; r != nil {
			if r.Text != nil {
				n += len(*r.Text)
			}
			if r.Blob != nil {
				n += len(*r.Blob)
			}
		}
	case *MessageChunk:
		n += len(ev.Text)
	case *ThoughtChunk:
		n += len(ev.Text)
	case *ToolCallStarted:
		n += len(ev.Title) + len(ev.Input)
	case *ToolCallUpdated:
		n += len(ev.Title)
		if ev.Progress != nil {
			n += len(ev.Progress.Tail)
		}
	case *ToolCallFinished:
		n += len(ev.Input) + len(ev.Details)
		for _, t := range ev.Text {
			n += len(t)
		}
		for _, d := range ev.Diffs {
			n += len(d.NewText)
			if d.OldText != nil {
				n += len(*d.OldText)
			}
		}
	}
	return n
}

// publish gives ev to every sink of the session, recording it in the
// journal first when record is set. The journal and the queues are
// updated under one lock, so that an opener attaching sees each event
// exactly once: in the journal it replays, or in its queue.
func (s *Session) publish(ev Event, record bool) {
	cleanTitles(ev)
	s.pubMu.Lock()
	if record {
		rec := ev
		if u, ok := ev.(*ToolCallUpdated); ok && u.Input != nil {
			// The partial arguments of a streaming call are for clients
			// watching it live; a replay has the final ones, once.
			c := *u
			c.Input = nil
			rec = &c
		}
		s.journal.appendUpdate(s.id, wireUpdate(rec))
	}
	sinks := s.sinks
	for _, k := range sinks {
		if !k.direct {
			k.push(ev)
		}
	}
	s.pubMu.Unlock()
	for _, k := range sinks {
		if k.direct {
			k.fn(ev)
		}
	}
}

// addSink and removeSink change the sinks; the slice is replaced, never
// changed in place, so publish may use it outside the lock.
// addSink reports false when the session is closed.
func (s *Session) addSink(k *sink) bool {
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return false
	}
	s.sinks = append(s.sinks[:len(s.sinks):len(s.sinks)], k)
	return true
}

// closeSinks ends every sink; the session is closed.
func (s *Session) closeSinks() {
	s.pubMu.Lock()
	sinks := s.sinks
	s.sinks = nil
	s.pubMu.Unlock()
	for _, k := range sinks {
		k.close()
	}
}

func (s *Session) removeSink(k *sink) {
	if k == nil {
		return
	}
	s.pubMu.Lock()
	var kept []*sink
	for _, x := range s.sinks {
		if x != k {
			kept = append(kept, x)
		}
	}
	s.sinks = kept
	s.pubMu.Unlock()
	k.close()
}

// Subscribe has fn receive the session's events from now on, in order,
// from a goroutine of its own, through a bounded queue: a subscriber that
// falls behind misses events and gets a *Lagged before the next one (see
// the package's notes on the event stream). The returned function ends
// the subscription and waits until fn has returned for the last time;
// closing the session ends it too.
func (s *Session) Subscribe(fn func(Event)) (unsubscribe func()) {
	k := queuedSink(fn)
	if !s.addSink(k) {
		k.close()
		return func() {}
	}
	return func() { s.removeSink(k) }
}
