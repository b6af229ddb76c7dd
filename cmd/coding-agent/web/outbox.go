package web

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/coding-agent/coding-agent/rpc"
)

// A tab's live updates go through an outbox of its own, so that one tab
// that stops reading (a frozen page, a suspended laptop lid on a remote
// browser) never holds up the session or the other tabs: the agent's
// writes are synchronous, and a WebSocket that is not read blocks them. A
// tab that falls behind by more than the bounds below is disconnected; on
// reload it gets the history replayed.
const (
	maxOutboxItems = 8192
	maxOutboxBytes = 32 << 20
)

type outItem struct {
	update  *rpc.SessionNotification
	files   *rpc.FilesChangedNotification
	size    int
	flushed chan struct{} // a flush barrier when set
}

type outbox struct {
	client  rpc.Client
	overrun func() // disconnects the tab

	mu     sync.Mutex
	items  []outItem
	held   int // items queued or taken by the writer and not written yet
	bytes  int // their sizes
	closed bool
	wake   chan struct{}
	done   chan struct{}
}

// newOutbox starts the goroutine that writes the outbox to client; close
// stops and joins it.
func newOutbox(client rpc.Client, overrun func()) *outbox {
	o := &outbox{client: client, overrun: overrun, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go o.run()
	return o
}

// size estimates what an update holds.
func size(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 1 << 10
	}
	return len(b)
}

// push queues it; false when the tab is too far behind (it is then
// disconnected) or the outbox is closed.
func (o *outbox) push(it outItem) bool {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return false
	}
	if o.held > 0 && (o.held >= maxOutboxItems || o.bytes+it.size > maxOutboxBytes) {
		o.closed = true
		o.items = nil
		o.mu.Unlock()
		o.overrun()
		o.signal()
		return false
	}
	o.items = append(o.items, it)
	o.held++
	o.bytes += it.size
	o.mu.Unlock()
	o.signal()
	return true
}

func (o *outbox) isClosed() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.closed
}

func (o *outbox) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

func (o *outbox) run() {
	defer close(o.done)
	for {
		o.mu.Lock()
		items := o.items
		o.items = nil
		closed := o.closed
		o.mu.Unlock()
		for _, it := range items {
			if o.isClosed() {
				break
			}
			switch {
			case it.flushed != nil:
				close(it.flushed)
			case it.update != nil:
				_ = o.client.SessionUpdate(context.Background(), it.update)
			case it.files != nil:
				_ = o.client.FilesChanged(context.Background(), it.files)
			}
			o.mu.Lock()
			o.held--
			o.bytes -= it.size
			o.mu.Unlock()
		}
		if closed {
			return
		}
		if len(items) == 0 {
			<-o.wake
		}
	}
}

// flush waits until everything queued before it has been written, or ctx
// ends, or the outbox closes.
func (o *outbox) flush(ctx context.Context) {
	ch := make(chan struct{})
	if !o.push(outItem{flushed: ch}) {
		return
	}
	select {
	case <-ch:
	case <-ctx.Done():
	case <-o.done:
	}
}

// close stops the writer and waits for it; what is still queued is
// dropped (the connection is gone).
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.items = nil
	o.mu.Unlock()
	o.signal()
	<-o.done
}
