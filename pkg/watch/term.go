package watch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
)

// Retry backoff of a key whose publish failed.
const (
	retryBase = 100 * time.Millisecond
	retryMax  = 10 * time.Second
)

// publisher is what the watcher needs of *stream.Publisher (fenced, see
// fence.go).
type publisher interface {
	Publish(ctx context.Context, ev events.Event) error
	Expect(subject string, seq uint64)
	ExpectEmpty()
}

// term is one period of leadership: its queue of keys to publish, what it
// believes the stream holds, and the last states of deleted objects.
type term struct {
	w      *Watcher
	pub    publisher
	queue  workqueue.TypedRateLimitingInterface[key]
	status *statusWriter // nil when no status is published
	// gateways writes Gateway API status and keeps the Gateways' Services
	// (gwstatus.go); nil without Config.GatewayClient.
	gateways *gatewayStatus
	events   *reporter // Ingress Events from the syncers' reports
	round    *round    // the keys the last reconcile queued, until the stream holds them
	// checkNow asks guardStream to check the stream at once: a publish
	// conflicted or failed, as every publish does once the stream was
	// deleted or recreated (capacity 1).
	checkNow chan struct{}
	// missingSince is when guardStream first found the stream missing
	// (zero while it exists); only guardStream reads and writes it.
	missingSince time.Time

	mu       sync.Mutex
	records  map[key]record
	tombs    map[key]runtime.Object // last state of deleted objects, until their delete is published
	observed map[key]time.Time      // when a change of the key was first seen since its last publish
}

func newTerm(w *Watcher) *term {
	return &term{
		w:        w,
		queue:    newQueue[key](),
		round:    newRound(),
		checkNow: make(chan struct{}, 1),
		records:  make(map[key]record),
		tombs:    make(map[key]runtime.Object),
		observed: make(map[key]time.Time),
	}
}

// newQueue is a workqueue whose failed items come back with exponential
// backoff from retryBase to retryMax.
func newQueue[T comparable]() workqueue.TypedRateLimitingInterface[T] {
	limiter := workqueue.NewTypedItemExponentialFailureRateLimiter[T](retryBase, retryMax)
	return workqueue.NewTypedRateLimitingQueueWithConfig(limiter, workqueue.TypedRateLimitingQueueConfig[T]{})
}

// notify queues k after a change seen by an informer; deleted is the last
// state of a deleted object, nil otherwise.
func (t *term) notify(k key, deleted runtime.Object) {
	t.mu.Lock()
	if _, ok := t.observed[k]; !ok {
		t.observed[k] = time.Now()
	}
	if deleted != nil {
		t.tombs[k] = deleted
	}
	t.mu.Unlock()
	t.queue.Add(k)
}

func (t *term) setRecord(k key, rec record) {
	t.mu.Lock()
	t.records[k] = rec
	t.mu.Unlock()
}

// run publishes queued keys with the configured number of workers until ctx
// ends.
func (t *term) run(ctx context.Context) {
	var wg sync.WaitGroup
	for range t.w.cfg.Workers {
		wg.Go(func() { t.work(ctx) })
	}
	<-ctx.Done()
	t.queue.ShutDown()
	wg.Wait()
}

func (t *term) work(ctx context.Context) {
	for {
		k, shutdown := t.queue.Get()
		if shutdown {
			return
		}
		err := t.process(ctx, k)
		switch {
		case err == nil:
			t.queue.Forget(k)
		case ctx.Err() == nil:
			t.w.log.Warn("publish failed, will retry", "kind", k.Kind, "namespace", k.Namespace,
				"name", k.Name, "retries", t.queue.NumRequeues(k), "error", err)
			t.queue.AddRateLimited(k)
		}
		t.queue.Done(k)
	}
}

// process publishes what the stream lacks of key k (see decide).
func (t *term) process(ctx context.Context, k key) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	obj, exists := t.w.informers.sources[k.Kind].get(k)
	var cur *state
	if exists {
		s := stateOf(obj)
		cur = &s
	}
	rec, hasRec, err := t.recordOf(ctx, k)
	if err != nil {
		return err
	}
	if hasRec && t.aheadOfCache(k, rec, cur) {
		// The stream holds a newer version (another replica published it):
		// publish nothing older, the informer brings the newer one.
		t.w.metrics.behind.WithLabelValues(string(k.Kind)).Inc()
		t.forget(k)
		return nil
	}
	var recp *record
	if hasRec {
		recp = &rec
	}
	p := decide(recp, cur)
	if p.Noop {
		t.w.metrics.noop.WithLabelValues(string(k.Kind)).Inc()
		rec.RV, rec.Digest, rec.HasDigest = cur.RV, cur.Digest, cur.HasDigest
		t.setRecord(k, rec)
		t.statusOf(k)
	}
	if p.DeleteOld {
		if err := t.publishDelete(ctx, k, rec); err != nil {
			return err
		}
	}
	switch p.Op {
	case "":
		t.forget(k)
		t.round.settle(k)
		return nil
	case events.OpDelete:
		return t.publishDelete(ctx, k, rec)
	}
	ev := t.event(p.Op, k, obj, cur)
	return t.publish(ctx, k, ev, record{UID: cur.UID, RV: cur.RV, Op: p.Op, Digest: cur.Digest, HasDigest: cur.HasDigest})
}

// recordOf is what the term believes the stream holds for k, read from
// the stream again after a conflict (refresh).
func (t *term) recordOf(ctx context.Context, k key) (record, bool, error) {
	t.mu.Lock()
	rec, hasRec := t.records[k]
	t.mu.Unlock()
	if hasRec && rec.Stale {
		return t.refresh(ctx, k)
	}
	return rec, hasRec, nil
}

// stateOf reduces a cached object to what decide compares.
func stateOf(obj runtime.Object) state {
	var s state
	if m, err := meta.Accessor(obj); err == nil {
		s.UID, s.RV = string(m.GetUID()), m.GetResourceVersion()
	}
	if d, err := digestOf(obj); err == nil {
		s.Digest, s.HasDigest = d, true
	}
	return s
}

// event is the envelope of the current state of k.
func (t *term) event(op events.Op, k key, obj runtime.Object, cur *state) events.Event {
	return events.Event{
		Op: op, Kind: k.Kind, Namespace: k.Namespace, Name: k.Name,
		UID: cur.UID, ResourceVersion: cur.RV,
		ObservedAt: t.observedAt(k), WatcherID: t.w.cfg.WatcherID, SchemaVersion: events.SchemaVersion,
		Object: events.Trim(obj),
	}
}

// publishDelete publishes the delete of the object rec describes, with its
// last state when the informer delivered it.
func (t *term) publishDelete(ctx context.Context, k key, rec record) error {
	ev := events.Event{
		Op: events.OpDelete, Kind: k.Kind, Namespace: k.Namespace, Name: k.Name,
		UID: rec.UID, ResourceVersion: rec.RV,
		ObservedAt: t.observedAt(k), WatcherID: t.w.cfg.WatcherID, SchemaVersion: events.SchemaVersion,
	}
	t.mu.Lock()
	tomb := t.tombs[k]
	t.mu.Unlock()
	if m, err := meta.Accessor(tomb); tomb != nil && err == nil && string(m.GetUID()) == rec.UID {
		ev.ResourceVersion = m.GetResourceVersion()
		ev.Object = events.Trim(tomb)
	}
	return t.publish(ctx, k, ev, record{UID: rec.UID, RV: ev.ResourceVersion, Op: events.OpDelete})
}

// publish records ev as what the stream holds and hands it to the
// publisher, which reports the final outcome to observe (possibly before
// Publish returns, hence the record first). An event the publisher refuses
// at once (too large for the server, or not valid) is reported here and
// dropped; any other error restores the record and is returned for a retry
// (work logs it).
func (t *term) publish(ctx context.Context, k key, ev events.Event, rec record) error {
	if err := ctx.Err(); err != nil {
		return err // no longer leading: publish nothing more
	}
	t.mu.Lock()
	prev, hadPrev := t.records[k]
	t.records[k] = rec
	t.mu.Unlock()
	err := t.pub.Publish(ctx, ev)
	t.mu.Lock()
	defer t.mu.Unlock()
	if err == nil {
		delete(t.observed, k)
		if ev.Op == events.OpDelete {
			delete(t.tombs, k)
		}
		return nil
	}
	if hadPrev {
		t.records[k] = prev
	} else {
		delete(t.records, k)
	}
	if refused(err) {
		delete(t.observed, k)
		t.reportRefused(ev, err)
		t.round.settle(k)
		return nil
	}
	return fmt.Errorf("publish %s %s: %w", ev.Op, k, err)
}

// observe is the publisher's report of the final outcome of an event it
// accepted, the one place that reports it: its acknowledgement, or a
// failure after the publisher's own retries. A failed event's key is
// queued again (with backoff) so that its current state is published once
// NATS is back.
func (t *term) observe(ev events.Event, latency time.Duration, err error) {
	kind := string(ev.Kind)
	k := key{Kind: ev.Kind, Namespace: ev.Namespace, Name: ev.Name}
	if err == nil {
		t.w.metrics.published.WithLabelValues(kind, string(ev.Op)).Inc()
		t.w.metrics.latency.WithLabelValues(kind).Observe(latency.Seconds())
		if ev.Op == events.OpDelete {
			t.dropDeleted(k, ev)
		} else {
			t.acked(k, ev)
		}
		if t.events != nil {
			t.events.published(ev)
		}
		t.statusOf(k)
		return
	}
	switch {
	case refused(err):
		t.reportRefused(ev, err)
		t.unrecord(k, ev, false)
		t.round.settle(k)
		return
	case errors.Is(err, stream.ErrPublisherClosed):
		return // the term ended; the next leader reconciles
	case errors.Is(err, stream.ErrConflict):
		// Another writer published on the subject (or an ack of ours was
		// lost): read it again before deciding (see fence.go).
		t.w.metrics.conflicts.WithLabelValues(kind).Inc()
		t.w.log.Info("publish conflicted with the stream, reading the subject again", "kind", ev.Kind,
			"namespace", ev.Namespace, "name", ev.Name, "op", ev.Op, "resourceVersion", ev.ResourceVersion)
		// A conflict is not a failure: the key goes again after retryBase,
		// without the growing backoff of failed publishes (after a
		// recreated stream, events in flight conflict at once).
		t.stale(k)
		t.queue.AddAfter(k, retryBase)
		t.checkStreamNow()
		return
	}
	t.w.metrics.errors.WithLabelValues(kind).Inc()
	t.w.log.Warn("event publish failed, will retry", "kind", ev.Kind, "namespace", ev.Namespace, "name", ev.Name,
		"op", ev.Op, "err", err)
	t.unrecord(k, ev, true)
	t.queue.AddRateLimited(k)
	t.checkStreamNow()
}

// checkStreamNow asks guardStream to check the stream before its next tick.
func (t *term) checkStreamNow() {
	select {
	case t.checkNow <- struct{}{}:
	default:
	}
}

// reportRefused reports an event refused for good: too large for the
// server (reportOversize), or not valid.
func (t *term) reportRefused(ev events.Event, err error) {
	if tooLarge(err) {
		t.w.reportOversize(ev, err)
		return
	}
	t.w.metrics.errors.WithLabelValues(string(ev.Kind)).Inc()
	t.w.log.Error("event refused", "kind", ev.Kind, "namespace", ev.Namespace, "name", ev.Name, "err", err)
}

// dropDeleted forgets an acknowledged delete, if it is still the latest
// record of k: for decide, no record and a delete record mean the same, and
// dropping it keeps the map from growing with every deleted object.
func (t *term) dropDeleted(k key, ev events.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if rec, ok := t.records[k]; ok && rec.Op == events.OpDelete && rec.UID == ev.UID && !rec.Failed {
		delete(t.records, k)
		t.round.settle(k)
	}
}

// acked stores the stream sequence of ev in its record, if it is still the
// latest record of k.
func (t *term) acked(k key, ev events.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if rec, ok := t.records[k]; ok && rec.UID == ev.UID && rec.RV == ev.ResourceVersion && rec.Op == ev.Op {
		rec.Seq = ev.Sequence
		t.records[k] = rec
		t.round.settle(k)
	}
}

// publishedAt is the stream sequence of the message that holds the
// cached state obj of k: 0 while that state is not published and
// acknowledged (queued, in flight, failed, or deleted).
func (t *term) publishedAt(k key, obj runtime.Object) uint64 {
	cur := stateOf(obj)
	t.mu.Lock()
	rec, ok := t.records[k]
	t.mu.Unlock()
	if !ok || rec.Failed || rec.Op == events.OpDelete || rec.UID != cur.UID || !sameContent(&rec, &cur) {
		return 0
	}
	return rec.Seq
}

// statusOf queues the status of an Ingress whose published state may
// have changed (a publish acknowledged, an update dropped as a no-op).
func (t *term) statusOf(k key) {
	if t.status != nil && k.Kind == events.KindIngress {
		t.status.enqueue(k.cacheKey())
	}
	if t.gateways != nil {
		t.gateways.published(k)
	}
}

// unrecord undoes the record of ev, which the stream may not hold, if it is
// still the latest: failed marks it for publishing again; otherwise only its
// content is forgotten, so the next change of the object is published (and
// a delete still is).
func (t *term) unrecord(k key, ev events.Event, failed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	rec, ok := t.records[k]
	if !ok || rec.UID != ev.UID || rec.RV != ev.ResourceVersion || rec.Op != ev.Op {
		return
	}
	if failed {
		rec.Failed = true
	} else {
		rec.RV, rec.HasDigest = "", false
	}
	t.records[k] = rec
}

func (t *term) observedAt(k key) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	if at, ok := t.observed[k]; ok {
		return at
	}
	return time.Now()
}

// forget drops what the term keeps about a key it has nothing to publish for.
func (t *term) forget(k key) {
	t.mu.Lock()
	delete(t.observed, k)
	t.mu.Unlock()
}

// tooLarge reports whether err says the event exceeds the server's
// max_payload.
func tooLarge(err error) bool {
	return errors.Is(err, stream.ErrTooLarge) || errors.Is(err, nats.ErrMaxPayload)
}

// refused reports whether the publisher refused an event for good: too
// large, or not valid. Retrying the same state cannot help.
func refused(err error) bool {
	return tooLarge(err) || errors.Is(err, events.ErrInvalidEvent)
}
