package web

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coding-agent/coding-agent/rpc"
)

// blockingClient is a tab that never reads: every write blocks until the
// test releases it.
type blockingClient struct {
	release chan struct{}
	sent    atomic.Int64
}

func (b *blockingClient) SessionUpdate(ctx context.Context, n *rpc.SessionNotification) error {
	<-b.release
	b.sent.Add(1)
	return nil
}
func (b *blockingClient) FilesChanged(ctx context.Context, n *rpc.FilesChangedNotification) error {
	return b.SessionUpdate(ctx, nil)
}
func (b *blockingClient) RequestPermission(ctx context.Context, req *rpc.RequestPermissionRequest) (*rpc.RequestPermissionResponse, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestOutboxDropsATabThatStopsReading: pushing never blocks the sender
// (the session), a tab that is too far behind is disconnected, and a tab
// that reads gets everything in order.
func TestOutboxDropsATabThatStopsReading(t *testing.T) {
	stuck := &blockingClient{release: make(chan struct{})}
	over := make(chan struct{})
	o := newOutbox(stuck, func() { close(over) })
	reader := &blockingClient{release: make(chan struct{})}
	close(reader.release)
	r := newOutbox(reader, func() { t.Error("the reading tab was disconnected") })

	n := &rpc.SessionNotification{SessionID: "s", Update: &rpc.AgentMessageChunk{Content: rpc.TextBlock("x")}}
	start := time.Now()
	pushed := 0
	for i := 0; i < maxOutboxItems+10; i++ {
		if o.push(outItem{update: n, size: 100}) {
			pushed++
		}
		r.push(outItem{update: n, size: 100})
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("pushing took %v: the sender was held up", d)
	}
	select {
	case <-over:
	case <-time.After(10 * time.Second):
		t.Fatal("the stuck tab was not disconnected")
	}
	if pushed > maxOutboxItems+1 {
		t.Errorf("%d updates queued for a stuck tab, bound %d", pushed, maxOutboxItems)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r.flush(ctx)
	if got := reader.sent.Load(); got != maxOutboxItems+10 {
		t.Errorf("the reading tab got %d updates, want %d", got, maxOutboxItems+10)
	}
	close(stuck.release)
	o.close()
	r.close()
}
