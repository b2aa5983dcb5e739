package watch

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// fakeAPI is a RoundTripper and a probe for one API server that is
// reachable or not.
type fakeAPI struct {
	down     atomic.Bool
	requests atomic.Int32
	probes   atomic.Int32
}

func (f *fakeAPI) RoundTrip(req *http.Request) (*http.Response, error) {
	f.requests.Add(1)
	if f.down.Load() {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	}
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(http.NoBody), Request: req}, nil
}

func (f *fakeAPI) probe(context.Context) error {
	f.probes.Add(1)
	if f.down.Load() {
		return errors.New("connection refused")
	}
	return nil
}

// waitUntil polls cond; the deadline only turns a hang into a failure.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func newTestGate(t *testing.T, api *fakeAPI) (*apiGate, *metrics, *atomic.Int32) {
	t.Helper()
	m, err := newMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	var back atomic.Int32
	g := newAPIGate(10*time.Millisecond, 0, api.probe, slog.New(slog.DiscardHandler), m)
	g.back = func() { back.Add(1) }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = g.Start(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return g, m, &back
}

// TestAPIGateHoldsRequestsUntilTheAPIAnswers: a request that cannot reach
// the API closes the gate; the next one waits there (it never reaches the
// transport) while the probe fails, and goes once the probe succeeds. A
// GET that found the API unreachable is sent again then, and succeeds;
// another method returns the failure.
func TestAPIGateHoldsRequestsUntilTheAPIAnswers(t *testing.T) {
	api := &fakeAPI{}
	g, m, back := newTestGate(t, api)
	rt := &gatedTransport{gate: g, next: api}
	send := func(ctx context.Context, method string) error {
		req, err := http.NewRequestWithContext(ctx, method, "https://api.test/api", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := rt.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	get := func(ctx context.Context) error { return send(ctx, http.MethodGet) }
	if err := get(t.Context()); err != nil {
		t.Fatalf("API up: %v", err)
	}
	api.down.Store(true)
	if err := send(t.Context(), http.MethodPut); err == nil {
		t.Fatal("API down: the PUT succeeded")
	}
	if got := testutil.ToFloat64(m.apiReachable); got != 0 {
		t.Fatalf("api_reachable %v after a refused connection, want 0", got)
	}
	var held sync.WaitGroup
	var heldErr error
	held.Go(func() { heldErr = get(t.Context()) })
	waitUntil(t, "three failed probes", func() bool { return api.probes.Load() >= 3 })
	if n := api.requests.Load(); n != 2 {
		t.Fatalf("%d requests reached the API while the gate was closed, want 2 (the held one must wait)", n)
	}
	api.down.Store(false)
	held.Wait()
	if heldErr != nil {
		t.Fatalf("the held request: %v", heldErr)
	}
	if n := api.requests.Load(); n != 3 {
		t.Fatalf("%d requests reached the API, want 3", n)
	}
	waitUntil(t, "the recovery signalled", func() bool { return back.Load() == 1 })
	if got := testutil.ToFloat64(m.apiOutages); got != 1 {
		t.Errorf("api_outages_total %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.apiReachable); got != 1 {
		t.Errorf("api_reachable %v after the recovery, want 1", got)
	}
}

// TestAPIGateSendsAFailedGetAgain: a GET that finds the API unreachable
// waits for the gate to open and is sent again: its caller sees success.
func TestAPIGateSendsAFailedGetAgain(t *testing.T) {
	api := &fakeAPI{}
	api.down.Store(true)
	g, _, _ := newTestGate(t, api)
	rt := &gatedTransport{gate: g, next: api}
	errc := make(chan error, 1)
	go func() {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://api.test/api", nil)
		if err != nil {
			errc <- err
			return
		}
		resp, err := rt.RoundTrip(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	waitUntil(t, "the GET to fail and a failed probe", func() bool { return api.requests.Load() >= 1 && api.probes.Load() >= 1 })
	api.down.Store(false)
	if err := <-errc; err != nil {
		t.Fatalf("the GET: %v, want success once the API answers", err)
	}
	if n := api.requests.Load(); n != 2 {
		t.Errorf("%d requests reached the API, want 2", n)
	}
}

// TestAPIGateHeldRequestEndsWithItsContext: a request held at the closed
// gate returns its context's error when that ends.
func TestAPIGateHeldRequestEndsWithItsContext(t *testing.T) {
	api := &fakeAPI{}
	api.down.Store(true)
	g, _, _ := newTestGate(t, api)
	g.shut(errors.New("test: unreachable"))
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- g.wait(ctx) }()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("wait = %v, want context.Canceled", err)
	}
}

func TestReleaseDelay(t *testing.T) {
	half := func(n int64) int64 { return n / 2 }
	tests := []struct {
		name   string
		first  bool
		jitter time.Duration
		want   time.Duration
	}{
		{"leader goes at once", true, time.Second, 0},
		{"standby waits its jitter", false, time.Second, 500 * time.Millisecond},
		{"no jitter", false, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := releaseDelay(tc.first, tc.jitter, half); got != tc.want {
				t.Errorf("releaseDelay(%v, %s) = %s, want %s", tc.first, tc.jitter, got, tc.want)
			}
		})
	}
}

func TestUnreachable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{"connection dropped", io.ErrUnexpectedEOF, true},
		{"canceled", context.Canceled, false},
		{"other", errors.New("x509: certificate signed by unknown authority"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := unreachable(tc.err); got != tc.want {
				t.Errorf("unreachable(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
