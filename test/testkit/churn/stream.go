package churn

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
)

// StreamWatcherID is the watcher id of the events StreamTarget publishes.
const StreamWatcherID = "churn"

// StreamTarget publishes changes straight to the event stream, as the
// watcher would: trimmed objects in pkg/events' envelope through
// pkg/stream's Publisher, one resourceVersion per event from a counter that starts at
// the current time in microseconds (so that a second run within the
// stream's duplicate window is not dropped as duplicates).
type StreamTarget struct {
	pub    *stream.Publisher
	rv     atomic.Uint64
	failed firstError
	acked  atomic.Int64
}

// NewStreamTarget publishes under prefix through js, with at most
// maxPending events in flight (0: the Publisher's default).
func NewStreamTarget(js jetstream.JetStream, prefix string, maxPending int) (*StreamTarget, error) {
	t := &StreamTarget{}
	t.rv.Store(uint64(time.Now().UnixMicro()))
	opts := []stream.PublisherOption{stream.WithObserver(t.observe), stream.WithRetry(3, 50*time.Millisecond)}
	if maxPending > 0 {
		opts = append(opts, stream.WithMaxPending(maxPending))
	}
	pub, err := stream.NewPublisher(js, prefix, opts...)
	if err != nil {
		return nil, err
	}
	t.pub = pub
	return t, nil
}

func (t *StreamTarget) observe(_ events.Event, _ time.Duration, err error) {
	if err != nil {
		t.failed.add(err)
		return
	}
	t.acked.Add(1)
}

// StreamEvent is the event of ch with resourceVersion rv, as the watcher would
// publish it at time now.
func StreamEvent(ch Change, rv string, now time.Time) events.Event {
	obj := events.Trim(ch.Object)
	m := obj.(metav1.Object)
	k := ch.Key()
	uid := "churn-" + events.KindToken(k.Kind) + "-" + k.Namespace + "-" + k.Name
	m.SetUID(types.UID(uid))
	m.SetResourceVersion(rv)
	return events.Event{
		Op: ch.Op, Kind: k.Kind, Namespace: k.Namespace, Name: k.Name, UID: uid, ResourceVersion: rv,
		ObservedAt: now, WatcherID: StreamWatcherID, SchemaVersion: events.SchemaVersion, Object: obj,
	}
}

// Setup publishes the setup changes and waits for their acks.
func (t *StreamTarget) Setup(ctx context.Context, _ []string, changes []Change) error {
	for _, ch := range changes {
		if _, err := t.Write(ctx, ch); err != nil {
			return err
		}
	}
	if n, err := t.Flush(ctx); err != nil {
		return fmt.Errorf("churn: setup: %d events failed: %w", n, err)
	}
	return nil
}

// Write hands the event of ch to the Publisher; its ack comes later.
func (t *StreamTarget) Write(ctx context.Context, ch Change) (string, error) {
	rv := strconv.FormatUint(t.rv.Add(1), 10)
	return rv, t.pub.Publish(ctx, StreamEvent(ch, rv, time.Now()))
}

// Workers is 1: Publish does not wait for the ack.
func (t *StreamTarget) Workers() int { return 1 }

// Acked is the number of events acknowledged by the stream so far.
func (t *StreamTarget) Acked() int64 { return t.acked.Load() }

// Flush waits for every pending ack.
func (t *StreamTarget) Flush(ctx context.Context) (int, error) {
	if err := t.pub.Flush(ctx); err != nil {
		n, _ := t.failed.get()
		return max(n, 1), err
	}
	return t.failed.get()
}

// Close flushes and closes the Publisher (not the connection).
func (t *StreamTarget) Close(ctx context.Context) error { return t.pub.Close(ctx) }
