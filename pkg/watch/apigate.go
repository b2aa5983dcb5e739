package watch

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
)

// The recovery from a kube-apiserver outage. client-go's reflectors retry a
// failed watch with an exponential backoff that reaches 30 s and is
// jittered up to twice that: after an outage of 20 s or more, the
// informers could go on without a watch for up to a minute while the API
// answered again, and no change was published.
//
// The informers therefore list and watch through an apiGate (with
// Config.RESTConfig). The first request that cannot reach the API closes
// the gate; from then on the informers' requests wait at the gate instead
// of failing, and a list or watch that found the API unreachable waits
// there too and is sent again once the gate opens. So the reflectors see
// no failure and their backoff does not grow (client-go keeps it for two
// minutes: outages close together would add up). Meanwhile the gate probes
// /readyz every Config.APIProbeInterval. Once the API answers ready, the
// gate opens and every held request goes at once: each informer resumes its
// watch where it stopped (one list per informer when the API no longer
// holds that version), within a probe interval of the API's return.
// A standby replica opens its gate after a random delay below
// Config.APIRecoveryJitter, so that many replicas do not all list at the
// same moment; the replica that led when the outage began opens at once.
// Then the leader reconciles the stream with its caches, as it does when it
// takes the Lease (apiBack, guardStream).

// apiGate holds the informers' requests while the API is unreachable.
type apiGate struct {
	probe    func(ctx context.Context) error
	interval time.Duration
	maxHold  time.Duration // the longest a request waits at the closed gate
	jitter   time.Duration
	leading  func() bool // whether this replica leads now
	back     func()      // called once the gate opened after an outage
	log      *slog.Logger
	metrics  *metrics

	mu        sync.Mutex
	open      chan struct{} // closed while the gate is open
	downAt    time.Time
	ledAtDown bool
	closed    chan struct{} // receives when the gate closes (capacity 1)
}

// maxHoldIntervals bounds a request's wait at the closed gate, in probe
// intervals: a request held that long goes anyway (and fails if the API is
// still away), so that nothing waits without a bound.
const maxHoldIntervals = 60

func newAPIGate(interval, jitter time.Duration, probe func(context.Context) error, log *slog.Logger, m *metrics) *apiGate {
	g := &apiGate{probe: probe, interval: interval, maxHold: maxHoldIntervals * interval, jitter: jitter,
		leading: func() bool { return false }, back: func() {}, log: log, metrics: m,
		open: make(chan struct{}), closed: make(chan struct{}, 1)}
	close(g.open)
	m.apiReachable.Set(1)
	return g
}

// wrap returns a copy of cfg whose requests pass the gate.
func (g *apiGate) wrap(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	inner := c.WrapTransport
	c.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		if inner != nil {
			rt = inner(rt)
		}
		return &gatedTransport{gate: g, next: rt}
	}
	return c
}

// gatedTransport is one client's transport behind the gate.
type gatedTransport struct {
	gate *apiGate
	next http.RoundTripper
}

// gateRetries bounds how often a GET that found the API unreachable is
// sent again once the gate opens.
const gateRetries = 3

// RoundTrip waits while the gate is closed (bounded by the request's
// context and maxHold) and sends the request. When the API could not be
// reached, it closes the gate and, for a GET (an informer's list or
// watch, which has no body), waits for the gate to open and sends it
// again, up to gateRetries times: the reflector never sees the failure, so
// its backoff, which client-go keeps for two minutes across outages, does
// not grow.
func (t *gatedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		if err := t.gate.wait(req.Context()); err != nil {
			return nil, err
		}
		resp, err := t.next.RoundTrip(req)
		if err == nil || req.Context().Err() != nil || !unreachable(err) {
			return resp, err
		}
		t.gate.shut(err)
		if req.Method != http.MethodGet || (req.Body != nil && req.Body != http.NoBody) || attempt >= gateRetries {
			return resp, err
		}
	}
}

// unreachable reports whether err says the API server could not be
// reached or dropped the connection: not an answer of the API.
func unreachable(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// wait returns once the gate is open, the request's context ended, or the
// request was held maxHold.
func (g *apiGate) wait(ctx context.Context) error {
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	select {
	case <-open:
		return nil
	default:
	}
	t := time.NewTimer(g.maxHold)
	defer t.Stop()
	select {
	case <-open:
		return nil
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// shut closes the gate after a request found the API unreachable.
func (g *apiGate) shut(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		return // closed already
	}
	g.open = make(chan struct{})
	g.downAt, g.ledAtDown = time.Now(), g.leading()
	g.metrics.apiReachable.Set(0)
	g.metrics.apiOutages.Inc()
	g.log.Warn("kube-apiserver unreachable: holding the informers' requests until it answers ready", "err", err,
		"probeEvery", g.interval)
	select {
	case g.closed <- struct{}{}:
	default:
	}
}

// Start runs the gate's probe until ctx ends: whenever the gate is closed,
// it probes the API every interval and opens the gate once it answers.
func (g *apiGate) Start(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-g.closed:
		}
		if !g.awaitAPI(ctx) {
			return nil
		}
		g.reopen(ctx)
	}
}

// awaitAPI probes the API every interval, each probe bounded by the
// interval, until one succeeds (true) or ctx ends (false).
func (g *apiGate) awaitAPI(ctx context.Context) bool {
	tick := time.NewTicker(g.interval)
	defer tick.Stop()
	for attempt := 1; ; attempt++ {
		pctx, cancel := context.WithTimeout(ctx, g.interval)
		err := g.probe(pctx)
		cancel()
		if err == nil {
			return true
		}
		g.log.Debug("kube-apiserver probe failed", "attempt", attempt, "err", err)
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// reopen opens the gate: at once on the replica that leads or led when
// the outage began, after a random delay below jitter on the others.
func (g *apiGate) reopen(ctx context.Context) {
	g.mu.Lock()
	first := g.ledAtDown || g.leading()
	downAt := g.downAt
	g.mu.Unlock()
	delay := releaseDelay(first, g.jitter, rand.Int64N)
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	g.mu.Lock()
	close(g.open)
	g.mu.Unlock()
	g.metrics.apiReachable.Set(1)
	g.log.Info("kube-apiserver answers again: the informers resume their watches", "unreachableFor",
		time.Since(downAt).Round(time.Millisecond), "releaseDelay", delay.Round(time.Millisecond), "leading", first)
	g.back()
}

// releaseDelay is how long a replica waits before it lets its informers
// go: nothing for the replica that leads or led (first), else a random
// delay below jitter; randN returns a number in [0, n), as rand.Int64N.
func releaseDelay(first bool, jitter time.Duration, randN func(n int64) int64) time.Duration {
	if first || jitter <= 0 {
		return 0
	}
	return time.Duration(randN(int64(jitter)))
}

// readyzProbe asks the API server's /readyz through client.
func readyzProbe(client rest.Interface) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		return client.Get().AbsPath("/readyz").Do(ctx).Error()
	}
}

// gatedClients builds the informers' clients behind a new gate from
// cfg.RESTConfig, and the gate; without RESTConfig it returns cfg's
// clients and a nil gate.
func gatedClients(cfg Config, log *slog.Logger, m *metrics) (kubernetes.Interface, gatewayclient.Interface, *apiGate, error) {
	if cfg.RESTConfig == nil {
		return cfg.Client, cfg.GatewayClient, nil, nil
	}
	probeClient, err := kubernetes.NewForConfig(cfg.RESTConfig)
	if err != nil {
		return nil, nil, nil, err
	}
	g := newAPIGate(cfg.APIProbeInterval, cfg.APIRecoveryJitter, readyzProbe(probeClient.Discovery().RESTClient()), log, m)
	gated := g.wrap(cfg.RESTConfig)
	client, err := kubernetes.NewForConfig(gated)
	if err != nil {
		return nil, nil, nil, err
	}
	gw := cfg.GatewayClient
	if gw != nil {
		if gw, err = gatewayclient.NewForConfig(gated); err != nil {
			return nil, nil, nil, err
		}
	}
	return client, gw, g, nil
}
