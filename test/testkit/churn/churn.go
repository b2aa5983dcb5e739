package churn

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// churn dispatches the generated changes at their due time to the
// target's workers, with progress every second, until a bound is reached
// (the duration also in wall time, when writes fall behind the schedule)
// and every write is done.
func (r *runner) churn(ctx context.Context) {
	workers := max(r.cfg.Target.Workers(), 1)
	queues := make([]chan Change, workers)
	var wg sync.WaitGroup
	for i := range queues {
		queues[i] = make(chan Change, 256)
		wg.Go(func() { r.work(ctx, queues[i]) })
	}
	stop := r.progress(ctx)
	defer stop()
	if r.cfg.OnChurnStart != nil {
		r.cfg.OnChurnStart()
	}
	r.start = time.Now()
	r.log.Info("churn started")
	limit := r.cfg.Spec.Duration
	for ch, ok := r.gen.Next(); ok; ch, ok = r.gen.Next() {
		if !r.waitUntil(ctx, ch.At) || (limit > 0 && time.Since(r.start) >= limit) {
			break // a target slower than the schedule ends at the duration too
		}
		r.prober.Dispatched(ch)
		queues[shard(ch.Key(), workers)] <- ch
		r.offered.Add(1)
		r.byClass[ch.Class]++
	}
	r.dispatchEnd = time.Now()
	for _, q := range queues {
		close(q)
	}
	wg.Wait()
	fctx, cancel := context.WithTimeout(ctx, r.cfg.DrainTimeout)
	defer cancel()
	r.asyncFailed, r.asyncErr = r.cfg.Target.Flush(fctx)
	r.churnEnd = time.Now()
	if r.cfg.OnWritesDone != nil {
		r.cfg.OnWritesDone()
	}
	r.log.Info("churn done", "offered", r.offered.Load(), "written", r.completed.Load())
}

// waitUntil sleeps until at after the start, unless less than a
// millisecond is left (changes due within it go out together).
func (r *runner) waitUntil(ctx context.Context, at time.Duration) bool {
	d := time.Until(r.start.Add(at))
	if d < time.Millisecond {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// work writes the changes of one queue, in order.
func (r *runner) work(ctx context.Context, q <-chan Change) {
	for ch := range q {
		if ctx.Err() != nil {
			continue
		}
		t0 := time.Now()
		rv, err := r.cfg.Target.Write(ctx, ch)
		if err != nil {
			r.failures.add(err)
			continue
		}
		r.rec.Write(ch, rv, t0)
		r.completed.Add(1)
		if r.cfg.OnWrite != nil {
			r.cfg.OnWrite(ch, rv, t0)
		}
		r.prober.Track(ctx, ch, t0)
	}
}

// progress prints a line to Progress every second and samples the
// processes and the stream lag, until the returned stop is called.
func (r *runner) progress(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		var prevOffered, prevDone int64
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			r.procs.sample()
			lag, seq := r.sampleLag(ctx)
			if ctx.Err() != nil {
				return
			}
			offered, written := r.offered.Load(), r.completed.Load()
			probes, _ := r.prober.Result()
			fmt.Fprintf(r.cfg.Progress, "churn %4.0fs  offered %6d/s  achieved %6d/s  written %d  |  stream seq %d, syncer lag %d  |  probes: %d changes, %d requests, %d failed\n",
				time.Since(r.start).Seconds(), offered-prevOffered, written-prevDone, written, seq, lag,
				probes.Changes, probes.Requests, probes.Failed)
			prevOffered, prevDone = offered, written
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// sampleLag reads the stream's last sequence against the lowest one a
// syncer applied, and keeps the maximum.
func (r *runner) sampleLag(ctx context.Context) (lag, last uint64) {
	if r.obs == nil {
		return 0, 0
	}
	last, err := r.obs.LastSeq(ctx)
	if err != nil {
		return 0, 0
	}
	latest := r.rec.Latest()
	lowest := last
	for _, p := range r.pods(latest) {
		lowest = min(lowest, latest[p].Sequence)
	}
	lag = last - lowest
	r.lagMu.Lock()
	defer r.lagMu.Unlock()
	r.maxLag, r.lastSeq = max(r.maxLag, lag), last
	return lag, last
}

// drain waits until every syncer applied the stream's last sequence (or
// DrainTimeout) and the probes ended, sampling as during the churn.
func (r *runner) drain(ctx context.Context) {
	stop := r.progress(ctx)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, r.cfg.DrainTimeout)
	defer cancel()
	for {
		if _, err := r.caughtUp(ctx); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			r.log.Warn("syncers did not apply the churn in time", "timeout", r.cfg.DrainTimeout)
			r.prober.Wait()
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
	r.report.Stream.DrainSeconds = seconds(time.Since(r.churnEnd))
	r.prober.Wait()
}
