package stream_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/events/eventstest"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
	"github.com/ingress-sync/ingress-sync/test/testkit/natstest"
)

const prefix = "ingress"

// quiet discards the logs of the components under test.
var quiet = slog.New(slog.DiscardHandler)

// setupStream starts a server (options opts), connects and ensures the
// event stream.
func setupStream(t *testing.T, opts ...natstest.Option) (*natstest.Server, jetstream.JetStream, jetstream.Stream) {
	t.Helper()
	srv := natstest.New(t, opts...)
	_, js := natstest.Connect(t, srv.URL())
	s, err := stream.Ensure(testContext(t), js, stream.Config{Name: "INGRESS", SubjectPrefix: prefix, History: 10})
	if err != nil {
		t.Fatal(err)
	}
	return srv, js, s
}

// observed records the observer calls of a publisher.
type observations struct {
	mu   sync.Mutex
	errs []error
}

func (o *observations) observe(_ events.Event, _ time.Duration, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.errs = append(o.errs, err)
}

func (o *observations) counts() (ok, failed int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, err := range o.errs {
		if err == nil {
			ok++
		} else {
			failed++
		}
	}
	return ok, failed
}

func newPublisher(t *testing.T, js jetstream.JetStream, opts ...stream.PublisherOption) *stream.Publisher {
	t.Helper()
	opts = append([]stream.PublisherOption{stream.WithPublisherLogger(quiet)}, opts...)
	p, err := stream.NewPublisher(js, prefix, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = p.Close(ctx)
	})
	return p
}

// configMapEvent is a small event of ConfigMap ns/name at resourceVersion rv.
func configMapEvent(name string, rv int) events.Event {
	cm := eventstest.ConfigMap()
	cm.Name, cm.UID, cm.ResourceVersion = name, types.UID("uid-"+name), fmt.Sprint(rv)
	return eventstest.Of(events.OpUpdate, cm)
}

// streamMessages reads every message of s in sequence order.
func streamMessages(t *testing.T, ctx context.Context, s jetstream.Stream) []*jetstream.RawStreamMsg {
	t.Helper()
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []*jetstream.RawStreamMsg
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		msg, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, msg)
	}
	return msgs
}

func TestPublisherPublishesWithHeaders(t *testing.T) {
	ctx := testContext(t)
	_, js, s := setupStream(t)
	var obs observations
	p := newPublisher(t, js, stream.WithObserver(obs.observe))
	sent := map[string]events.Event{}
	for _, tc := range eventstest.Events() {
		if tc.Event.Object == nil {
			continue
		}
		subj := events.Subject(prefix, tc.Event.Kind, tc.Event.Namespace, tc.Event.Name)
		if _, dup := sent[subj]; dup {
			continue
		}
		sent[subj] = tc.Event
		if err := p.Publish(ctx, tc.Event); err != nil {
			t.Fatalf("Publish %s: %v", tc.Name, err)
		}
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	msgs := streamMessages(t, ctx, s)
	if len(msgs) != len(sent) {
		t.Fatalf("stream has %d messages, want %d", len(msgs), len(sent))
	}
	for _, msg := range msgs {
		want, ok := sent[msg.Subject]
		if !ok {
			t.Errorf("unexpected subject %s", msg.Subject)
			continue
		}
		for k := range msg.Header {
			if strings.HasPrefix(k, "Nats-") && k != "Nats-Msg-Id" {
				delete(msg.Header, k) // added by the direct get
			}
		}
		if !reflect.DeepEqual(msg.Header, nats.Header(events.Headers(want))) {
			t.Errorf("%s headers = %v\nwant %v", msg.Subject, msg.Header, events.Headers(want))
		}
		got, err := events.Decode(msg.Data)
		if err != nil || !reflect.DeepEqual(got.Object, want.Object) {
			t.Errorf("%s payload decodes to %v, %v", msg.Subject, got.Object, err)
		}
	}
	if ok, failed := obs.counts(); ok != len(sent) || failed != 0 {
		t.Errorf("observer: %d ok, %d failed; want %d ok", ok, failed, len(sent))
	}
}

func TestPublisherKeepsOrderPerObject(t *testing.T) {
	ctx := testContext(t)
	_, js, s := setupStream(t)
	p := newPublisher(t, js, stream.WithMaxPending(8))
	const objects, versions = 5, 8
	for v := 1; v <= versions; v++ {
		for o := range objects {
			if err := p.Publish(ctx, configMapEvent(fmt.Sprintf("cm-%d", o), v)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	last := map[string]int{}
	for _, msg := range streamMessages(t, ctx, s) {
		var rv int
		fmt.Sscan(msg.Header.Get(events.HeaderResourceVersion), &rv)
		if rv != last[msg.Subject]+1 {
			t.Errorf("%s: version %d after %d", msg.Subject, rv, last[msg.Subject])
		}
		last[msg.Subject] = rv
	}
	if len(last) != objects {
		t.Errorf("%d subjects, want %d", len(last), objects)
	}
}

func TestPublisherDeduplicates(t *testing.T) {
	ctx := testContext(t)
	_, js, s := setupStream(t)
	p := newPublisher(t, js)
	ev := configMapEvent("settings", 7)
	for range 2 {
		if err := p.Publish(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if msgs := streamMessages(t, ctx, s); len(msgs) != 1 {
		t.Errorf("stream has %d messages, want 1", len(msgs))
	}
}

func TestPublisherRefusesTooLargeEvents(t *testing.T) {
	ctx := testContext(t)
	_, js, s := setupStream(t, natstest.WithMaxPayload(64<<10))
	var obs observations
	p := newPublisher(t, js, stream.WithObserver(obs.observe))

	if err := p.Publish(ctx, configMapEvent("before", 1)); err != nil {
		t.Fatal(err)
	}
	huge := eventstest.Of(events.OpUpdate, eventstest.EndpointSlice(1000))
	err := p.Publish(ctx, huge)
	if !errors.Is(err, stream.ErrTooLarge) {
		t.Fatalf("Publish of a huge slice = %v, want ErrTooLarge", err)
	}
	for _, part := range []string{"EndpointSlice", "shop/web-x7k2p", "65536"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not name %q", err, part)
		}
	}
	if err := p.Publish(ctx, configMapEvent("after", 1)); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if msgs := streamMessages(t, ctx, s); len(msgs) != 2 {
		t.Errorf("stream has %d messages, want 2", len(msgs))
	}
	// The refusal was reported by Publish's error, and only there.
	if ok, failed := obs.counts(); ok != 2 || failed != 0 {
		t.Errorf("observer: %d ok, %d failed; want 2 and none (the refusal is Publish's error)", ok, failed)
	}

	small := newPublisher(t, js, stream.WithMaxPayload(1024))
	if err := small.Publish(ctx, eventstest.Of(events.OpUpdate, eventstest.EndpointSlice(20))); !errors.Is(err, stream.ErrTooLarge) {
		t.Errorf("WithMaxPayload(1024): %v, want ErrTooLarge", err)
	}
}

func TestPublisherRetriesAcrossServerRestart(t *testing.T) {
	ctx := testContext(t)
	srv, js, s := setupStream(t)
	var obs observations
	p := newPublisher(t, js, stream.WithRetry(100, 20*time.Millisecond),
		stream.WithAckTimeout(300*time.Millisecond), stream.WithObserver(obs.observe))

	srv.Stop()
	const n = 12
	for i := range n {
		if err := p.Publish(ctx, configMapEvent(fmt.Sprintf("cm-%d", i%4), i/4+1)); err != nil {
			t.Fatal(err)
		}
	}
	srv.Restart()
	if err := p.Flush(ctx); err != nil {
		t.Fatalf("Flush after restart: %v", err)
	}
	msgs := streamMessages(t, ctx, s)
	if len(msgs) != n {
		t.Errorf("stream has %d messages, want %d", len(msgs), n)
	}
	if ok, failed := obs.counts(); ok != n || failed != 0 {
		t.Errorf("observer: %d ok, %d failed", ok, failed)
	}
}

func TestPublisherBoundsPending(t *testing.T) {
	ctx := testContext(t)
	srv, js, s := setupStream(t)
	p := newPublisher(t, js, stream.WithMaxPending(3), stream.WithRetry(100, 20*time.Millisecond),
		stream.WithAckTimeout(300*time.Millisecond))

	srv.Stop()
	for i := range 3 {
		if err := p.Publish(ctx, configMapEvent(fmt.Sprintf("cm-%d", i), 1)); err != nil {
			t.Fatal(err)
		}
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := p.Publish(short, configMapEvent("cm-3", 1)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("fourth Publish = %v, want it to block until its context ends", err)
	}
	if got := p.Pending(); got != 3 {
		t.Errorf("Pending = %d, want 3", got)
	}
	short, cancel = context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := p.Flush(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Flush with the server down = %v, want the context's error", err)
	}
	srv.Restart()
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := p.Pending(); got != 0 {
		t.Errorf("Pending after Flush = %d", got)
	}
	if msgs := streamMessages(t, ctx, s); len(msgs) != 3 {
		t.Errorf("stream has %d messages, want 3", len(msgs))
	}
}

func TestPublisherReportsFinalFailure(t *testing.T) {
	ctx := testContext(t)
	_, js, _ := setupStream(t)
	var obs observations
	p, err := stream.NewPublisher(js, "nostream", stream.WithPublisherLogger(quiet), stream.WithRetry(2, 10*time.Millisecond),
		stream.WithAckTimeout(time.Second), stream.WithObserver(obs.observe))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Publish(ctx, configMapEvent("lost", 1)); err != nil {
		t.Fatal(err)
	}
	err = p.Flush(ctx)
	if err == nil || !strings.Contains(err.Error(), "ConfigMap ingress/lost") {
		t.Fatalf("Flush = %v, want the final failure naming the object", err)
	}
	if err := p.Flush(ctx); err != nil {
		t.Errorf("second Flush = %v, want the failure reported once", err)
	}
	if _, failed := obs.counts(); failed != 1 {
		t.Errorf("observer saw %d failures, want 1", failed)
	}
	if err := p.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := p.Publish(ctx, configMapEvent("late", 1)); !errors.Is(err, stream.ErrPublisherClosed) {
		t.Errorf("Publish after Close = %v, want ErrPublisherClosed", err)
	}
}

func TestPublisherRejects(t *testing.T) {
	ctx := testContext(t)
	_, js, _ := setupStream(t)
	p := newPublisher(t, js)
	bad := events.Event{Op: events.OpUpdate, Kind: events.KindSecret, Namespace: "a", Name: "b", Object: &corev1.ConfigMap{}}
	if err := p.Publish(ctx, bad); !errors.Is(err, events.ErrInvalidEvent) {
		t.Errorf("Publish of an invalid event = %v, want ErrInvalidEvent", err)
	}
	for _, tc := range []struct {
		name string
		opt  stream.PublisherOption
	}{
		{"max pending 0", stream.WithMaxPending(0)},
		{"retry 0 attempts", stream.WithRetry(0, time.Second)},
		{"retry no backoff", stream.WithRetry(3, 0)},
		{"ack timeout 0", stream.WithAckTimeout(0)},
		{"max payload 0", stream.WithMaxPayload(0)},
		{"nil observer", stream.WithObserver(nil)},
		{"nil logger", stream.WithPublisherLogger(nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := stream.NewPublisher(js, prefix, tc.opt); !errors.Is(err, stream.ErrInvalidConfig) {
				t.Errorf("NewPublisher = %v, want ErrInvalidConfig", err)
			}
		})
	}
	if _, err := stream.NewPublisher(js, "bad prefix"); !errors.Is(err, stream.ErrInvalidConfig) {
		t.Errorf("bad prefix: %v", err)
	}
}

func TestPublisherCloseCutsRetriesShort(t *testing.T) {
	ctx := testContext(t)
	srv, js, _ := setupStream(t)
	var obs observations
	p := newPublisher(t, js, stream.WithObserver(obs.observe),
		stream.WithRetry(1000, 20*time.Millisecond), stream.WithAckTimeout(200*time.Millisecond))
	srv.Stop()
	for i := range 2 {
		if err := p.Publish(ctx, configMapEvent(fmt.Sprintf("cm-%d", i), 1)); err != nil {
			t.Fatal(err)
		}
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := p.Close(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close = %v, want the context's error", err)
	}
	if p.Pending() != 0 {
		t.Errorf("Pending after Close = %d", p.Pending())
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.errs) != 2 || !errors.Is(obs.errs[0], stream.ErrPublisherClosed) || !errors.Is(obs.errs[1], stream.ErrPublisherClosed) {
		t.Errorf("observed %v, want two ErrPublisherClosed", obs.errs)
	}
}

// TestPublisherObserverGetsTheSequence: an acked event carries its stream
// sequence, and a duplicate the sequence of the original.
func TestPublisherObserverGetsTheSequence(t *testing.T) {
	ctx := testContext(t)
	_, js, _ := setupStream(t)
	var mu sync.Mutex
	var seqs []uint64
	p := newPublisher(t, js, stream.WithObserver(func(ev events.Event, _ time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			seqs = append(seqs, ev.Sequence)
		}
	}))
	for _, ev := range []events.Event{configMapEvent("a", 1), configMapEvent("b", 1), configMapEvent("a", 1)} {
		if err := p.Publish(ctx, ev); err != nil {
			t.Fatal(err)
		}
		if err := p.Flush(context.WithoutCancel(ctx)); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(seqs, []uint64{1, 2, 1}) {
		t.Fatalf("acked sequences %v, want [1 2 1]", seqs)
	}
}
