package stream_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
)

// recreateStream deletes the event stream and ensures it again, and
// returns the new stream's creation time.
func recreateStream(t *testing.T, ctx context.Context, js jetstream.JetStream) time.Time {
	t.Helper()
	if err := js.DeleteStream(ctx, "INGRESS"); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Ensure(ctx, js, stream.Config{Name: "INGRESS", SubjectPrefix: prefix, History: 10}); err != nil {
		t.Fatal(err)
	}
	st, err := stream.ReadState(ctx, js, "INGRESS")
	if err != nil {
		t.Fatal(err)
	}
	return st.Created
}

func TestMarkReconciled(t *testing.T) {
	ctx := testContext(t)
	_, js, _ := setupStream(t)
	publishAll(t, ctx, newPublisher(t, js), configMapEvent("a", 1), configMapEvent("b", 1))
	st, err := stream.ReadState(ctx, js, "INGRESS")
	if err != nil {
		t.Fatal(err)
	}
	if st.HasMarker || st.LastSeq != 2 {
		t.Fatalf("state of a new stream = %+v, want no marker and last sequence 2", st)
	}
	if _, err := stream.MarkReconciled(ctx, js, "INGRESS", st.Created.Add(-time.Second)); !errors.Is(err, stream.ErrStreamRecreated) {
		t.Fatalf("marking with another creation time: %v, want ErrStreamRecreated", err)
	}
	seq, err := stream.MarkReconciled(ctx, js, "INGRESS", st.Created)
	if err != nil || seq != 2 {
		t.Fatalf("MarkReconciled = %d, %v; want 2", seq, err)
	}
	marked, err := stream.ReadState(ctx, js, "INGRESS")
	if err != nil {
		t.Fatal(err)
	}
	if !marked.HasMarker || marked.Reconciled != 2 || !marked.Created.Equal(st.Created) {
		t.Fatalf("state after MarkReconciled = %+v", marked)
	}

	// A stream created again from the marked configuration (metadata and
	// all) is not marked: the marker names the stream it was written for.
	info, err := js.Stream(ctx, "INGRESS")
	if err != nil {
		t.Fatal(err)
	}
	cfg := info.CachedInfo().Config
	if err := js.DeleteStream(ctx, "INGRESS"); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	copied, err := stream.ReadState(ctx, js, "INGRESS")
	if err != nil {
		t.Fatal(err)
	}
	if copied.HasMarker || !copied.Replaces(marked) {
		t.Fatalf("state of a copy = %+v: want no marker, and another stream than %+v", copied, marked)
	}
}

// recreations records the WithStreamRecreated calls of a Consumer, and
// whether the stream carried its marker at each.
type recreations struct {
	mu     sync.Mutex
	calls  int
	marked []bool
	at     []int // events the recorder had at each call
}

func TestConsumerFollowsRecreatedStream(t *testing.T) {
	ctx := testContext(t)
	_, js, _ := setupStream(t)
	p := newPublisher(t, js)
	publishInOrder(t, ctx, p, configMapEvent("a", 1), configMapEvent("b", 1), configMapEvent("a", 2), configMapEvent("c", 1))

	rec := newRecorder()
	var re recreations
	hook := func(ctx context.Context) {
		st, err := stream.ReadState(ctx, js, "INGRESS")
		evs, _, _ := rec.snapshot()
		re.mu.Lock()
		defer re.mu.Unlock()
		re.calls++
		re.marked = append(re.marked, err == nil && st.HasMarker)
		re.at = append(re.at, len(evs))
	}
	c := newConsumer(t, js, rec, stream.WithStreamRecreated(hook), stream.WithStreamCheck(50*time.Millisecond))
	stop := runConsumer(t, c)
	rec.waitFor(t, ctx, "bootstrap", func(evs []events.Event, ups int) bool { return ups == 1 && len(evs) == 3 })

	// The stream is deleted and created again; the watcher republishes a
	// part of its state, then the rest, then marks the stream reconciled.
	created := recreateStream(t, ctx, js)
	publishInOrder(t, ctx, p, configMapEvent("a", 2))
	publishInOrder(t, ctx, p, configMapEvent("d", 1), configMapEvent("b", 1))
	if _, err := stream.MarkReconciled(ctx, js, "INGRESS", created); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, ctx, "bootstrap of the new stream", func(_ []events.Event, ups int) bool { return ups == 2 })
	publishInOrder(t, ctx, p, configMapEvent("e", 1))
	rec.waitFor(t, ctx, "live event on the new stream", func(evs []events.Event, _ int) bool { return len(evs) == 7 })
	stop()

	evs, _, at := rec.snapshot()
	re.mu.Lock()
	defer re.mu.Unlock()
	if re.calls != 1 || !re.marked[0] || re.at[0] != 3 {
		t.Fatalf("recreated hook: %d calls, marker seen %v, after %v events; want 1 call after the 3 events of the old stream, with the marker",
			re.calls, re.marked, re.at)
	}
	if got, want := fmt.Sprint(names(evs[3:])), "[a@2#1 d@1#2 b@1#3 e@1#4]"; got != want || at != 6 {
		t.Errorf("after the recreation: %s (caught up after %d events), want %s and caught up after 6", got, at, want)
	}
	if c.LastSequence() != 4 || !c.IsCaughtUp() {
		t.Errorf("LastSequence %d, caught up %v; want 4 and true", c.LastSequence(), c.IsCaughtUp())
	}
}

// A stream deleted while the consumer runs and created again later: the
// consumer keeps what it handled and follows the new stream once it is
// marked.
func TestConsumerWaitsForRecreatedStream(t *testing.T) {
	ctx := testContext(t)
	_, js, _ := setupStream(t)
	p := newPublisher(t, js)
	publishInOrder(t, ctx, p, configMapEvent("a", 1), configMapEvent("b", 1))
	rec := newRecorder()
	recreated := make(chan struct{}, 1)
	c := newConsumer(t, js, rec, stream.WithStreamCheck(50*time.Millisecond),
		stream.WithStreamRecreated(func(context.Context) { recreated <- struct{}{} }))
	runConsumer(t, c)
	rec.waitFor(t, ctx, "bootstrap", func(evs []events.Event, ups int) bool { return ups == 1 && len(evs) == 2 })
	if err := js.DeleteStream(ctx, "INGRESS"); err != nil {
		t.Fatal(err)
	}
	// Not an assertion: time for the consumer to find the stream missing.
	time.Sleep(300 * time.Millisecond)
	if c.LastSequence() != 2 {
		t.Errorf("LastSequence %d with the stream missing, want 2", c.LastSequence())
	}
	if _, err := stream.Ensure(ctx, js, stream.Config{Name: "INGRESS", SubjectPrefix: prefix, History: 10}); err != nil {
		t.Fatal(err)
	}
	publishInOrder(t, ctx, p, configMapEvent("x", 1), configMapEvent("b", 2))
	st, err := stream.ReadState(ctx, js, "INGRESS")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.MarkReconciled(ctx, js, "INGRESS", st.Created); err != nil {
		t.Fatal(err)
	}
	select {
	case <-recreated:
	case <-ctx.Done():
		t.Fatal("the consumer did not follow the recreated stream")
	}
	rec.waitFor(t, ctx, "bootstrap of the new stream", func(_ []events.Event, ups int) bool { return ups == 2 })
	evs, _, _ := rec.snapshot()
	if got := fmt.Sprint(names(evs[2:])); got != "[x@1#1 b@2#2]" {
		t.Errorf("after the recreation: %s, want the new stream's two events", got)
	}
}
