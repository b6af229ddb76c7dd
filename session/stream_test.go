package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coding-agent/coding-agent/session/models"
	"github.com/coding-agent/coding-agent/tools"
)

// chunks is a model answer of n text chunks.
func chunks(n int) []models.Event {
	var evs []models.Event
	for i := range n {
		evs = append(evs, text(strings.Repeat("x", i%7+1)))
	}
	return append(evs, done(models.StopEndTurn))
}

// waitFor fails the test when ch is not closed within a generous deadline.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// TestSlowSubscriberDoesNotStallTurn checks issue 10 #6: a subscriber that
// does not read does not block the agent loop, its queue stays bounded,
// and once it reads again it is told how much it missed, then gets the
// live events.
func TestSlowSubscriberDoesNotStallTurn(t *testing.T) {
	n := 3 * maxQueueEvents
	m := &scriptModel{responses: [][]models.Event{chunks(n), {text("after"), done(models.StopEndTurn)}}}
	s, rec := newTestSession(t, m, Options{Tools: []string{}})

	release := make(chan struct{})
	var mu sync.Mutex
	var got []Event
	sawAfter := make(chan struct{})
	unsubscribe := s.Subscribe(func(ev Event) {
		<-release // stuck until the test lets it go
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
		if c, ok := ev.(*MessageChunk); ok && c.Text == "after" {
			close(sawAfter)
		}
	})
	defer unsubscribe()

	turnDone := make(chan struct{})
	go func() {
		defer close(turnDone)
		if _, err := s.Prompt(context.Background(), []Content{Text("go")}); err != nil {
			t.Error(err)
		}
	}()
	waitFor(t, turnDone, "the turn while a subscriber is stuck")
	if len(rec.all()) < n {
		t.Errorf("the session's handler got %d events, want all %d", len(rec.all()), n)
	}
	k := s.sinks[len(s.sinks)-1]
	k.mu.Lock()
	queued := len(k.queue)
	k.mu.Unlock()
	if queued > maxQueueEvents {
		t.Errorf("%d events queued for a stuck subscriber, want at most %d", queued, maxQueueEvents)
	}

	close(release)
	if _, err := s.Prompt(context.Background(), []Content{Text("again")}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-sawAfter:
	case <-time.After(30 * time.Second):
		mu.Lock()
		k.mu.Lock()
		t.Fatalf("the subscriber did not catch up: got %d events, last %#v; queue %d missed %d", len(got), got[len(got)-1], len(k.queue), k.missed)
	}
	mu.Lock()
	defer mu.Unlock()
	missed := 0
	for _, ev := range got {
		if l, ok := ev.(*Lagged); ok {
			missed += l.Missed
		}
	}
	if missed == 0 {
		t.Error("the subscriber fell behind but was not told (no Lagged event)")
	}
	if len(got)-1+missed < n {
		t.Errorf("got %d events and missed %d, want them to account for the %d of the first turn", len(got), missed, n)
	}
}

// TestSubscribeSeesEventsInOrder checks that a subscriber that keeps up
// sees exactly what the handler sees, and that unsubscribing stops it.
func TestSubscribeSeesEventsInOrder(t *testing.T) {
	m := &scriptModel{responses: [][]models.Event{chunks(50)}}
	s, rec := newTestSession(t, m, Options{Tools: []string{}})
	var mu sync.Mutex
	var got []Event
	unsubscribe := s.Subscribe(func(ev Event) {
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
	})
	if _, err := s.Prompt(context.Background(), []Content{Text("go")}); err != nil {
		t.Fatal(err)
	}
	s.sinks[len(s.sinks)-1].flush(context.Background())
	unsubscribe() // waits for the subscriber's last call
	mu.Lock()
	n := len(got)
	mu.Unlock()
	want := rec.all()
	if n != len(want) {
		t.Fatalf("subscriber got %d events, the handler %d", n, len(want))
	}
	for i, ev := range got {
		if wireUpdate(ev) != nil && want[i] != nil && ev != rec.events[i] {
			t.Fatalf("event %d differs", i)
		}
	}
	if _, err := s.Prompt(context.Background(), []Content{Text("more")}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != n {
		t.Errorf("an unsubscribed function got %d more events", len(got)-n)
	}
}

// TestOpenOfOpenSessionAttaches checks issue 10 #6: opening a session that
// is open attaches to it (one session, one journal writer); both openers
// see the events of either's turn; the first Close only detaches.
func TestOpenOfOpenSessionAttaches(t *testing.T) {
	m := &scriptModel{responses: [][]models.Event{
		{text("one"), done(models.StopEndTurn)},
		concat(toolCall(0, "call_w", "write", `{"path":"b.txt","content":"b"}`), []models.Event{done(models.StopToolUse)}),
		{text("two"), done(models.StopEndTurn)},
		{text("three"), done(models.StopEndTurn)},
	}}
	env := &Env{DataDir: t.TempDir(), Getenv: func(string) string { return "" }}
	recA := &recorder{}
	a, err := env.NewSession(Options{Cwd: t.TempDir(), Model: m, OnEvent: recA.add, Preset: tools.FullAccess})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Prompt(context.Background(), []Content{Text("first")}); err != nil {
		t.Fatal(err)
	}

	recB := &recorder{}
	b, updates, err := env.OpenSession(a.ID(), Options{OnEvent: recB.add})
	if err != nil {
		t.Fatal(err)
	}
	if b.state != a.state {
		t.Fatal("a second open of an open session opened it again instead of attaching")
	}
	if len(updates) == 0 || !strings.Contains(string(updates[0]), "first") {
		t.Errorf("the attached opener's replay lacks the first turn: %d updates", len(updates))
	}
	if len(b.History()) != len(a.History()) {
		t.Error("the attached session does not share the history")
	}

	// B's turn: its handler has every event before Prompt returns, and
	// A's handler sees them too.
	nA := len(recA.all())
	if _, err := b.Prompt(context.Background(), []Content{Text("second")}); err != nil {
		t.Fatal(err)
	}
	want := []string{"tool_call call_w pending", "update call_w in_progress", "update call_w completed"}
	if got := trace(recB.all()); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("attached opener's events %q, want %q", got, want)
	}
	if got := trace(recA.all()[nA:]); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("first opener's events of the attached turn %q, want %q", got, want)
	}

	// One writer: the journal holds B's prompt once.
	raw, err := os.ReadFile(filepath.Join(env.DataDir, "sessions", a.ID()+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if c := strings.Count(string(raw), `"text":"second"`); c != 2 { // the user message and its update
		t.Errorf("the journal holds the attached prompt %d times, want 2 records (message and update)", c)
	}

	// B's Close detaches B only.
	nB := len(recB.all())
	b.Close()
	if _, err := b.Prompt(context.Background(), []Content{Text("x")}); err == nil {
		t.Error("a closed opener could still prompt")
	}
	if _, err := a.Prompt(context.Background(), []Content{Text("third")}); err != nil {
		t.Fatalf("the first opener's session ended with the attached one: %v", err)
	}
	if n := len(recB.all()); n != nB {
		t.Errorf("a closed opener got %d more events", n-nB)
	}

	// The last Close ends the session: a later open reopens it from the
	// store.
	a.Close()
	c, _, err := env.OpenSession(a.ID(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.state == a.state {
		t.Error("a closed session stayed in the registry")
	}
}

// TestAttachedOpenerApproves checks that the approvals of a turn go to
// the opener that started it.
func TestAttachedOpenerApproves(t *testing.T) {
	m := &scriptModel{responses: [][]models.Event{
		concat(toolCall(0, "call_w", "write", `{"path":"w.txt","content":"x"}`), []models.Event{done(models.StopToolUse)}),
		{text("ok"), done(models.StopEndTurn)},
	}}
	env := &Env{DataDir: t.TempDir(), Getenv: func(string) string { return "" }}
	a, err := env.NewSession(Options{Cwd: t.TempDir(), Model: m, Approve: func(context.Context, *ApprovalRequest) (Decision, error) {
		t.Error("the first opener was asked about the attached opener's turn")
		return Reject, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	recB := &recorder{}
	var sawCall bool
	b, _, err := env.OpenSession(a.ID(), Options{OnEvent: recB.add, Approve: func(ctx context.Context, req *ApprovalRequest) (Decision, error) {
		// The opener has seen the call before it is asked about it.
		sawCall = len(trace(recB.all())) > 0
		return AllowOnce, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Prompt(context.Background(), []Content{Text("write")}); err != nil {
		t.Fatal(err)
	}
	if !sawCall {
		t.Error("the approval request overtook the tool call it is about")
	}
	if _, err := os.Stat(filepath.Join(a.Cwd(), "w.txt")); err != nil {
		t.Errorf("the approved write did not happen: %v", err)
	}
}
