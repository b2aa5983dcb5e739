package churn

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
)

// Config is one run of the churn against a Target.
type Config struct {
	Spec            Spec
	ControllerClass string        // of the IngressClass the setup creates
	Certs           []*certs.Pair // TLS certificate pool (see NewGenerator)
	Target          Target
	TargetName      string // for the report: "kube" or "stream"
	// NATS, Stream and Prefix locate the event stream and the status
	// reports; without NATS nothing is known of the syncers but their
	// metrics, and the applied latency and stream lag are not measured.
	NATS           *stream.Conn
	Stream, Prefix string
	Probe          ProbeConfig
	Syncers        []SyncerRef
	Processes      []ProcessSpec
	// SkipSetup starts the churn on a cluster set up before with the same
	// Spec.
	SkipSetup bool
	// SettleTimeout bounds the wait for the syncers to apply the setup
	// (default 5m); DrainTimeout the wait for them to apply the churn
	// after its last write (default 2m).
	SettleTimeout, DrainTimeout time.Duration
	Progress                    io.Writer // every second during the churn; nil for none
	Logger                      *slog.Logger
	// OnChurnStart and OnWritesDone, when set, are called as the first
	// change is dispatched and once every write is done (acknowledged),
	// before waiting for the syncers: a scenario pauses a syncer between
	// them to measure how fast it works off a backlog.
	OnChurnStart, OnWritesDone func()
	// OnWrite, when set, is called after every churn write that succeeded,
	// with the resourceVersion it returned and its start time.
	OnWrite func(ch Change, rv string, t0 time.Time)
}

// SyncerRef names a syncer (its status reports' pod name) and its metrics
// URL ("" if unknown).
type SyncerRef struct {
	Pod, MetricsURL string
}

func (c *Config) validate() error {
	if c.Target == nil {
		return fmt.Errorf("%w: no target", ErrInvalidSpec)
	}
	if c.NATS != nil && (c.Stream == "" || events.ValidatePrefix(c.Prefix) != nil) {
		return fmt.Errorf("%w: stream %q and prefix %q", ErrInvalidSpec, c.Stream, c.Prefix)
	}
	if c.SettleTimeout == 0 {
		c.SettleTimeout = 5 * time.Minute
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = 2 * time.Minute
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return c.Spec.Validate()
}

// runner is the state of one Run.
type runner struct {
	cfg    Config
	log    *slog.Logger
	gen    *Generator
	rec    *Recorder
	obs    *Observer
	prober *Prober
	procs  *procSampler
	client *http.Client
	report Report

	metricsBefore map[string]metricSet
	statusBefore  map[string]events.SyncerStatus

	start, dispatchEnd, churnEnd time.Time
	offered, completed           atomic.Int64
	byClass                      [numRated]int
	failures                     firstError // writes that failed at once
	asyncFailed                  int        // and after Write returned
	asyncErr                     error
	lagMu                        sync.Mutex
	maxLag, lastSeq              uint64
}

// Run sets up the cluster (unless SkipSetup), waits until the syncers
// applied it, churns, waits until they applied the churn, and reports.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	gen, err := NewGenerator(cfg.Spec, cfg.Certs)
	if err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, log: cfg.Logger, gen: gen, rec: NewRecorder(), prober: NewProber(cfg.Probe),
		procs: newProcSampler(cfg.Processes), client: newLocalClient()}
	r.report = Report{Target: cfg.TargetName, Seed: cfg.Spec.Seed, Ingresses: cfg.Spec.Ingresses, Start: time.Now().UTC()}
	if cfg.NATS != nil {
		if r.obs, err = StartObserver(ctx, cfg.NATS, cfg.Stream, cfg.Prefix, r.rec); err != nil {
			return nil, err
		}
		defer r.obs.Close()
	}
	if err := r.setup(ctx); err != nil {
		return nil, err
	}
	r.baseline(ctx)
	r.churn(ctx)
	r.drain(ctx)
	return r.finish(ctx), nil
}

// setup writes the initial cluster and waits until it is applied.
func (r *runner) setup(ctx context.Context) error {
	changes := r.gen.Setup(r.cfg.ControllerClass)
	r.report.Setup.Objects = len(changes)
	if !r.cfg.SkipSetup {
		start := time.Now()
		r.log.Info("writing the setup", "objects", len(changes))
		if err := r.cfg.Target.Setup(ctx, r.gen.Namespaces(), changes); err != nil {
			return err
		}
		r.report.Setup.Seconds = seconds(time.Since(start))
	}
	start := time.Now()
	if err := r.settle(ctx); err != nil {
		return err
	}
	r.report.Setup.SettleSeconds = seconds(time.Since(start))
	return nil
}

// settle waits until every syncer applied the stream's last sequence and
// nginx routes the first and last plain host, twice in a row a second apart with
// no new event in between.
func (r *runner) settle(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.SettleTimeout)
	defer cancel()
	probe := NewProber(r.cfg.Probe)
	var prev uint64
	var why error
	for stable := 0; stable < 2; {
		seq, err := r.caughtUp(ctx)
		if err == nil && r.cfg.Probe.URL != "" {
			for _, host := range r.gen.PlainHosts() {
				if _, perr := probe.Get(ctx, host); perr != nil {
					err = perr
				}
			}
		}
		switch {
		case err != nil:
			stable = 0
			if ctx.Err() == nil {
				why = err
			}
		case stable > 0 && seq != prev:
			stable = 0
		default:
			stable++
		}
		prev = seq
		select {
		case <-ctx.Done():
			return fmt.Errorf("churn: setup not applied within %s: %w", r.cfg.SettleTimeout, why)
		case <-time.After(time.Second):
		}
	}
	return nil
}

// errBehind: a syncer has not applied the stream's last sequence yet.
var errBehind = errors.New("churn: syncers behind the stream")

// caughtUp checks that every syncer (those named, or else those that
// reported) is ready at the stream's last sequence, and returns that.
func (r *runner) caughtUp(ctx context.Context) (uint64, error) {
	if r.obs == nil {
		return 0, nil
	}
	last, err := r.obs.LastSeq(ctx)
	if err != nil {
		return 0, err
	}
	latest := r.rec.Latest()
	pods := r.pods(latest)
	// No syncer named and none reported: nothing to wait for (name the
	// syncers to wait for them).
	for _, p := range pods {
		st, ok := latest[p]
		if !ok || !st.Ready || st.Sequence < last {
			return last, fmt.Errorf("%w: %s at %d (ready %v), stream at %d", errBehind, p, st.Sequence, st.Ready, last)
		}
	}
	return last, nil
}

// pods are the syncers named in the Config, or else those that reported.
func (r *runner) pods(latest map[string]events.SyncerStatus) []string {
	var out []string
	for _, s := range r.cfg.Syncers {
		out = append(out, s.Pod)
	}
	if len(out) == 0 {
		for p := range latest {
			out = append(out, p)
		}
	}
	return out
}

// baseline records the counters the report subtracts.
func (r *runner) baseline(ctx context.Context) {
	r.metricsBefore = r.scrape(ctx)
	r.statusBefore = r.rec.Latest()
	r.procs.sample()
}

func (r *runner) scrape(ctx context.Context) map[string]metricSet {
	out := map[string]metricSet{}
	for _, s := range r.cfg.Syncers {
		if s.MetricsURL == "" {
			continue
		}
		m, err := scrapeMetrics(ctx, r.client, s.MetricsURL)
		if err != nil {
			r.log.Warn("syncer metrics unavailable", "pod", s.Pod, "err", err)
			continue
		}
		out[s.Pod] = m
	}
	return out
}

func seconds(d time.Duration) float64 { return float64(d.Milliseconds()) / 1000 }

// shard spreads objects over workers; one object always goes to the same
// worker, so its writes stay in order.
func shard(k ObjectKey, n int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(k.String()))
	return int(h.Sum32() % uint32(n))
}
