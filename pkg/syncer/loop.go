package syncer

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"strings"
	"time"

	"github.com/ingress-sync/ingress-sync/internal/retry"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/model"
)

// Start runs the sync loop until ctx is done: after the bootstrap, every
// burst of events leads to one build and at most one apply. A failed apply
// is retried with backoff; the running configuration stays as it was.
// When ctx ends, a last report says that this syncer no longer serves.
func (s *Syncer) Start(ctx context.Context) error {
	heartbeat := time.NewTicker(s.opts.StatusInterval)
	defer heartbeat.Stop()
	again := time.NewTimer(time.Hour)
	again.Stop()
	defer again.Stop()
	backoff := retry.Backoff{Base: s.opts.RetryMin, Max: s.opts.RetryMax}
	failures := 0
	for {
		select {
		case <-ctx.Done():
			s.reportStopping(ctx)
			return nil
		case <-heartbeat.C:
			s.report(ctx)
			continue
		case <-s.trigger:
		case <-again.C:
		}
		if !s.isCaughtUp() || !s.holdoff(ctx) {
			continue
		}
		if err := s.syncOnce(ctx); err != nil {
			failures++
			wait := backoff.Delay(failures)
			again.Reset(wait)
			s.log.Error("apply failed, keeping the running configuration", "retryIn", wait, "err", err)
		} else {
			failures = 0
			again.Stop()
		}
		s.report(ctx)
	}
}

func (s *Syncer) isCaughtUp() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caughtUp
}

// holdoff waits until no event came for Holdoff, or MaxHoldoff passed since
// the first one. It returns false when ctx is done.
func (s *Syncer) holdoff(ctx context.Context) bool {
	if s.opts.Holdoff == 0 {
		return ctx.Err() == nil
	}
	deadline := time.Now().Add(s.opts.MaxHoldoff)
	t := time.NewTimer(s.opts.Holdoff)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		case <-s.trigger:
			wait := min(s.opts.Holdoff, time.Until(deadline))
			if wait <= 0 {
				return true
			}
			t.Reset(wait)
		}
	}
}

// syncOnce builds from the store, decides once what changed from the
// running Configuration (decide) and, unless nothing did, hands next and
// that Change to the Applier, which acts on it.
func (s *Syncer) syncOnce(ctx context.Context) error {
	cfg, seq, lags := s.build()
	running := s.Running()
	ch, changed := decide(running, cfg)
	if !changed {
		s.keep(running, cfg, seq, lags)
		return nil
	}
	actx, cancel := context.WithTimeout(ctx, s.opts.ApplyTimeout)
	defer cancel()
	reloaded, err := s.applier.Apply(actx, cfg, ch)
	// The first apply starts nginx: it counts as a reload.
	reload := reloaded || running == nil
	if s.opts.Observe != nil {
		s.opts.Observe(cfg, reload, err)
	}
	if err != nil {
		s.failed(reload, err, lags)
		return err
	}
	s.countApply(reload)
	s.logProblems(running, cfg)
	if !reloaded {
		ch.ReloadReasons = nil
	}
	s.log.Info("configuration applied", "checksum", cfg.Checksum, "seq", seq, "reload", reload,
		"hostsUpserted", len(ch.ServersUpserted), "hostsRemoved", len(ch.ServersRemoved),
		"backendsUpserted", len(ch.BackendsUpserted), "backendsRemoved", len(ch.BackendsRemoved),
		"certificatesUpserted", len(ch.CertificatesUpserted), "certificatesRemoved", len(ch.CertificatesRemoved),
		"reasons", ch.ReloadReasons)
	s.applied(cfg, seq, lags)
	return nil
}

// keep records a build equal to the running Configuration without applying
// it. Problems are not compared: a fixed annotation that was ignored builds
// an equal configuration, and must leave the report.
func (s *Syncer) keep(running, cfg *config.Configuration, seq uint64, lags []time.Time) {
	s.m.skippedEqual.Inc()
	s.logProblems(running, cfg)
	kept := *running
	kept.Problems = cfg.Problems
	s.applied(&kept, seq, lags)
}

// build makes the Configuration of the store, less the listeners nginx
// cannot open, and returns it with the stream sequence it is as of and
// the lag samples of the events it includes.
func (s *Syncer) build() (*config.Configuration, uint64, []time.Time) {
	s.mu.Lock()
	seq, lags := s.seq, s.observed
	s.observed = nil
	start := time.Now()
	cfg := s.inc.Build()
	s.mu.Unlock()
	if s.opts.ListenCheck != nil && (len(cfg.L4) > 0 || len(cfg.Listeners) > 0) {
		cfg = model.WithoutListeners(cfg, s.opts.Model, s.opts.ListenCheck)
	}
	s.m.builds.Inc()
	s.m.buildDuration.Observe(time.Since(start).Seconds())
	return cfg, seq, lags
}

// countApply counts an apply as a reload (nginx.conf changed: global
// settings, or the first apply, which starts nginx) or as a dynamic
// update (routes, backends, certificates through the Lua endpoints).
func (s *Syncer) countApply(reload bool) {
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	if reload {
		s.m.reloads.Inc()
		s.state.Reloads++
		return
	}
	s.m.dynamicUpdates.Inc()
	s.state.DynamicUpdates++
}

// applied records cfg as running, as of stream sequence seq.
func (s *Syncer) applied(cfg *config.Configuration, seq uint64, lags []time.Time) {
	now := time.Now()
	for _, t := range lags {
		s.m.eventLag.Observe(now.Sub(t).Seconds())
	}
	s.m.lastSequence.Set(float64(seq))
	s.m.ready.Set(1)
	s.m.problems.Set(float64(len(cfg.Problems)))
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	s.running = cfg
	s.state.Ready, s.state.CaughtUp = true, true
	s.state.Checksum, s.state.Sequence, s.state.LastError = cfg.Checksum, seq, ""
	s.state.Problems = len(cfg.Problems)
	s.state.ProblemList = reportedProblems(cfg.Problems)
	s.state.Unserved = unservedObjects(cfg.Problems, s.routeKinds)
}

// reportedProblems is the bounded list of problems a status report carries.
func reportedProblems(ps []config.Problem) []events.ReportedProblem {
	out := make([]events.ReportedProblem, 0, min(len(ps), events.MaxReportedProblems))
	for _, p := range ps[:min(len(ps), events.MaxReportedProblems)] {
		reason := p.Reason
		if len(reason) > events.MaxProblemReason {
			reason = strings.ToValidUTF8(reason[:events.MaxProblemReason], "")
		}
		out = append(out, events.ReportedProblem{Kind: p.Kind, Namespace: p.Namespace, Name: p.Name, Reason: reason})
	}
	return out
}

// failed records a failed apply; the lag samples wait for the retry.
func (s *Syncer) failed(reload bool, err error, lags []time.Time) {
	path := "dynamic"
	if reload {
		path = "reload"
	}
	s.m.applyErrors.WithLabelValues(path).Inc()
	s.mu.Lock()
	if len(s.observed)+len(lags) <= maxLagSamples {
		s.observed = append(lags, s.observed...)
	}
	s.mu.Unlock()
	s.stateMu.Lock()
	defer s.stateMu.Unlock()
	s.state.LastError = err.Error()
}

// logProblems logs the problems of next that the running configuration did
// not have, so that each is said once, not on every build.
func (s *Syncer) logProblems(running, next *config.Configuration) {
	seen := map[config.Problem]bool{}
	if running != nil {
		for _, p := range running.Problems {
			seen[p] = true
		}
	}
	for _, p := range next.Problems {
		if !seen[p] {
			s.log.Warn("object left out of the configuration", "kind", p.Kind, "namespace", p.Namespace, "name", p.Name, "reason", p.Reason)
		}
	}
}

// report publishes the current status; a failure is logged, never fatal.
func (s *Syncer) report(ctx context.Context) {
	st := s.Status()
	st.CaughtUp = s.isCaughtUp()
	s.publishReport(ctx, st, reportTimeout)
}

// reportStopping publishes a last report, not ready, once ctx has ended:
// the watcher then stops waiting for this syncer before it writes an
// Ingress's status address, instead of until its last report is stale.
func (s *Syncer) reportStopping(ctx context.Context) {
	st := s.Status()
	st.Ready = false
	s.publishReport(context.WithoutCancel(ctx), st, stoppingReportTimeout)
}

// How long a report may take, and the last one of a stopping syncer
// (which delays the stop).
const (
	reportTimeout         = 5 * time.Second
	stoppingReportTimeout = 2 * time.Second
)

func (s *Syncer) publishReport(ctx context.Context, st events.SyncerStatus, timeout time.Duration) {
	if s.opts.Report == nil {
		return
	}
	st.Time = time.Now().UTC()
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := s.opts.Report(rctx, st); err != nil {
		s.log.Warn("status report failed", "ready", st.Ready, "err", err)
	}
}
