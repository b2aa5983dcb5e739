package churn

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// The Ingress scenarios: new Ingresses through the Kubernetes API on a
// World with many, each followed until nginx serves its host.
const (
	createBase        = 10000            // Ingresses before the creates
	createRate        = 50               // creates per second
	createDuration    = 30 * time.Second // unless ScenarioOptions.Duration
	createProbes      = 32               // creates followed at once
	burstSize         = 1000             // Ingresses created at once
	burstFollowLimit  = 2 * time.Minute  // bound of the wait for the last one
	burstProbeEvery   = 5 * time.Millisecond
	burstSweepTimeout = time.Minute
)

// runIngressCreateScenario: 10k Ingresses through the API, then 50 new
// Ingresses per second (each to an existing Service), every one followed
// through nginx until its host answers.
func runIngressCreateScenario(ctx context.Context, o ScenarioOptions, res *ScenarioResult) error {
	spec := ingressSpec(o, createBase)
	spec.IngressRate, spec.Duration = createRate, createDuration
	if o.Duration > 0 {
		spec.Duration = o.Duration
	}
	rep, err := runKube(ctx, o, spec, func(c *Config) { c.Probe.Concurrency = createProbes }, nil)
	if err != nil {
		return err
	}
	res.Reports["churn"] = rep
	sy := syncerOf(rep)
	res.Figures = []Figure{
		{"Ingresses before the creates", float64(rep.Ingresses), ""},
		{"setup objects written", float64(rep.Setup.Objects), ""},
		{"setup written in", rep.Setup.Seconds, "s"},
		{"setup applied and served after", rep.Setup.SettleSeconds, "s"},
		{"creates offered", rep.Events.OfferedRate, "/s"},
		{"creates written", rep.Events.AchievedRate, "/s"},
		{"creates followed through nginx", float64(rep.Served.Samples), ""},
		{"creates not followed (every probe busy)", float64(rep.Probes.Skipped), ""},
		{"probe requests", float64(rep.Probes.Requests), ""},
	}
	res.Figures = append(res.Figures, kubeFigures(rep, "create")...)
	res.Checks = []Check{
		atMost("create → served by nginx p99", rep.Served.P99, 100, "ms"),
		atMost("reloads", sy.Reloads, 0, ""),
		failedProbes(rep),
	}
	if rep.Served.Samples == 0 {
		res.Error = "no create was served: see the report"
	}
	return nil
}

// ingressSpec is the Spec of the Ingress scenarios: n base Ingresses, no
// endpoint churn, Ingress creates only.
func ingressSpec(o ScenarioOptions, n int) Spec {
	spec := scaledSpec(o, n)
	spec.EndpointRate, spec.IngressCreatesOnly = 0, true
	return spec
}

// runIngressBurstScenario: 10k Ingresses through the API, then 1000 new
// ones written at once (16 writers); the time until nginx serves the last.
func runIngressBurstScenario(ctx context.Context, o ScenarioOptions, res *ScenarioResult) error {
	spec := ingressSpec(o, createBase)
	spec.IngressRate, spec.Events, spec.Duration = 1e6, burstSize, 0
	var tail *tailProbe
	var last time.Duration
	var sweep sweepResult
	var followErr error
	rep, err := runKube(ctx, o, spec, func(c *Config) {
		tail = newTailProbe(ctx, NewProber(c.Probe))
		c.OnChurnStart, c.OnWrite, c.OnWritesDone = tail.begin, tail.note, tail.writesDone
	}, func(ctx context.Context, _ Config) {
		last, followErr = tail.result()
		sweep = tail.sweep(ctx)
	})
	if err != nil {
		return err
	}
	res.Reports["churn"] = rep
	burstFigures(rep, res, last, sweep)
	if followErr != nil {
		res.Error = followErr.Error()
	}
	return nil
}

func burstFigures(rep *Report, res *ScenarioResult, last time.Duration, sweep sweepResult) {
	res.Figures = []Figure{
		{"Ingresses before the burst", float64(rep.Ingresses), ""},
		{"setup written in", rep.Setup.Seconds, "s"},
		{"Ingresses created at once", float64(rep.Events.Offered), ""},
		{"creates written (acknowledged by the API) in", rep.Events.Seconds, "s"},
		{"creates failed", float64(rep.Events.Failed), ""},
		{"start → last applied by the syncer", rep.Applied.Seconds, "s"},
		{"start → last served by nginx", seconds(last), "s"},
		{"hosts of the burst served after it (one request each)", float64(sweep.served), ""},
		{"hosts of the burst not served after it", float64(sweep.missing), ""},
	}
	res.Figures = append(res.Figures, latencyFigures("create → applied by the syncer", rep.Applied.Latency)...)
	res.Figures = append(res.Figures, syncerFigures(rep)...)
	res.Figures = append(res.Figures, processFigures(rep, "watcher", "syncer", "nginx", "churn+nats")...)
	res.Checks = []Check{
		atMost("start → last Ingress served by nginx", seconds(last), 5, "s"),
		atMost("reloads", syncerOf(rep).Reloads, 0, ""),
		atMost("hosts of the burst not served after it", float64(sweep.missing), 0, ""),
	}
}

// tailProbe follows the tail of a burst of Ingress creates: the write
// with the highest resourceVersion so far. The watcher publishes the
// creates in resourceVersion order and the syncer applies the stream in
// order, so once nginx serves the host of the last one, every host of the
// burst is routed (sweep checks it afterwards).
type tailProbe struct {
	ctx    context.Context
	prober *Prober
	out    chan tailResult

	mu         sync.Mutex
	start      time.Time
	hosts      []string
	host       string // the tail
	rv         uint64
	done       bool // every write returned
	servedHost string
	servedAt   time.Time
}

type tailResult struct {
	last time.Duration
	err  error
}

func newTailProbe(ctx context.Context, p *Prober) *tailProbe {
	return &tailProbe{ctx: ctx, prober: p, out: make(chan tailResult, 1)}
}

// begin is the OnChurnStart hook: the burst starts, and the following.
func (t *tailProbe) begin() {
	t.mu.Lock()
	t.start = time.Now()
	t.mu.Unlock()
	go func() { t.out <- t.follow() }()
}

// note is the OnWrite hook.
func (t *tailProbe) note(ch Change, rv string, _ time.Time) {
	v, err := strconv.ParseUint(rv, 10, 64)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.hosts = append(t.hosts, ch.Host)
	if err == nil && v > t.rv {
		t.rv, t.host = v, ch.Host
	}
}

// writesDone is the OnWritesDone hook.
func (t *tailProbe) writesDone() {
	t.mu.Lock()
	t.done = true
	t.mu.Unlock()
}

// follow requests the tail's host every 5ms until it answers after every
// write returned, and returns the time from the start to its first answer.
func (t *tailProbe) follow() tailResult {
	ctx, cancel := context.WithTimeout(t.ctx, burstFollowLimit)
	defer cancel()
	tick := time.NewTicker(burstProbeEvery)
	defer tick.Stop()
	for {
		t.mu.Lock()
		host, done, served := t.host, t.done, t.servedHost == t.host
		if done && served {
			defer t.mu.Unlock()
			return tailResult{last: t.servedAt.Sub(t.start)}
		}
		t.mu.Unlock()
		if host != "" && !served {
			if _, err := t.prober.Get(ctx, host); err == nil {
				t.mu.Lock()
				t.servedHost, t.servedAt = host, time.Now()
				t.mu.Unlock()
			}
		}
		select {
		case <-ctx.Done():
			return tailResult{err: fmt.Errorf("churn: the last Ingress of the burst (%s) was not served within %s", host, burstFollowLimit)}
		case <-tick.C:
		}
	}
}

// result waits for follow (started by begin) and returns what it found.
func (t *tailProbe) result() (time.Duration, error) {
	t.mu.Lock()
	started := !t.start.IsZero()
	t.mu.Unlock()
	if !started {
		return 0, errors.New("churn: the burst did not start")
	}
	r := <-t.out
	return r.last, r.err
}

// sweepResult counts the hosts of the burst that nginx serves.
type sweepResult struct{ served, missing int }

// sweep requests every host of the burst once.
func (t *tailProbe) sweep(ctx context.Context) sweepResult {
	ctx, cancel := context.WithTimeout(ctx, burstSweepTimeout)
	defer cancel()
	t.mu.Lock()
	hosts := append([]string(nil), t.hosts...)
	t.mu.Unlock()
	var r sweepResult
	for _, h := range hosts {
		if _, err := t.prober.Get(ctx, h); err == nil {
			r.served++
		} else {
			r.missing++
		}
	}
	return r
}
