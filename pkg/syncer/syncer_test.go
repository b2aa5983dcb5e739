package syncer

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/internal/fixtures"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/model"
)

// recorder is a recording Applier for unit tests; the real one is
// pkg/nginx's, tested against real nginx there and in test/e2e.
type recorder struct {
	mu        sync.Mutex
	calls     []string // "reload <checksum>" or "update"
	updates   []model.Change
	failNext  error
	callsSeen chan struct{}
}

func newRecorder() *recorder { return &recorder{callsSeen: make(chan struct{}, 100)} }

func (r *recorder) Reload(_ context.Context, cfg *model.Configuration) error {
	return r.record("reload "+cfg.Checksum, nil)
}

func (r *recorder) Update(_ context.Context, ch model.Change) error {
	return r.record("update", &ch)
}

func (r *recorder) record(call string, ch *model.Change) error {
	r.mu.Lock()
	defer func() { r.mu.Unlock(); r.callsSeen <- struct{}{} }()
	if err := r.failNext; err != nil {
		r.failNext = nil
		r.calls = append(r.calls, "failed "+call)
		return err
	}
	r.calls = append(r.calls, call)
	if ch != nil {
		r.updates = append(r.updates, *ch)
	}
	return nil
}

func (r *recorder) snapshot() ([]string, []model.Change) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...), append([]model.Change(nil), r.updates...)
}

type harness struct {
	t   *testing.T
	s   *Syncer
	rec *recorder
	reg *prometheus.Registry
	seq uint64
}

func start(t *testing.T, opts Options) *harness {
	t.Helper()
	h := &harness{t: t, rec: newRecorder(), reg: prometheus.NewRegistry()}
	opts.Pod, opts.Registerer = "test-pod", h.reg
	opts.Model = model.Options{ControllerClass: "k8s.io/ingress-sync", IngressClass: "nginx"}
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
		calls, _ := h.rec.snapshot()
		if len(calls) >= n {
			return calls
		}
		select {
		case <-h.rec.callsSeen:
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
	if calls, _ := h.rec.snapshot(); len(calls) != 0 {
		t.Fatalf("applied before caught up: %v", calls)
	}
	h.s.CaughtUp(context.Background())
	calls := h.waitCalls(1)
	h.settle()
	calls, _ = h.rec.snapshot()
	cfg := h.s.Running()
	if cfg == nil || len(calls) != 1 || calls[0] != "reload "+cfg.Checksum {
		t.Fatalf("calls %v, want one reload of the running config", calls)
	}
	if got := len(cfg.Backends); got != 1 {
		t.Fatalf("reloaded configuration has %d backends, want 1", got)
	}
	if !h.s.Ready() || h.s.Status().Sequence != 3 {
		t.Fatalf("status %+v, want ready at sequence 3", h.s.Status())
	}
}

func TestClassifiesAndCoalesces(t *testing.T) {
	h := start(t, Options{Holdoff: 300 * time.Millisecond, MaxHoldoff: 5 * time.Second})
	baseObjects(h)
	h.s.CaughtUp(context.Background())
	h.settle()

	// A burst of endpoint changes: one dynamic update, no reload.
	for i := range 20 {
		addrs := []string{"198.18.0.1", "198.18.0." + string(rune('2'+i%5))}
		h.send(events.OpUpdate, fixtures.EndpointSlice("default", "web-1", "web", 8080, addrs...))
	}
	h.waitCalls(2)
	h.settle()
	calls, updates := h.rec.snapshot()
	if len(calls) != 2 || calls[1] != "update" {
		t.Fatalf("calls %v, want one coalesced update after bootstrap", calls)
	}
	if eps := updates[len(updates)-1].BackendsUpserted[0].Endpoints; len(eps) != 2 {
		t.Fatalf("update carries %d endpoints, want the final 2", len(eps))
	}

	// Nothing the configuration reads: skipped as equal.
	skipped := testutil.ToFloat64(h.s.m.skippedEqual)
	svc := fixtures.Service("default", "web", 80)
	svc.Labels = map[string]string{"team": "a"}
	h.send(events.OpUpdate, svc)
	h.settle()
	if got := testutil.ToFloat64(h.s.m.skippedEqual); got != skipped+1 {
		t.Fatalf("skipped_equal %v, want %v", got, skipped+1)
	}

	// A new path: a reload.
	h.send(events.OpUpdate, fixtures.Ingress("default", "web", fixtures.Rule("a.example.com",
		fixtures.Prefix("/", "web", 80), fixtures.Exact("/x", "web", 80))))
	h.settle()
	calls, _ = h.rec.snapshot()
	if len(calls) != 3 || calls[2] != "reload "+h.s.Running().Checksum {
		t.Fatalf("calls %v, want a reload last", calls)
	}
}

func TestFailedApplyKeepsRunningAndRetries(t *testing.T) {
	h := start(t, Options{RetryMin: 50 * time.Millisecond, RetryMax: 100 * time.Millisecond})
	baseObjects(h)
	h.s.CaughtUp(context.Background())
	h.settle()
	before := h.s.Running()

	h.rec.mu.Lock()
	h.rec.failNext = errors.New("nginx -t: unexpected }")
	h.rec.mu.Unlock()
	h.send(events.OpUpdate, fixtures.Ingress("default", "web", fixtures.Rule("b.example.com", fixtures.Prefix("/", "web", 80))))
	h.settle()
	calls, _ := h.rec.snapshot()
	if len(calls) != 3 || calls[1] != "failed reload "+checksumOf(t, calls[2]) {
		t.Fatalf("calls %v, want a failed reload then its retry", calls)
	}
	if got := testutil.ToFloat64(h.s.m.applyErrors.WithLabelValues("reload")); got != 1 {
		t.Fatalf("apply_errors{reload} = %v, want 1", got)
	}
	h.settle()
	if h.s.Running() == before || h.s.Status().LastError != "" {
		t.Fatalf("retry did not apply: status %+v", h.s.Status())
	}
}

func checksumOf(t *testing.T, call string) string {
	t.Helper()
	const p = "reload "
	if len(call) <= len(p) || call[:len(p)] != p {
		t.Fatalf("call %q is not a reload", call)
	}
	return call[len(p):]
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
			if _, err := New(newRecorder(), tc.opts); !errors.Is(err, ErrInvalidOptions) {
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
