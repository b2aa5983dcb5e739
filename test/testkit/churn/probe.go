package churn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// ProbeConfig says how to check that nginx serves a new endpoint.
type ProbeConfig struct {
	// URL is nginx's HTTP address, e.g. "http://127.0.0.1:8080"; "" turns
	// probing off. Requests carry the Ingress's Host header.
	URL string
	// Concurrency is how many changes are followed at once; changes that
	// find every slot taken are not probed. Each sends one request every
	// Interval until the new endpoint answers or Timeout passes, so at
	// most Concurrency/Interval requests per second go to nginx.
	Concurrency int
	Interval    time.Duration
	Timeout     time.Duration
}

// withDefaults fills the zero fields: 2 at once, every 5ms, for 10s.
func (c ProbeConfig) withDefaults() ProbeConfig {
	if c.Concurrency <= 0 {
		c.Concurrency = 2
	}
	if c.Interval <= 0 {
		c.Interval = 5 * time.Millisecond
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	return c
}

// ProbeReport is what the probes saw.
type ProbeReport struct {
	Changes    int64  `json:"changes"`    // endpoint changes followed
	Skipped    int64  `json:"skipped"`    // not followed: every slot busy
	Requests   int64  `json:"requests"`   // requests sent
	Failed     int64  `json:"failed"`     // transport errors and answers other than 200 from a backend (but a 404 for a host not routed yet)
	Timeouts   int64  `json:"timeouts"`   // new endpoint not served within the timeout
	Superseded int64  `json:"superseded"` // a later change of the same Service came first
	FirstError string `json:"firstError,omitempty"`
	// TimedOut describes the first timeouts (maxTimedOut): the change, and
	// the backends that answered instead.
	TimedOut []string `json:"timedOut,omitempty"`
}

// maxTimedOut bounds ProbeReport.TimedOut.
const maxTimedOut = 10

// Prober follows endpoint changes and Ingress creates through nginx. The
// backends must be internal/echo servers named by their address: a new
// endpoint is served when a reply's X-Echo-Backend is the added address, a
// new Ingress when any backend answers its host (until then nginx answers
// 404, which is no failure).
type Prober struct {
	cfg    ProbeConfig
	client *http.Client
	slots  chan struct{}
	wg     sync.WaitGroup

	changes, skipped, requests, failed, timeouts, superseded atomic.Int64
	errs                                                     firstError

	mu       sync.Mutex
	samples  []time.Duration
	latest   map[int]int       // app -> Seq of its latest dispatched change
	deleted  map[ObjectKey]int // Ingress or route -> Seq of its latest dispatched delete
	timedOut []string
}

// NewProber returns a Prober for cfg (defaults filled in).
func NewProber(cfg ProbeConfig) *Prober {
	cfg = cfg.withDefaults()
	tr := &http.Transport{MaxIdleConnsPerHost: cfg.Concurrency, IdleConnTimeout: 30 * time.Second}
	return &Prober{
		cfg: cfg, client: &http.Client{Transport: tr, Timeout: 5 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		slots: make(chan struct{}, cfg.Concurrency), latest: map[int]int{}, deleted: map[ObjectKey]int{},
	}
}

// Dispatched notes that ch is about to be written: a probe still waiting
// for an earlier change of the same Service stops, and so does one waiting
// for the create of an Ingress (or route) that ch deletes.
func (p *Prober) Dispatched(ch Change) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case ch.Class == ClassEndpoints:
		p.latest[ch.App] = ch.Seq
	case ch.Class == ClassIngress && ch.Op == events.OpDelete:
		p.deleted[ch.Key()] = ch.Seq
	}
}

// current reports whether no later change undid ch: a later change of the
// same Service's endpoints, or the delete of the object ch created.
func (p *Prober) current(ch Change) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ch.Class {
	case ClassEndpoints:
		return p.latest[ch.App] == ch.Seq
	case ClassIngress:
		d, ok := p.deleted[ch.Key()]
		return !ok || d < ch.Seq
	}
	return true
}

// Track follows ch, written at t0, if probing is on, ch is probed and a
// slot is free.
func (p *Prober) Track(ctx context.Context, ch Change, t0 time.Time) {
	if p.cfg.URL == "" || !probed(ch) {
		return
	}
	select {
	case p.slots <- struct{}{}:
	default:
		p.skipped.Add(1)
		return
	}
	p.changes.Add(1)
	p.wg.Go(func() {
		defer func() { <-p.slots }()
		p.follow(ctx, ch, t0)
	})
}

// probed: ch added an endpoint to a host without TLS (plain HTTP requests
// to a TLS host are redirected), or created an Ingress.
func probed(ch Change) bool {
	switch ch.Class {
	case ClassEndpoints:
		return ch.Added != "" && !ch.TLS
	case ClassIngress:
		return ch.Op == events.OpCreate && ch.Host != ""
	}
	return false
}

// errNotRouted: nginx answered 404 itself (no backend): the host or path
// is not routed.
var errNotRouted = errors.New("not routed")

// follow requests ch.Host until ch.Added (any backend for an Ingress
// create) answers.
func (p *Prober) follow(ctx context.Context, ch Change, t0 time.Time) {
	tick := time.NewTicker(p.cfg.Interval)
	defer tick.Stop()
	seen := map[string]bool{}
	for {
		switch {
		case ctx.Err() != nil:
			return
		case !p.current(ch):
			p.superseded.Add(1)
			return
		case time.Since(t0) > p.cfg.Timeout:
			p.timeout(ch, seen)
			return
		}
		backend, err := p.Get(ctx, ch.Host)
		if backend != "" && len(seen) < maxTimedOut {
			seen[backend] = true
		}
		switch {
		case ctx.Err() != nil:
			return
		case ch.Class == ClassIngress && errors.Is(err, errNotRouted):
			// not yet
		case err != nil:
			p.failed.Add(1)
			p.errs.add(err)
		case ch.Added == "" || backend == ch.Added:
			p.mu.Lock()
			p.samples = append(p.samples, time.Since(t0))
			p.mu.Unlock()
			return
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}

// timeout counts ch as not served in time and describes it.
func (p *Prober) timeout(ch Change, seen map[string]bool) {
	p.timeouts.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.timedOut) < maxTimedOut {
		p.timedOut = append(p.timedOut, fmt.Sprintf("change %d (%s %s of app %d, host %s, endpoint %q added): answered by %v",
			ch.Seq, ch.Op, ch.Key(), ch.App, ch.Host, ch.Added, slices.Sorted(maps.Keys(seen))))
	}
}

// Get sends one request for host through nginx and returns the echo
// backend that answered; anything but a 200 from a backend is an error.
func (p *Prober) Get(ctx context.Context, host string) (string, error) {
	p.requests.Add(1)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.cfg.URL+"/", nil)
	if err != nil {
		return "", err
	}
	req.Host = host
	resp, err := p.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("probe %s: %w", host, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	backend := resp.Header.Get("X-Echo-Backend")
	if resp.StatusCode == http.StatusNotFound && backend == "" {
		return "", fmt.Errorf("probe %s: %w", host, errNotRouted)
	}
	if resp.StatusCode != http.StatusOK || backend == "" {
		return "", fmt.Errorf("probe %s: status %d from backend %q", host, resp.StatusCode, backend)
	}
	return backend, nil
}

// Wait waits for the probes in progress (each ends within the timeout).
func (p *Prober) Wait() { p.wg.Wait() }

// Result returns the counts and the latencies of the new endpoints served.
func (p *Prober) Result() (ProbeReport, []time.Duration) {
	r := ProbeReport{Changes: p.changes.Load(), Skipped: p.skipped.Load(), Requests: p.requests.Load(),
		Failed: p.failed.Load(), Timeouts: p.timeouts.Load(), Superseded: p.superseded.Load()}
	if _, err := p.errs.get(); err != nil {
		r.FirstError = err.Error()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	r.TimedOut = slices.Clone(p.timedOut)
	return r, append([]time.Duration(nil), p.samples...)
}
