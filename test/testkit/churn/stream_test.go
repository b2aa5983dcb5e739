package churn

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"context"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/model"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
	"github.com/ingress-sync/ingress-sync/pkg/syncer"
	"github.com/ingress-sync/ingress-sync/pkg/syncer/syncertest"
	"github.com/ingress-sync/ingress-sync/test/testkit/natstest"
)

const (
	testStream = "CHURNTEST"
	testPrefix = "churntest"
)

var testModel = model.Options{ControllerClass: "k8s.io/ingress-sync", IngressClass: "ingress-sync"}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testStreamEnv starts an embedded NATS server with the test stream,
// keeping history messages per object (-1: all).
func testStreamEnv(t testing.TB, history int64) *stream.Conn {
	t.Helper()
	_, url := natstest.Start(t)
	conn := natstest.Dial(t, url)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := stream.Ensure(ctx, conn.JetStream(), stream.Config{Name: testStream, SubjectPrefix: testPrefix, History: history}); err != nil {
		t.Fatal(err)
	}
	return conn
}

// storeFeeder applies every event it gets to a model.Store.
type storeFeeder struct {
	store           *model.Store
	events, refused int
	caughtUp        chan struct{}
}

func (f *storeFeeder) HandleEvent(_ context.Context, ev events.Event) error {
	f.events++
	if _, err := f.store.Apply(ev); err != nil {
		f.refused++
	}
	return nil
}

func (f *storeFeeder) CaughtUp(context.Context) { close(f.caughtUp) }

func TestStreamTargetPublishesEventsTheStoreAccepts(t *testing.T) {
	js := testStreamEnv(t, -1).JetStream()
	spec := smallSpec()
	spec.Events = 400
	g, err := NewGenerator(spec, testPool)
	if err != nil {
		t.Fatal(err)
	}
	target, err := NewStreamTarget(js, testPrefix, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	setup := g.Setup(testModel.ControllerClass)
	if err := target.Setup(ctx, nil, setup); err != nil {
		t.Fatal(err)
	}
	for ch, ok := g.Next(); ok; ch, ok = g.Next() {
		if _, err := target.Write(ctx, ch); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := target.Flush(ctx); n != 0 || err != nil {
		t.Fatalf("Flush: %d failed, %v", n, err)
	}
	// Read the whole history back, as a replay does.
	f := &storeFeeder{store: model.NewStore(ingress.NewSource()), caughtUp: make(chan struct{})}
	var undecodable atomic.Int64
	c, err := stream.NewConsumer(js, testStream, testPrefix, f, stream.WithStartSequence(1), stream.WithConsumerLogger(quietLogger()),
		stream.WithDecodeErrorHandler(func(uint64, string, error) { undecodable.Add(1) }))
	if err != nil {
		t.Fatal(err)
	}
	cctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Start(cctx) }()
	select {
	case <-f.caughtUp:
	case <-ctx.Done():
		t.Fatal("consumer did not catch up")
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if want := len(setup) + spec.Events; f.events != want || f.refused != 0 || undecodable.Load() != 0 {
		t.Fatalf("%d events read (%d refused by the store, %d undecodable), want %d accepted", f.events, f.refused, undecodable.Load(), want)
	}
	cfg := model.Build(f.store, testModel)
	if want := 1 + spec.Ingresses + len(g.extras); len(cfg.Servers) != want || len(cfg.Problems) != 0 {
		t.Fatalf("built %d servers with problems %v, want %d servers and no problem", len(cfg.Servers), cfg.Problems, want)
	}
}

// startTestSyncer runs a pkg/syncer Syncer with a recording applier (syncertest) on the
// test stream, reporting its status on NATS as the syncer binary does.
func startTestSyncer(t *testing.T, nc *nats.Conn, js jetstream.JetStream) *syncer.Syncer {
	t.Helper()
	report := func(_ context.Context, st events.SyncerStatus) error {
		data, err := events.EncodeStatus(st)
		if err != nil {
			return err
		}
		return nc.Publish(events.StatusSubject(testPrefix, st.Pod), data)
	}
	s, err := syncer.New(syncertest.New(), syncer.Options{Model: testModel, Pod: "syncer-test", Report: report, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	c, err := stream.NewConsumer(js, testStream, testPrefix, s, stream.WithConsumerLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = s.Start(ctx) })
	wg.Go(func() { _ = c.Start(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return s
}

func TestRunStreamEveryEventApplied(t *testing.T) {
	conn := testStreamEnv(t, 0)
	js := conn.JetStream()
	s := startTestSyncer(t, conn.NATS(), js)
	target, err := NewStreamTarget(js, testPrefix, 0)
	if err != nil {
		t.Fatal(err)
	}
	spec := smallSpec()
	spec.EndpointRate, spec.IngressRate, spec.SecretRate, spec.Events = 400, 40, 10, 450
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{
		Spec: spec, ControllerClass: testModel.ControllerClass, Certs: testPool, Target: target, TargetName: "stream",
		NATS: conn, Stream: testStream, Prefix: testPrefix, Syncers: []SyncerRef{{Pod: "syncer-test"}},
		Processes: []ProcessSpec{{Name: "test", Pid: os.Getpid()}}, Logger: quietLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	e := rep.Events
	if e.Offered != 450 || e.Completed != 450 || e.Failed != 0 {
		t.Fatalf("events %+v, want 450 offered and written, none failed", e)
	}
	a := rep.Applied
	if a.Samples != 450 || a.Unmatched != 0 || a.Unapplied != 0 {
		t.Fatalf("applied %+v, want all 450 writes seen on the stream and applied", a)
	}
	if got := s.Status().Sequence; got != rep.Stream.LastSeq || rep.Stream.FinalLag != 0 {
		t.Fatalf("syncer at sequence %d, stream at %d (final lag %d)", got, rep.Stream.LastSeq, rep.Stream.FinalLag)
	}
	if p := rep.Processes; len(p) != 1 || p[0].RSSMaxMB <= 0 {
		t.Fatalf("processes %+v, want this one with its RSS", p)
	}
}
