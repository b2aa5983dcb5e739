package watch_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/watch"
	"github.com/ingress-sync/ingress-sync/test/testkit/natstest"
	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"
)

const (
	streamName = "INGRESS"
	prefix     = "ingress"
	// waitTimeout bounds every wait for something to happen.
	waitTimeout = 30 * time.Second
	pollEvery   = 50 * time.Millisecond
)

// env is one test's world: a fresh namespace on the shared control plane
// and its own embedded NATS server.
type env struct {
	client kubernetes.Interface
	rest   *rest.Config // what client was made from: the watchers' informers go through the API gate
	ns     string
	nats   *natstest.Server
	js     jetstream.JetStream
}

func newEnv(t *testing.T, opts ...natstest.Option) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("needs kube-apiserver and etcd (make controlplane); not run with -short")
	}
	client := controlPlane.Client(t)
	srv := natstest.New(t, opts...)
	_, js := natstest.Connect(t, srv.URL())
	return &env{client: client, rest: controlPlane.Config(), ns: testenv.NewNamespace(t, client), nats: srv, js: js}
}

// controller is the --controller-class of this test: IngressClasses are
// cluster-scoped, so each test has its own controller.
func (e *env) controller() string { return "example.com/ingress-sync-" + e.ns }

// config is a watcher configuration for this env: its namespace, one
// worker (so keys are published in the order they were queued), no leader
// election, and every TLS Secret published (so that tests of one kind need
// no Ingress; TestOnlyReferencedSecretsArePublished tests the default).
func (e *env) config(id string) watch.Config {
	return watch.Config{
		Client: e.client, RESTConfig: e.rest, NATSURL: e.nats.URL(), Stream: streamName, SubjectPrefix: prefix,
		WatchNamespace: e.ns, ConfigMaps: []string{e.ns + "/ingress-sync"},
		ControllerClass: e.controller(), WatcherID: id, Workers: 1, PublishAllTLSSecrets: true,
	}
}

// runningWatcher is a watcher started by a test, with its captured log.
type runningWatcher struct {
	*watch.Watcher
	id       string
	logs     *logBuffer
	cancel   context.CancelFunc
	done     chan error
	stopOnce sync.Once
}

// start runs a watcher until stop or the end of the test. Its log is shown
// when the test fails, or always with WATCH_TEST_LOGS=1.
func start(t *testing.T, cfg watch.Config) *runningWatcher {
	t.Helper()
	logs := &logBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	w, err := watch.New(cfg)
	if err != nil {
		t.Fatalf("watch.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rw := &runningWatcher{Watcher: w, id: cfg.WatcherID, logs: logs, cancel: cancel, done: make(chan error, 1)}
	go func() { rw.done <- w.Start(ctx) }()
	t.Cleanup(func() {
		rw.stop(t)
		if t.Failed() || os.Getenv("WATCH_TEST_LOGS") != "" {
			t.Logf("log of watcher %s:\n%s", rw.id, logs.String())
		}
	})
	return rw
}

// stop cancels the watcher and waits for Start to return.
func (rw *runningWatcher) stop(t *testing.T) {
	t.Helper()
	rw.stopOnce.Do(func() {
		rw.cancel()
		select {
		case err := <-rw.done:
			if err != nil {
				t.Errorf("watcher %s: Start returned %v", rw.id, err)
			}
		case <-time.After(waitTimeout):
			t.Errorf("watcher %s did not stop within %s", rw.id, waitTimeout)
		}
	})
}

// metric is the value of a counter or gauge of the watcher, 0 if absent.
func (rw *runningWatcher) metric(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	return gather(t, rw.Registry(), name, labels...)
}

// gather sums the series of name matching labels (key, value pairs) in reg.
func gather(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather metrics: %v", err)
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			if hasLabels(have, labels) {
				sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	return sum
}

func hasLabels(have map[string]string, want []string) bool {
	for i := 0; i+1 < len(want); i += 2 {
		if have[want[i]] != want[i+1] {
			return false
		}
	}
	return true
}

// logBuffer collects log output safely across goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// lines returns the log lines containing every one of parts.
func (b *logBuffer) lines(parts ...string) []string {
	var out []string
	for line := range strings.SplitSeq(b.String(), "\n") {
		match := line != ""
		for _, p := range parts {
			match = match && strings.Contains(line, p)
		}
		if match {
			out = append(out, line)
		}
	}
	return out
}

// message is one message of the stream, decoded.
type message struct {
	Seq     uint64
	Subject string
	Header  nats.Header
	Event   events.Event
}

func (m message) String() string {
	return fmt.Sprintf("#%d %s %s rv=%s by %s", m.Seq, m.Subject, m.Event.Op, m.Event.ResourceVersion, m.Event.WatcherID)
}

// messages reads the whole stream (it is small in tests).
func (e *env) messages(t *testing.T) []message {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	s, err := e.js.Stream(ctx, streamName)
	if err != nil {
		return nil // not created yet
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatalf("stream info: %v", err)
	}
	var out []message
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		raw, err := s.GetMsg(ctx, seq)
		if err != nil {
			continue // removed by the per-subject limit
		}
		ev, err := events.Decode(raw.Data)
		if err != nil {
			t.Fatalf("message %d on %s: %v", seq, raw.Subject, err)
		}
		out = append(out, message{Seq: seq, Subject: raw.Subject, Header: raw.Header, Event: ev})
	}
	return out
}

// lastSeq is the stream's last sequence number.
func (e *env) lastSeq(t *testing.T) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	s, err := e.js.Stream(ctx, streamName)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatalf("stream info: %v", err)
	}
	return info.State.LastSeq
}

// subject is the subject of an object of this env's namespace ("" for
// cluster-scoped kinds).
func (e *env) subject(kind events.Kind, name string) string {
	ns := e.ns
	if kind == events.KindIngressClass {
		ns = ""
	}
	return events.Subject(prefix, kind, ns, name)
}

// on returns the messages of one object.
func on(msgs []message, subject string) []message {
	var out []message
	for _, m := range msgs {
		if m.Subject == subject {
			out = append(out, m)
		}
	}
	return out
}

// waitMessage waits for a message of subject with op and returns it.
func (e *env) waitMessage(t *testing.T, subject string, op events.Op) message {
	t.Helper()
	var found message
	eventually(t, fmt.Sprintf("a %s message on %s", op, subject), func() bool {
		for _, m := range on(e.messages(t), subject) {
			if m.Event.Op == op {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

// eventually polls cond until it holds or waitTimeout passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	within(t, waitTimeout, what, cond)
}

// within polls cond until it holds or timeout passes.
func within(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(pollEvery)
	}
}

// create creates obj (of a published kind) or fails the test.
func (e *env) create(t *testing.T, obj runtime.Object) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	var err error
	switch o := obj.(type) {
	case *corev1.Service:
		_, err = e.client.CoreV1().Services(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *discoveryv1.EndpointSlice:
		_, err = e.client.DiscoveryV1().EndpointSlices(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *corev1.Secret:
		_, err = e.client.CoreV1().Secrets(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *corev1.ConfigMap:
		_, err = e.client.CoreV1().ConfigMaps(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *networkingv1.Ingress:
		_, err = e.client.NetworkingV1().Ingresses(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *networkingv1.IngressClass:
		_, err = e.client.NetworkingV1().IngressClasses().Create(ctx, o, metav1.CreateOptions{})
	default:
		t.Fatalf("create: unexpected %T", obj)
	}
	if err != nil {
		t.Fatalf("create %T: %v", obj, err)
	}
}

// setServicePort changes the port of a Service of the test's namespace.
func (e *env) setServicePort(t *testing.T, name string, port int32) *corev1.Service {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	svc := e.service(t, name)
	svc.Spec.Ports[0].Port = port
	svc, err := e.client.CoreV1().Services(e.ns).Update(ctx, svc, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}
