package watch

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/internal/retry"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
)

// minCheckSpacing bounds the checks a storm of failed publishes asks for
// (term.checkStreamNow) to four a second.
const minCheckSpacing = 250 * time.Millisecond

// guardStream runs beside a leader term until ctx ends. Every
// StreamCheckInterval, and at once when a publish conflicted or failed
// (at most every minCheckSpacing), it checks the event stream: one missing
// for missingGrace is created again (createMissing), and one created after
// the stream the term
// reconciled with (deleted and recreated, so its sequences restarted) is
// reconciled with the API again, its records forgotten. Whenever a
// reconcile's round is complete, it marks the stream reconciled
// (stream.MarkReconciled), retrying at the next check when that fails.
// When the informers resume after a kube-apiserver outage (apigate.go), it
// reconciles as a new leader does.
func (w *Watcher) guardStream(ctx context.Context, t *term) {
	tick := time.NewTicker(w.cfg.StreamCheckInterval)
	defer tick.Stop()
	markDue := false
	var checked time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.round.done:
			markDue = true
		case <-tick.C:
			w.checkStream(ctx, t)
			checked = time.Now()
		case <-t.checkNow:
			if time.Since(checked) >= minCheckSpacing {
				w.checkStream(ctx, t)
				checked = time.Now()
			}
		case <-w.apiBack:
			w.log.Info("kube-apiserver back: reconciling the stream with the API again", "stream", w.cfg.Stream)
			w.reconcileRetrying(ctx, t)
		}
		if markDue && ctx.Err() == nil {
			markDue = !w.markReconciled(ctx, t)
		}
	}
}

// streamCallTimeout bounds each JetStream call of the leader's check: the
// servers may leave a request unanswered (a stream created twice at once),
// and the next check, a second later, asks again rather than wait
// natsTimeout.
const streamCallTimeout = 2 * time.Second

// missingGrace is how long a missing stream is left to whoever deleted
// it before the leader creates it again: an operator who deletes the
// stream and creates it at once is not raced (two creates at once can
// leave both unanswered for natsTimeout).
const missingGrace = time.Second

// checkStream compares the event stream with the one t reconciled with.
func (w *Watcher) checkStream(ctx context.Context, t *term) {
	st, err := w.readStream(ctx)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		if !w.createMissing(ctx, t) {
			return
		}
		st, err = w.readStream(ctx)
	}
	if err != nil {
		w.log.Warn("stream check failed, checking again", "stream", w.cfg.Stream, "err", err)
		return
	}
	t.missingSince = time.Time{}
	if st.Stale() {
		w.dropStaleStream(ctx, st)
		return
	}
	if st.Created.Equal(t.round.streamCreated()) {
		return
	}
	if !st.HasLeader {
		st = w.awaitLeader(ctx, st)
	}
	w.metrics.streamRecreated.Inc()
	w.log.Warn("event stream recreated: reconciling it with the API again", "stream", w.cfg.Stream,
		"created", st.Created, "lastSeq", st.LastSeq, "sinceCreated", time.Since(st.Created).Round(time.Millisecond))
	t.resetRecords()
	t.pub.ExpectEmpty()
	w.reconcileRetrying(ctx, t)
}

// leaderWait bounds the wait for a recreated stream's leader, polled every
// leaderPoll: publishes to a stream without one go unanswered until their
// ack timeout. After it the reconcile goes ahead all the same.
const (
	leaderWait = 5 * time.Second
	leaderPoll = 100 * time.Millisecond
)

// awaitLeader waits, bounded by leaderWait, until the recreated stream
// has a leader, and returns its state then.
func (w *Watcher) awaitLeader(ctx context.Context, st stream.StreamState) stream.StreamState {
	began := time.Now()
	w.log.Info("recreated event stream has no leader yet: waiting for one before republishing", "stream", w.cfg.Stream)
	wctx, cancel := context.WithTimeout(ctx, leaderWait)
	defer cancel()
	retry.Poll(wctx, retry.Backoff{Base: leaderPoll, Max: leaderPoll}, func() bool {
		if cur, err := w.readStream(wctx); err == nil && cur.Created.Equal(st.Created) {
			st = cur
		}
		return st.HasLeader
	})
	w.log.Info("recreated event stream leader", "stream", w.cfg.Stream, "elected", st.HasLeader,
		"waited", time.Since(began).Round(time.Millisecond))
	return st
}

// readStream reads the event stream's state, bounded by streamCallTimeout.
func (w *Watcher) readStream(ctx context.Context) (stream.StreamState, error) {
	ctx, cancel := context.WithTimeout(ctx, streamCallTimeout)
	defer cancel()
	return stream.ReadState(ctx, w.nats.js, w.cfg.Stream)
}

// createMissing creates the missing event stream again once it has been
// missing for missingGrace; true when it did.
func (w *Watcher) createMissing(ctx context.Context, t *term) bool {
	if t.missingSince.IsZero() {
		t.missingSince = time.Now()
		w.log.Warn("event stream missing: creating it again unless it is back soon", "stream", w.cfg.Stream, "grace", missingGrace)
		return false
	}
	if time.Since(t.missingSince) < missingGrace {
		return false
	}
	w.log.Warn("event stream still missing, creating it again", "stream", w.cfg.Stream,
		"missingFor", time.Since(t.missingSince).Round(time.Millisecond))
	cctx, cancel := context.WithTimeout(ctx, streamCallTimeout)
	defer cancel()
	if _, err := stream.Ensure(cctx, w.nats.js, w.cfg.streamConfig()); err != nil {
		w.log.Warn("creating the event stream failed, checking again", "stream", w.cfg.Stream, "err", err)
		return false
	}
	return true
}

// dropStaleStream deletes a stream that holds a deleted stream's messages
// (StreamState.Stale); the next check creates it again.
func (w *Watcher) dropStaleStream(ctx context.Context, st stream.StreamState) {
	w.log.Warn("event stream holds messages older than itself, deleting it to create it again", "stream", w.cfg.Stream,
		"created", st.Created, "firstMessage", st.FirstTime, "lastSeq", st.LastSeq)
	callCtx, cancel := context.WithTimeout(ctx, natsTimeout)
	defer cancel()
	if err := w.nats.js.DeleteStream(callCtx, w.cfg.Stream); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		w.log.Warn("deleting the stale event stream failed", "stream", w.cfg.Stream, "err", err)
	}
}

// markReconciled writes the reconcile marker; false when it must be tried
// again (a stream recreated meanwhile is left to the next check).
func (w *Watcher) markReconciled(ctx context.Context, t *term) bool {
	cctx, cancel := context.WithTimeout(ctx, streamCallTimeout)
	defer cancel()
	seq, err := stream.MarkReconciled(cctx, w.nats.js, w.cfg.Stream, t.round.streamCreated())
	switch {
	case errors.Is(err, stream.ErrStreamRecreated):
		w.log.Info("stream recreated before it was marked reconciled", "stream", w.cfg.Stream, "err", err)
		return true
	case err != nil:
		w.log.Warn("marking the stream reconciled failed, retrying", "stream", w.cfg.Stream, "err", err)
		return false
	}
	w.log.Info("stream holds the watcher's state", "stream", w.cfg.Stream, "seq", seq,
		"sinceReconcile", t.round.age().Round(time.Millisecond))
	return true
}
