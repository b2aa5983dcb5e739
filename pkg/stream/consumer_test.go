package stream_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
	"github.com/ingress-sync/ingress-sync/test/testkit/natstest"
)

// recorder is a Handler that records what it gets.
type recorder struct {
	mu         sync.Mutex
	events     []events.Event
	caughtUps  int
	caughtUpAt int // number of events handled when CaughtUp came
	failOn     string
	notify     chan struct{}
}

func newRecorder() *recorder { return &recorder{notify: make(chan struct{}, 1)} }

func (r *recorder) HandleEvent(_ context.Context, ev events.Event) error {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
	r.poke()
	if ev.Name == r.failOn {
		return errors.New("handler refuses " + ev.Name)
	}
	return nil
}

func (r *recorder) CaughtUp(context.Context) {
	r.mu.Lock()
	r.caughtUps++
	r.caughtUpAt = len(r.events)
	r.mu.Unlock()
	r.poke()
}

func (r *recorder) poke() {
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

// snapshot returns a copy of the events and the CaughtUp counters.
func (r *recorder) snapshot() (evs []events.Event, caughtUps, caughtUpAt int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]events.Event(nil), r.events...), r.caughtUps, r.caughtUpAt
}

// waitFor waits until cond holds on the recorder's state, within ctx.
func (r *recorder) waitFor(t *testing.T, ctx context.Context, what string, cond func(evs []events.Event, caughtUps int) bool) {
	t.Helper()
	for {
		evs, ups, _ := r.snapshot()
		if cond(evs, ups) {
			return
		}
		select {
		case <-r.notify:
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v (have %d events, %d caught-up)", what, ctx.Err(), len(evs), ups)
		}
	}
}

// runConsumer starts c and stops it when the test ends (or when the
// returned function is called), checking that Start returns nil.
func runConsumer(t *testing.T, c *stream.Consumer) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Start returned %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Error("Start did not return after cancel")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func newConsumer(t *testing.T, js jetstream.JetStream, h stream.Handler, opts ...stream.ConsumerOption) *stream.Consumer {
	t.Helper()
	opts = append([]stream.ConsumerOption{stream.WithConsumerLogger(quiet)}, opts...)
	c, err := stream.NewConsumer(js, "INGRESS", prefix, h, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// publishAll publishes evs in order and waits for their acks.
func publishAll(t *testing.T, ctx context.Context, p *stream.Publisher, evs ...events.Event) {
	t.Helper()
	for _, ev := range evs {
		if err := p.Publish(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// publishInOrder publishes evs one by one, each acked before the next, so
// that stream order is evs order.
func publishInOrder(t *testing.T, ctx context.Context, p *stream.Publisher, evs ...events.Event) {
	t.Helper()
	for _, ev := range evs {
		publishAll(t, ctx, p, ev)
	}
}

func names(evs []events.Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, fmt.Sprintf("%s@%s#%d", ev.Name, ev.ResourceVersion, ev.Sequence))
	}
	return out
}

func TestConsumerBootstrapThenLive(t *testing.T) {
	ctx := testContext(t)
	_, js, _ := setupStream(t)
	p := newPublisher(t, js)
	publishInOrder(t, ctx, p, configMapEvent("a", 1), configMapEvent("a", 2), configMapEvent("b", 1),
		configMapEvent("a", 3), configMapEvent("c", 1), configMapEvent("c", 2))

	rec := newRecorder()
	runConsumer(t, newConsumer(t, js, rec))
	rec.waitFor(t, ctx, "caught up", func(_ []events.Event, ups int) bool { return ups == 1 })
	evs, _, at := rec.snapshot()
	if got, want := fmt.Sprint(names(evs)), "[b@1#3 a@3#4 c@2#6]"; got != want || at != 3 {
		t.Fatalf("bootstrap = %s (caught up after %d), want %s and caught up after 3", got, at, want)
	}

	publishAll(t, ctx, p, configMapEvent("b", 2))
	rec.waitFor(t, ctx, "live event", func(evs []events.Event, _ int) bool { return len(evs) == 4 })
	evs, ups, _ := rec.snapshot()
	live := evs[3]
	if live.Name != "b" || live.ResourceVersion != "2" || live.Sequence != 7 ||
		live.Subject != "ingress.configmap.ingress.b" || live.PublishedAt.IsZero() {
		t.Errorf("live event = %+v", live)
	}
	if ups != 1 {
		t.Errorf("CaughtUp called %d times", ups)
	}
}

func TestConsumerEmptyStream(t *testing.T) {
	ctx := testContext(t)
	_, js, _ := setupStream(t)
	rec := newRecorder()
	c := newConsumer(t, js, rec)
	stop := runConsumer(t, c)
	rec.waitFor(t, ctx, "caught up", func(_ []events.Event, ups int) bool { return ups == 1 })
	publishAll(t, ctx, newPublisher(t, js), configMapEvent("first", 1))
	rec.waitFor(t, ctx, "live event", func(evs []events.Event, _ int) bool { return len(evs) == 1 })
	stop() // LastSequence counts an event once HandleEvent has returned
	if _, ups, at := rec.snapshot(); ups != 1 || at != 0 || !c.IsCaughtUp() || c.LastSequence() != 1 {
		t.Errorf("CaughtUp %d times after %d events; LastSequence %d", ups, at, c.LastSequence())
	}
}

type decodeFailure struct {
	seq     uint64
	subject string
	err     error
}

func TestConsumerSkipsMalformedMessages(t *testing.T) {
	ctx := testContext(t)
	_, js, _ := setupStream(t)
	publishAll(t, ctx, newPublisher(t, js), configMapEvent("good-1", 1))
	if _, err := js.Publish(ctx, "ingress.configmap.ingress.garbage", []byte("\xc1not msgpack")); err != nil {
		t.Fatal(err)
	}
	other, err := events.Encode(configMapEvent("elsewhere", 1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "ingress.configmap.ingress.mismatch", other); err != nil {
		t.Fatal(err)
	}
	publishAll(t, ctx, newPublisher(t, js), configMapEvent("good-2", 1))

	var mu sync.Mutex
	var failures []decodeFailure
	rec := newRecorder()
	runConsumer(t, newConsumer(t, js, rec, stream.WithDecodeErrorHandler(func(seq uint64, subject string, err error) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, decodeFailure{seq, subject, err})
	})))
	rec.waitFor(t, ctx, "caught up", func(_ []events.Event, ups int) bool { return ups == 1 })
	evs, _, _ := rec.snapshot()
	if got := fmt.Sprint(names(evs)); got != "[good-1@1#1 good-2@1#4]" {
		t.Errorf("handled %s, want the two good events", got)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []decodeFailure{{2, "ingress.configmap.ingress.garbage", nil}, {3, "ingress.configmap.ingress.mismatch", nil}}
	if len(failures) != len(want) {
		t.Fatalf("decode failures = %+v, want %d", failures, len(want))
	}
	for i, f := range failures {
		if f.seq != want[i].seq || f.subject != want[i].subject || !errors.Is(f.err, events.ErrMalformed) {
			t.Errorf("failure %d = %+v, want seq %d on %s wrapping ErrMalformed", i, f, want[i].seq, want[i].subject)
		}
	}
}

func TestConsumerResumesAfterServerRestart(t *testing.T) {
	ctx := testContext(t)
	srv, js, _ := setupStream(t)
	p := newPublisher(t, js, stream.WithRetry(200, 20*time.Millisecond), stream.WithAckTimeout(500*time.Millisecond))
	for i := range 5 {
		publishAll(t, ctx, p, configMapEvent(fmt.Sprintf("before-%d", i), 1))
	}
	rec := newRecorder()
	c := newConsumer(t, js, rec)
	stop := runConsumer(t, c)
	rec.waitFor(t, ctx, "bootstrap", func(evs []events.Event, ups int) bool { return len(evs) == 5 && ups == 1 })

	srv.Restart()
	for i := range 5 {
		publishAll(t, ctx, p, configMapEvent(fmt.Sprintf("after-%d", i), 1))
	}
	rec.waitFor(t, ctx, "events after the restart", func(evs []events.Event, _ int) bool { return len(evs) >= 10 })
	evs, ups, _ := rec.snapshot()
	for i, ev := range evs {
		if ev.Sequence != uint64(i+1) {
			t.Errorf("event %d has sequence %d: lost or duplicated sequences in %v", i, ev.Sequence, names(evs))
			break
		}
	}
	if len(evs) != 10 || ups != 1 {
		t.Errorf("%d events, CaughtUp %d times; want 10 and 1", len(evs), ups)
	}
	stop() // LastSequence counts an event once HandleEvent has returned
	if c.LastSequence() != 10 {
		t.Errorf("LastSequence = %d", c.LastSequence())
	}
}

func TestConsumerStartSequenceReplaysHistory(t *testing.T) {
	ctx := testContext(t)
	_, js, _ := setupStream(t)
	publishInOrder(t, ctx, newPublisher(t, js), configMapEvent("a", 1), configMapEvent("a", 2), configMapEvent("b", 1), configMapEvent("a", 3))
	rec := newRecorder()
	runConsumer(t, newConsumer(t, js, rec, stream.WithStartSequence(2)))
	rec.waitFor(t, ctx, "caught up", func(_ []events.Event, ups int) bool { return ups == 1 })
	if evs, _, _ := rec.snapshot(); fmt.Sprint(names(evs)) != "[a@2#2 b@1#3 a@3#4]" {
		t.Errorf("replay from 2 = %v", names(evs))
	}
}

func TestConsumerHandlerErrorSkipsEvent(t *testing.T) {
	ctx := testContext(t)
	_, js, _ := setupStream(t)
	publishAll(t, ctx, newPublisher(t, js), configMapEvent("x", 1), configMapEvent("bad", 1), configMapEvent("y", 1))
	rec := newRecorder()
	rec.failOn = "bad"
	runConsumer(t, newConsumer(t, js, rec))
	rec.waitFor(t, ctx, "all events", func(evs []events.Event, ups int) bool { return len(evs) == 3 && ups == 1 })
}

func TestConsumerWaitsForItsStream(t *testing.T) {
	ctx := testContext(t)
	_, url := natstest.Start(t)
	_, js := natstest.Connect(t, url)
	rec := newRecorder()
	runConsumer(t, newConsumer(t, js, rec))
	if _, err := stream.Ensure(ctx, js, stream.Config{Name: "INGRESS", SubjectPrefix: prefix}); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, ctx, "caught up once the stream exists", func(_ []events.Event, ups int) bool { return ups == 1 })
}

func TestNewConsumerRejects(t *testing.T) {
	_, js, _ := setupStream(t)
	rec := newRecorder()
	for _, tc := range []struct {
		name           string
		stream, prefix string
		h              stream.Handler
		opt            stream.ConsumerOption
	}{
		{"no handler", "INGRESS", prefix, nil, nil},
		{"bad stream", "IN.GRESS", prefix, rec, nil},
		{"bad prefix", "INGRESS", "a.>", rec, nil},
		{"start sequence 0", "INGRESS", prefix, rec, stream.WithStartSequence(0)},
		{"nil decode error handler", "INGRESS", prefix, rec, stream.WithDecodeErrorHandler(nil)},
		{"nil logger", "INGRESS", prefix, rec, stream.WithConsumerLogger(nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []stream.ConsumerOption
			if tc.opt != nil {
				opts = append(opts, tc.opt)
			}
			if _, err := stream.NewConsumer(js, tc.stream, tc.prefix, tc.h, opts...); !errors.Is(err, stream.ErrInvalidConfig) {
				t.Errorf("NewConsumer = %v, want ErrInvalidConfig", err)
			}
		})
	}
}

func TestConsumerStartedAgainResumesAfterLastEvent(t *testing.T) {
	ctx := testContext(t)
	_, js, _ := setupStream(t)
	p := newPublisher(t, js)
	publishInOrder(t, ctx, p, configMapEvent("a", 1), configMapEvent("b", 1), configMapEvent("a", 2))
	rec := newRecorder()
	c := newConsumer(t, js, rec)
	stop := runConsumer(t, c)
	rec.waitFor(t, ctx, "caught up", func(_ []events.Event, ups int) bool { return ups == 1 })
	stop()

	publishInOrder(t, ctx, p, configMapEvent("b", 2), configMapEvent("c", 1))
	runConsumer(t, c)
	rec.waitFor(t, ctx, "new events", func(evs []events.Event, _ int) bool { return len(evs) == 4 })
	evs, ups, _ := rec.snapshot()
	if got := fmt.Sprint(names(evs)); got != "[b@1#2 a@2#3 b@2#4 c@1#5]" || ups != 1 {
		t.Errorf("events %s, CaughtUp %d times; want the bootstrap once, then only the new events", got, ups)
	}
}

// blockingHandler blocks in its first HandleEvent until released.
type blockingHandler struct {
	*recorder
	entered, release chan struct{}
	once             sync.Once
}

func (h *blockingHandler) HandleEvent(ctx context.Context, ev events.Event) error {
	h.once.Do(func() {
		close(h.entered)
		<-h.release
	})
	return h.recorder.HandleEvent(ctx, ev)
}

// TestConsumerServerRestartDuringBootstrap restarts the server while the
// handler holds the first bootstrap event, with more objects than the
// consumer pulls at once, so that the ordered consumer is recreated in the
// middle of the bootstrap: the rest of the bootstrap still delivers only the
// last version of each object.
func TestConsumerServerRestartDuringBootstrap(t *testing.T) {
	ctx := testContext(t)
	srv, js, _ := setupStream(t)
	const objects = 700 // more than one pull batch (500)
	p := newPublisher(t, js)
	for v := 1; v <= 2; v++ {
		for o := range objects {
			if err := p.Publish(ctx, configMapEvent(fmt.Sprintf("cm-%d", o), v)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	h := &blockingHandler{recorder: newRecorder(), entered: make(chan struct{}), release: make(chan struct{})}
	runConsumer(t, newConsumer(t, js, h))
	select {
	case <-h.entered:
	case <-ctx.Done():
		t.Fatal("no first event")
	}
	srv.Restart()
	close(h.release)
	h.waitFor(t, ctx, "caught up", func(_ []events.Event, ups int) bool { return ups == 1 })

	evs, _, at := h.snapshot()
	last := map[string]string{}
	for i, ev := range evs {
		if i > 0 && ev.Sequence <= evs[i-1].Sequence {
			t.Fatalf("sequence %d after %d", ev.Sequence, evs[i-1].Sequence)
		}
		last[ev.Name] = ev.ResourceVersion
	}
	for name, rv := range last {
		if rv != "2" {
			t.Errorf("%s at version %s after the bootstrap, want 2", name, rv)
		}
	}
	if len(evs) != objects || at != len(evs) || evs[len(evs)-1].Sequence != 2*objects {
		t.Errorf("%d events for %d objects, caught up after %d, ending at %d; want each object once", len(evs), len(last), at, evs[len(evs)-1].Sequence)
	}
}

func TestConsumerStopsWhenTheConnectionCloses(t *testing.T) {
	ctx := testContext(t)
	srv, _, _ := setupStream(t)
	nc, js := natstest.Connect(t, srv.URL())
	rec := newRecorder()
	c := newConsumer(t, js, rec)
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	rec.waitFor(t, ctx, "caught up", func(_ []events.Event, ups int) bool { return ups == 1 })
	nc.Close()
	select {
	case err := <-done:
		if !errors.Is(err, jetstream.ErrConnectionClosed) && !errors.Is(err, nats.ErrConnectionClosed) {
			t.Errorf("Start = %v, want a closed-connection error", err)
		}
	case <-ctx.Done():
		t.Fatal("Start did not return after the connection closed")
	}
}
