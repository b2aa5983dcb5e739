package syncer

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/model"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
	"github.com/ingress-sync/ingress-sync/pkg/syncer/syncertest"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
	"github.com/ingress-sync/ingress-sync/test/testkit/natstest"
)

// The Syncer is the Handler of the syncer's stream.Consumer.
var _ stream.Handler = (*Syncer)(nil)

// TestFromRealStream runs the Syncer behind a real stream.Consumer on a real
// nats-server: malformed messages are counted and skipped, invalid Ingresses
// are left out with a reason, and everything else is served.
func TestFromRealStream(t *testing.T) {
	_, url := natstest.Start(t)
	_, js := natstest.Connect(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := stream.Ensure(ctx, js, stream.Config{Name: "INGRESS", SubjectPrefix: "ingress"}); err != nil {
		t.Fatal(err)
	}
	pub, err := stream.NewPublisher(js, "ingress")
	if err != nil {
		t.Fatal(err)
	}
	objs := []runtime.Object{
		fixtures.Service("shop", "web", 80),
		fixtures.EndpointSlice("shop", "web-1", "web", 8080, "198.18.0.1"),
		fixtures.Ingress("shop", "good", fixtures.Rule("good.example.com", fixtures.Prefix("/", "web", 80))),
		fixtures.Ingress("shop", "relative", fixtures.Rule("rel.example.com", fixtures.Prefix("api", "web", 80))),
		fixtures.Ingress("shop", "unknown-svc", fixtures.Rule("unknown.example.com", fixtures.Prefix("/", "nope", 80))),
		fixtures.Ingress("shop", "bad-port", fixtures.Rule("port.example.com", fixtures.Prefix("/", "web", 81))),
	}
	for _, obj := range objs {
		if err := pub.Publish(ctx, eventFor(t, obj)); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// Garbage on a valid subject, as a broken or hostile publisher might send.
	garbage := &nats.Msg{Subject: events.Subject("ingress", events.KindIngress, "shop", "garbage"), Data: []byte{0xc1, 0xff, 0x00}}
	if _, err := js.PublishMsg(ctx, garbage); err != nil {
		t.Fatal(err)
	}

	var logs strings.Builder
	rec := syncertest.New()
	reg := prometheus.NewRegistry()
	s, err := New(rec, Options{Pod: "p", Registerer: reg, Holdoff: 20 * time.Millisecond, MaxHoldoff: time.Second,
		Model:  model.Options{ControllerClass: "k8s.io/ingress-sync", IngressClass: "nginx"},
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	c, err := stream.NewConsumer(js, "INGRESS", "ingress", s, stream.WithDecodeErrorHandler(s.DecodeError),
		stream.WithConsumerLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { _ = c.Start(runCtx); done <- struct{}{} }()
	go func() { _ = s.Start(runCtx); done <- struct{}{} }()
	defer func() { stop(); <-done; <-done }()

	deadline := time.Now().Add(20 * time.Second)
	for !s.Ready() || s.Status().Sequence < uint64(len(objs)+1) {
		if time.Now().After(deadline) {
			t.Fatalf("not applied: status %+v", s.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := testutil.ToFloat64(s.m.decodeErrors); got != 1 {
		t.Fatalf("decode_errors = %v, want 1", got)
	}
	if !strings.Contains(logs.String(), "undecodable message skipped") || !strings.Contains(logs.String(), "seq=7") {
		t.Fatalf("no log line naming the bad message's sequence:\n%s", logs.String())
	}
	// Invalid paths are left out: their hosts only answer the built-in 404.
	cfg := s.Running()
	for _, srv := range cfg.Servers {
		served := 0
		for _, l := range srv.Locations {
			if l.Backend != "" {
				served++
			}
		}
		if want := map[bool]int{true: 1, false: 0}[srv.Hostname == "good.example.com"]; served != want {
			t.Errorf("server %s routes %d locations to backends, want %d: %+v", srv.Hostname, served, want, srv.Locations)
		}
	}
	left := map[string]bool{}
	for _, p := range cfg.Problems {
		left[p.Name] = true
	}
	for _, name := range []string{"relative", "unknown-svc", "bad-port"} {
		if !left[name] {
			t.Errorf("no problem reported for invalid Ingress %s: %+v", name, cfg.Problems)
		}
	}
}

func eventFor(t *testing.T, obj runtime.Object) events.Event {
	t.Helper()
	m := objectMeta(t, obj)
	return events.Event{Op: events.OpCreate, Kind: events.KindOf(obj), Namespace: m.GetNamespace(), Name: m.GetName(),
		UID: "uid-" + m.GetName(), ResourceVersion: "1", ObservedAt: time.Now(), SchemaVersion: events.SchemaVersion,
		WatcherID: "test", Object: obj}
}
