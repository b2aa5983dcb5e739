package syncer

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/model"
	"github.com/ingress-sync/ingress-sync/pkg/syncer/syncertest"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// calls describes the applier's calls: "reload <checksum>" or "update",
// "failed " before a call that returned an error.
func calls(a *syncertest.Applier) []string {
	var out []string
	for _, c := range a.Calls() {
		call := "update"
		if c.Change.Reload {
			call = "reload " + c.Checksum
		}
		if c.Err != nil {
			call = "failed " + call
		}
		out = append(out, call)
	}
	return out
}

type harness struct {
	t   *testing.T
	s   *Syncer
	rec *syncertest.Applier
	reg *prometheus.Registry
	seq uint64
}

func start(t *testing.T, opts Options) *harness {
	t.Helper()
	h := &harness{t: t, rec: syncertest.New(), reg: prometheus.NewRegistry()}
	opts.Pod, opts.Registerer = "test-pod", h.reg
	if opts.Model.ControllerClass == "" {
		opts.Model = model.Options{ControllerClass: "k8s.io/ingress-sync", IngressClass: "nginx", ConfigMap: "kube-system/ingress-sync"}
	}
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if opts.Holdoff == 0 {
		opts.Holdoff, opts.MaxHoldoff = 50*time.Millisecond, 2*time.Second
	}
	s, err := New(h.rec, opts)
	if err != nil {
		t.Fatal(err)
	}
	h.s = s
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	})
	return h
}

func (h *harness) send(op events.Op, obj runtime.Object) {
	h.t.Helper()
	h.seq++
	ev := events.Event{Op: op, Kind: events.KindOf(obj), Object: obj, Sequence: h.seq, ObservedAt: time.Now()}
	acc := objectMeta(h.t, obj)
	ev.Namespace, ev.Name = acc.GetNamespace(), acc.GetName()
	if err := h.s.HandleEvent(context.Background(), ev); err != nil {
		h.t.Fatalf("HandleEvent: %v", err)
	}
}

// waitCalls waits (bounded) until the applier has seen n calls.
func (h *harness) waitCalls(n int) []string {
	h.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		calls := calls(h.rec)
		if len(calls) >= n {
			return calls
		}
		select {
		case <-h.rec.Seen():
		case <-deadline:
			h.t.Fatalf("applier saw %d calls %v, want %d", len(calls), calls, n)
		}
	}
}

// settle waits (bounded) until the sync loop has built and applied, or
// skipped, everything sent so far.
func (h *harness) settle() {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for h.s.Status().Sequence != h.seq {
		if time.Now().After(deadline) {
			h.t.Fatalf("sync loop at sequence %d, want %d", h.s.Status().Sequence, h.seq)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func baseObjects(h *harness) {
	h.send(events.OpCreate, fixtures.Service("default", "web", 80))
	h.send(events.OpCreate, fixtures.EndpointSlice("default", "web-1", "web", 8080, "198.18.0.1"))
	h.send(events.OpCreate, fixtures.Ingress("default", "web", fixtures.Rule("a.example.com", fixtures.Prefix("/", "web", 80))))
}

func TestBootstrapAppliesOnceAfterCaughtUp(t *testing.T) {
	h := start(t, Options{})
	baseObjects(h)
	time.Sleep(200 * time.Millisecond)
	if calls := calls(h.rec); len(calls) != 0 {
		t.Fatalf("applied before caught up: %v", calls)
	}
	h.s.CaughtUp(context.Background())
	h.waitCalls(1)
	h.settle()
	calls := calls(h.rec)
	cfg := h.s.Running()
	if cfg == nil || len(calls) != 1 || calls[0] != "reload "+cfg.Checksum {
		t.Fatalf("calls %v, want one reload of the running config", calls)
	}
	if got := cfg.Backends.Len(); got != 1 {
		t.Fatalf("reloaded configuration has %d backends, want 1", got)
	}
	if !h.s.Ready() || h.s.Status().Sequence != 3 || h.s.Status().Reloads != 1 {
		t.Fatalf("status %+v, want ready at sequence 3 after the initial reload", h.s.Status())
	}
}

// TestClassifiesAndCoalesces: a burst of endpoint changes is one dynamic
// update; an event nothing reads is skipped as equal; hosts and paths are
// dynamic (route tables); only the global settings reload.
func TestClassifiesAndCoalesces(t *testing.T) {
	h := start(t, Options{Holdoff: 300 * time.Millisecond, MaxHoldoff: 5 * time.Second})
	baseObjects(h)
	h.s.CaughtUp(context.Background())
	h.settle()

	for i := range 20 {
		addrs := []string{"198.18.0.1", "198.18.0." + string(rune('2'+i%5))}
		h.send(events.OpUpdate, fixtures.EndpointSlice("default", "web-1", "web", 8080, addrs...))
	}
	h.waitCalls(2)
	h.settle()
	last := h.lastCall("one coalesced update after bootstrap", 2, "update")
	if eps := last.Change.BackendsUpserted[0].Endpoints; len(eps) != 2 {
		t.Fatalf("update carries %d endpoints, want the final 2", len(eps))
	}

	skipped := testutil.ToFloat64(h.s.m.skippedEqual)
	svc := fixtures.Service("default", "web", 80)
	svc.Labels = map[string]string{"team": "a"}
	h.send(events.OpUpdate, svc)
	h.settle()
	if got := testutil.ToFloat64(h.s.m.skippedEqual); got != skipped+1 {
		t.Fatalf("skipped_equal %v, want %v", got, skipped+1)
	}

	routes := []struct {
		name  string
		obj   runtime.Object
		hosts []string // upserted, then removed with a "-"
	}{
		{"new path", fixtures.Ingress("default", "web", fixtures.Rule("a.example.com",
			fixtures.Prefix("/", "web", 80), fixtures.Exact("/x", "web", 80))), []string{"a.example.com"}},
		{"new host", fixtures.Ingress("default", "b", fixtures.Rule("b.example.com", fixtures.Prefix("/", "web", 80))), []string{"b.example.com"}},
		{"host moved", fixtures.Ingress("default", "b", fixtures.Rule("c.example.com", fixtures.Prefix("/", "web", 80))), []string{"c.example.com", "-b.example.com"}},
	}
	for i, tc := range routes {
		h.send(events.OpUpdate, tc.obj)
		h.settle()
		ch := h.lastCall(tc.name, 3+i, "update").Change
		if got := hostsOf(ch); !slices.Equal(got, tc.hosts) {
			t.Errorf("%s: hosts %v, want %v", tc.name, got, tc.hosts)
		}
	}

	h.send(events.OpCreate, globalConfigMap(map[string]string{"worker-processes": "2"}))
	h.settle()
	h.lastCall("a reload for a global setting", 6, "reload "+h.s.Running().Checksum)
	if st := h.s.Status(); st.Reloads != 2 || st.DynamicUpdates != 4 {
		t.Errorf("status counts %d reloads, %d dynamic updates; want 2 (initial, global) and 4", st.Reloads, st.DynamicUpdates)
	}
}

// lastCall checks that the applier saw n calls, the last one want, and
// returns it.
func (h *harness) lastCall(what string, n int, want string) syncertest.Call {
	h.t.Helper()
	calls := calls(h.rec)
	if len(calls) != n || calls[n-1] != want {
		h.t.Fatalf("calls %v, want %s (%q as call %d)", calls, what, want, n)
	}
	return h.rec.Calls()[n-1]
}

// hostsOf lists the hosts a Change upserts, then those it removes with "-".
func hostsOf(ch config.Change) []string {
	var out []string
	for _, s := range ch.ServersUpserted {
		out = append(out, s.Hostname)
	}
	for _, h := range ch.ServersRemoved {
		out = append(out, "-"+h)
	}
	return out
}

// globalConfigMap is the controller ConfigMap of the harness's options.
func globalConfigMap(data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "ingress-sync"}, Data: data}
}

func TestFailedApplyKeepsRunningAndRetries(t *testing.T) {
	h := start(t, Options{RetryMin: 50 * time.Millisecond, RetryMax: 100 * time.Millisecond})
	baseObjects(h)
	h.s.CaughtUp(context.Background())
	h.settle()
	before := h.s.Running()

	h.rec.FailNext(errors.New("nginx -t: unexpected }"))
	h.send(events.OpUpdate, fixtures.Ingress("default", "web", fixtures.Rule("b.example.com", fixtures.Prefix("/", "web", 80))))
	h.settle()
	if calls := calls(h.rec); !slices.Equal(calls, []string{"reload " + before.Checksum, "failed update", "update"}) {
		t.Fatalf("calls %v, want a failed update then its retry", calls)
	}
	if got := testutil.ToFloat64(h.s.m.applyErrors.WithLabelValues("dynamic")); got != 1 {
		t.Fatalf("apply_errors{dynamic} = %v, want 1", got)
	}
	if h.s.Running() == before || h.s.Status().LastError != "" {
		t.Fatalf("retry did not apply: status %+v", h.s.Status())
	}
}

func TestBadEventsAreSkipped(t *testing.T) {
	h := start(t, Options{})
	baseObjects(h)
	// A Service event carrying an Ingress: the store refuses it.
	h.seq++
	err := h.s.HandleEvent(context.Background(), events.Event{Op: events.OpUpdate, Kind: events.KindService,
		Namespace: "default", Name: "web", Sequence: h.seq, Object: fixtures.Ingress("default", "web")})
	if err != nil {
		t.Fatalf("HandleEvent returned %v; bad events must be skipped, not fail the consumer", err)
	}
	h.seq++
	h.s.DecodeError(h.seq, "ingress.service.default.x", events.ErrMalformed)
	h.s.CaughtUp(context.Background())
	h.settle()
	if got := testutil.ToFloat64(h.s.m.storeErrors); got != 1 {
		t.Fatalf("store_errors = %v, want 1", got)
	}
	if got := testutil.ToFloat64(h.s.m.decodeErrors); got != 1 {
		t.Fatalf("decode_errors = %v, want 1", got)
	}
	if len(h.s.Running().Servers) < 2 {
		t.Fatalf("valid objects not served after a bad event: %+v", h.s.Running().Servers)
	}
}

func TestOptionsValidate(t *testing.T) {
	cases := []struct {
		name string
		opts Options
	}{
		{"no pod", Options{}},
		{"holdoff above max", Options{Pod: "p", Holdoff: time.Second, MaxHoldoff: time.Millisecond}},
		{"negative retry", Options{Pod: "p", RetryMin: -1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(syncertest.New(), tc.opts); !errors.Is(err, ErrInvalidOptions) {
				t.Fatalf("New: %v, want ErrInvalidOptions", err)
			}
		})
	}
}

func objectMeta(t *testing.T, obj runtime.Object) interface {
	GetNamespace() string
	GetName() string
} {
	t.Helper()
	m, ok := obj.(interface {
		GetNamespace() string
		GetName() string
	})
	if !ok {
		t.Fatalf("%T has no object meta", obj)
	}
	return m
}
