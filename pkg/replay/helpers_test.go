package replay

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/model"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
	"github.com/ingress-sync/ingress-sync/test/testkit/natstest"
)

const (
	testStream     = "INGRESS"
	testPrefix     = "ingress"
	testController = "k8s.io/ingress-sync"
	testTimeout    = 30 * time.Second
)

// testModelOptions are the syncer flags of every test.
func testModelOptions() model.Options {
	return model.Options{ControllerClass: testController, IngressClass: "nginx", ConfigMap: "kube-system/ingress-sync"}
}

// recorder publishes events into a real embedded nats-server, the way the
// watcher does (msgpack payload, readable headers, Nats-Msg-Id), and keeps
// what it published with the stream sequences.
type recorder struct {
	t      testing.TB
	js     jetstream.JetStream
	rv     int
	events []events.Event
	// after, when set, is called after each publish (a live syncer test
	// waits there until the syncer has applied the event).
	after func(seq uint64)
}

// newRecorder starts a server and creates the stream with history messages
// per subject (-1 unlimited).
func newRecorder(t testing.TB, history int64) *recorder {
	t.Helper()
	_, url := natstest.Start(t)
	_, js := natstest.Connect(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := stream.Ensure(ctx, js, stream.Config{Name: testStream, SubjectPrefix: testPrefix, History: history}); err != nil {
		t.Fatalf("EnsureStream: %v", err)
	}
	return &recorder{t: t, js: js}
}

// publish sends one event for obj (a fresh resourceVersion each time, so
// that deduplication keeps every change) and returns its stream sequence.
func (r *recorder) publish(op events.Op, obj runtime.Object) uint64 {
	r.t.Helper()
	obj = obj.DeepCopyObject()
	meta := obj.(metav1.Object)
	r.rv++
	meta.SetResourceVersion(strconv.Itoa(r.rv))
	ev := events.Event{Op: op, Kind: events.KindOf(obj), Namespace: meta.GetNamespace(), Name: meta.GetName(),
		UID: string(meta.GetUID()), ResourceVersion: meta.GetResourceVersion(), WatcherID: "watcher-test",
		ObservedAt: fixtures.Epoch.Add(time.Duration(r.rv) * time.Second), Object: obj}
	seq := r.publishRaw(events.Subject(testPrefix, ev.Kind, ev.Namespace, ev.Name), events.Headers(ev), mustEncode(r.t, ev))
	ev.Sequence = seq
	r.events = append(r.events, ev)
	if r.after != nil {
		r.after(seq)
	}
	return seq
}

func (r *recorder) publishRaw(subject string, h nats.Header, data []byte) uint64 {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	msg := nats.NewMsg(subject)
	msg.Header, msg.Data = h, data
	ack, err := r.js.PublishMsg(ctx, msg)
	if err != nil {
		r.t.Fatalf("publish %s: %v", subject, err)
	}
	return ack.Sequence
}

func mustEncode(t testing.TB, ev events.Event) []byte {
	t.Helper()
	data, err := events.Encode(ev)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return data
}

// buildUpTo is what a live syncer builds once it has applied exactly the
// recorded events with sequence <= seq.
func (r *recorder) buildUpTo(seq uint64, opts model.Options) *config.Configuration {
	r.t.Helper()
	s := model.NewStore(ingress.NewSource())
	for _, ev := range r.events {
		if ev.Sequence <= seq {
			if _, err := s.Apply(ev); err != nil {
				r.t.Fatalf("apply seq %d: %v", ev.Sequence, err)
			}
		}
	}
	return model.Build(s, opts)
}

// timeOf is the stream timestamp of message seq.
func (r *recorder) timeOf(seq uint64) time.Time {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	s, err := r.js.Stream(ctx, testStream)
	if err == nil {
		var m *jetstream.RawStreamMsg
		if m, err = s.GetMsg(ctx, seq); err == nil {
			return m.Time
		}
	}
	r.t.Fatalf("get message %d: %v", seq, err)
	return time.Time{}
}

func (r *recorder) replayer(opts model.Options) *Replayer {
	r.t.Helper()
	rp, err := New(r.js, Options{Stream: testStream, SubjectPrefix: testPrefix, NewBuilder: testBuilder(opts), Timeout: testTimeout})
	if err != nil {
		r.t.Fatalf("New: %v", err)
	}
	return rp
}

// tlsSecret is the Secret of testdata/shop-tls.{crt,key}, a fixed
// certificate so that checksums in golden files do not change.
func tlsSecret(t testing.TB, ns, name string) *corev1.Secret {
	t.Helper()
	read := func(f string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return fixtures.TLSSecret(ns, name, &certs.Pair{CertPEM: read("shop-tls.crt"), KeyPEM: read("shop-tls.key")})
}

// scenario is the recorded story most tests replay. It returns the
// sequences of its notable events by name.
func scenario(r *recorder) map[string]uint64 {
	seqs := map[string]uint64{}
	pub := func(name string, op events.Op, obj runtime.Object) { seqs[name] = r.publish(op, obj) }
	web := func(opts ...fixtures.IngressOption) *networkingv1.Ingress {
		base := []fixtures.IngressOption{fixtures.Rule("shop.example.com", fixtures.Prefix("/", "web", 80))}
		return fixtures.Ingress("shop", "web", append(base, opts...)...)
	}
	pub("class", events.OpCreate, fixtures.IngressClass("nginx", testController, false))
	pub("web-svc", events.OpCreate, fixtures.Service("shop", "web", 80))
	pub("web-slice", events.OpCreate, fixtures.EndpointSlice("shop", "web-abc", "web", 8080, "10.0.0.1", "10.0.0.2"))
	pub("web-ing", events.OpCreate, web())
	pub("api-svc", events.OpCreate, fixtures.Service("shop", "api", 80))
	pub("api-slice", events.OpCreate, fixtures.EndpointSlice("shop", "api-xyz", "api", 9090, "10.0.1.1"))
	apiPath := fixtures.Rule("shop.example.com", fixtures.Prefix("/api", "api", 80))
	pub("api-route", events.OpUpdate, web(apiPath))
	pub("web-scale-down", events.OpUpdate, fixtures.EndpointSlice("shop", "web-abc", "web", 8080, "10.0.0.1"))
	pub("unused-svc", events.OpCreate, fixtures.Service("other", "unused", 80))
	pub("unused-slice", events.OpCreate, fixtures.EndpointSlice("other", "unused-1", "unused", 80, "10.9.0.1"))
	pub("cm", events.OpCreate, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "unrelated"}})
	pub("api-down", events.OpUpdate, fixtures.EndpointSlice("shop", "api-xyz", "api", 9090))
	pub("tls-secret", events.OpCreate, tlsSecret(r.t, "shop", "shop-tls"))
	pub("tls", events.OpUpdate, web(apiPath, fixtures.TLS("shop-tls", "shop.example.com")))
	pub("web-scale-up", events.OpUpdate, fixtures.EndpointSlice("shop", "web-abc", "web", 8080, "10.0.0.1", "10.0.0.3", "10.0.0.4"))
	pub("blog-svc", events.OpCreate, fixtures.Service("blog", "site", 8080))
	pub("blog-slice", events.OpCreate, fixtures.EndpointSlice("blog", "site-1", "site", 8080, "10.0.2.1"))
	pub("blog-ing", events.OpCreate, fixtures.Ingress("blog", "site", fixtures.Rule("blog.example.com", fixtures.Prefix("/", "site", 8080))))
	pub("api-up", events.OpUpdate, fixtures.EndpointSlice("shop", "api-xyz", "api", 9090, "10.0.1.2"))
	pub("blog-delete", events.OpDelete, fixtures.Ingress("blog", "site", fixtures.Rule("blog.example.com", fixtures.Prefix("/", "site", 8080))))
	pub("global", events.OpCreate, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "ingress-sync"},
		Data: map[string]string{"worker-processes": "2"}})
	return seqs
}

// testBuilder is the syncer's builder with opts, as `syncer replay` gives it.
func testBuilder(opts model.Options) func() Builder {
	return func() Builder { return model.NewIncremental(model.NewStore(ingress.NewSource()), opts) }
}
