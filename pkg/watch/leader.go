package watch

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/ingress-sync/ingress-sync/internal/retry"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
)

// elect campaigns for the Lease until ctx ends, leading whenever it holds
// it. Losing the Lease cancels the term at once; the replica then campaigns
// again as a standby with warm caches.
func (w *Watcher) elect(ctx context.Context) error {
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metaOf(w.cfg.ElectionNamespace, w.cfg.ElectionID),
		Client:     w.cfg.Client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: w.cfg.WatcherID},
	}
	for ctx.Err() == nil {
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:            lock,
			Name:            w.cfg.ElectionID,
			LeaseDuration:   w.cfg.LeaseDuration,
			RenewDeadline:   w.cfg.RenewDeadline,
			RetryPeriod:     w.cfg.RetryPeriod,
			ReleaseOnCancel: true,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: w.lead,
				OnStoppedLeading: func() { w.log.Info("stopped leading") },
				OnNewLeader: func(id string) {
					if id != w.cfg.WatcherID {
						w.log.Info("another replica leads", "leader", id)
					}
				},
			},
		})
		if err != nil {
			return err
		}
		le.Run(ctx)
	}
	return nil
}

// lead is one term of leadership: reconcile the stream with the caches, then
// publish live changes (and write Ingress and Gateway API status) until ctx
// ends. Terms never
// overlap.
func (w *Watcher) lead(ctx context.Context) {
	w.leadMu.Lock()
	defer w.leadMu.Unlock()
	w.metrics.leader.Set(1)
	defer w.metrics.leader.Set(0)
	w.log.Info("leading: reconciling the stream, then publishing")
	t := newTerm(w)
	pub, closePub, err := w.newPublisher(t)
	if err != nil {
		// Only a configuration New already validated makes this fail.
		w.log.Error("cannot create the publisher", "err", err)
		return
	}
	defer closePub()
	t.pub = pub
	w.addWriters(t)
	w.reconciled.Store(false)
	w.current.Store(t)
	defer w.current.CompareAndSwap(t, nil)
	if !w.reconcileRetrying(ctx, t) {
		t.queue.ShutDown()
		if t.status != nil {
			t.status.queue.ShutDown()
		}
		if t.gateways != nil {
			t.gateways.queue.ShutDown()
		}
		return
	}
	w.reconciled.Store(true)
	var parts []<-chan struct{}
	if t.status != nil {
		parts = append(parts, background(func() { t.status.run(ctx) }))
	}
	if t.gateways != nil {
		parts = append(parts, background(func() { t.gateways.run(ctx) }))
	}
	parts = append(parts, background(func() { _ = t.events.Start(ctx) }), background(func() { w.guardStream(ctx, t) }))
	t.run(ctx)
	for _, done := range parts {
		<-done
	}
}

// addWriters gives term t its reader of the syncers' reports and the
// writers of status: Ingress status when configured, Gateway API status
// when the Gateway API is watched; both look again after each report.
func (w *Watcher) addWriters(t *term) {
	t.events = newReporter(w)
	if w.statusEnabled() {
		t.status = newStatusWriter(w, t)
		t.events.changed = t.status.recheck
	}
	if w.gateway != nil {
		t.gateways = newGatewayStatus(w, t)
		t.events.changed = chain(t.events.changed, t.gateways.recheck)
	}
}

// background runs f in a goroutine and returns a channel closed when it
// returns.
func background(f func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	return done
}

// reconcileRetrying reconciles, retrying with backoff while the stream cannot
// be read; false when ctx ended first.
func (w *Watcher) reconcileRetrying(ctx context.Context, t *term) bool {
	return retry.Until(ctx, natsBackoff, func() error { return w.reconcile(ctx, t) },
		func(attempt int, wait time.Duration, err error) {
			w.log.Warn("reconcile failed, retrying", "attempt", attempt, "retryIn", wait, "err", err)
		}) == nil
}

// newPublisher is the publisher of one term, reporting final outcomes to
// the term. Its close function cuts pending retries short: a replica that
// no longer leads must stop publishing at once (the next leader's
// reconcile publishes whatever is missing).
func (w *Watcher) newPublisher(t *term) (publisher, func(), error) {
	p, err := stream.NewPublisher(w.nats.js, w.cfg.SubjectPrefix,
		stream.WithFencing(), stream.WithObserver(t.observe), stream.WithPublisherLogger(w.log),
		stream.WithRetry(w.cfg.PublishAttempts, stream.DefaultRetryBackoff),
		stream.WithAckTimeout(w.cfg.PublishAckTimeout))
	if err != nil {
		return nil, nil, err
	}
	return p, func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = p.Close(ctx)
	}, nil
}

func (w *Watcher) statusEnabled() bool {
	return w.cfg.PublishService != "" || len(w.cfg.PublishStatusAddress) > 0
}

func metaOf(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }
