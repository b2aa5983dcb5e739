package churn

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// finish reads the counters again and fills in the report.
func (r *runner) finish(ctx context.Context) *Report {
	r.procs.sample()
	after := r.scrape(ctx)
	rep := &r.report
	r.fillEvents()
	applied := r.rec.AppliedLatencies()
	rep.Streamed = Summarize(applied.Streamed)
	rep.Applied = AppliedReport{Latency: Summarize(applied.Latencies), Unmatched: applied.Unmatched, Unapplied: applied.Unapplied}
	if !applied.Last.IsZero() {
		rep.Applied.Seconds = seconds(applied.Last.Sub(r.start))
		if rep.Applied.Seconds > 0 {
			rep.Applied.Rate = math.Round(float64(r.completed.Load()) / rep.Applied.Seconds)
		}
	}
	probes, served := r.prober.Result()
	rep.Probes, rep.Served = probes, Summarize(served)
	latest := r.rec.Latest()
	for _, pod := range r.allPods(latest) {
		rep.Syncers = append(rep.Syncers, r.syncerReport(pod, latest[pod], r.metricsBefore[pod], after[pod]))
	}
	r.lagMu.Lock()
	rep.Stream.MaxLag, rep.Stream.LastSeq = r.maxLag, r.lastSeq
	r.lagMu.Unlock()
	if lag, last := r.sampleLag(ctx); last > 0 {
		rep.Stream.FinalLag, rep.Stream.LastSeq = lag, last
	}
	rep.Processes = r.procs.report()
	return rep
}

func (r *runner) fillEvents() {
	e := &r.report.Events
	e.ByClass = map[string]int{}
	for c, n := range r.byClass {
		if n > 0 {
			e.ByClass[Class(c).String()] = n
		}
	}
	failed, err := r.failures.get()
	if err == nil {
		err = r.asyncErr
	}
	e.Offered, e.Failed = r.offered.Load(), int64(failed+r.asyncFailed)
	e.Completed = r.completed.Load() - int64(r.asyncFailed)
	if err != nil {
		e.FirstError = err.Error()
	}
	s := r.cfg.Spec
	e.TargetRate = s.EndpointRate + s.IngressRate + s.SecretRate
	e.Seconds = seconds(r.churnEnd.Sub(r.start))
	if e.TargetRate <= 0 {
		return
	}
	// Rates over the span plus one interval: N changes due at 0, 1/R, ...,
	// (N-1)/R make exactly R per second when on time.
	step := time.Duration(float64(time.Second) / e.TargetRate)
	if span := r.dispatchEnd.Sub(r.start) + step; span > 0 {
		e.OfferedRate = math.Round(float64(e.Offered) / span.Seconds())
	}
	if span := r.churnEnd.Sub(r.start) + step; span > 0 {
		e.AchievedRate = math.Round(float64(e.Completed) / span.Seconds())
	}
}

// allPods are the named syncers and those that reported, sorted.
func (r *runner) allPods(latest map[string]events.SyncerStatus) []string {
	var out []string
	for _, s := range r.cfg.Syncers {
		out = append(out, s.Pod)
	}
	for p := range latest {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// syncerReport takes the counter deltas from the metrics when both scrapes
// worked, else from the status reports.
func (r *runner) syncerReport(pod string, last events.SyncerStatus, before, after metricSet) SyncerReport {
	s := SyncerReport{Pod: pod, Source: "status", LastSequence: last.Sequence}
	if prev, ok := r.statusBefore[pod]; ok {
		s.Reloads = float64(last.Reloads - min(prev.Reloads, last.Reloads))
		s.DynamicUpdates = float64(last.DynamicUpdates - min(prev.DynamicUpdates, last.DynamicUpdates))
	}
	if before == nil || after == nil {
		return s
	}
	delta := func(name string) float64 { return after.sum(name) - before.sum(name) }
	s.Source = "metrics"
	s.Reloads, s.DynamicUpdates = delta(metricReloads), delta(metricDynamicUpdates)
	s.Builds, s.SkippedEqual, s.EventsApplied = delta(metricBuilds), delta(metricSkippedEqual), delta(metricEventsApplied)
	s.ApplyErrors, s.DecodeErrors = delta(metricApplyErrors), delta(metricDecodeErrors)
	s.LastSequence = uint64(after.sum(metricLastSequence))
	s.EventLagP50Ms = quantileMs(before, after, metricEventLag, 0.5)
	s.EventLagP99Ms = quantileMs(before, after, metricEventLag, 0.99)
	s.BuildP50Ms = quantileMs(before, after, metricBuildDuration, 0.5)
	s.BuildP99Ms = quantileMs(before, after, metricBuildDuration, 0.99)
	s.HeapInuseMB = round1(after.sum(metricHeapInuse) / (1 << 20))
	return s
}

func quantileMs(before, after metricSet, histogram string, q float64) *float64 {
	v := histogramQuantile(before.buckets(histogram), after.buckets(histogram), q)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	v = math.Round(v*1e6) / 1e3
	return &v
}
