package watch

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
)

// reconcileCounts says what the start-up reconcile found.
type reconcileCounts struct {
	heads     int // subjects in the stream
	unchanged int // objects whose last message has their resourceVersion
	queued    int // objects queued: new, recreated, or with another version
	gone      int // subjects whose object is no longer in the API
}

// reconcile compares the last message of every subject with the informer
// caches and queues what the stream lacks. Nothing is published here: the
// workers, started afterwards, do it, and decide drops versions whose digest
// equals the message's. The keys it queues are the term's round (see
// term.expect): once all of them are in the stream, the guard marks the
// stream reconciled.
func (w *Watcher) reconcile(ctx context.Context, t *term) error {
	if !cache.WaitForCacheSync(ctx.Done(), w.informers.hasSynced) {
		return ctx.Err() // a Gateway API informer started since (gateway.go) has not listed yet
	}
	st, err := stream.ReadState(ctx, w.nats.js, w.cfg.Stream)
	if err != nil {
		return fmt.Errorf("read the stream's state: %w", err)
	}
	heads, err := stream.LastPerSubject(ctx, w.nats.js, w.cfg.Stream, w.cfg.SubjectPrefix)
	if err != nil {
		return fmt.Errorf("read the last message of every subject: %w", err)
	}
	t.beginRound(st.Created)
	defer t.endRound()
	for subject, head := range heads {
		t.pub.Expect(subject, head.Sequence) // fencing: the last message of each subject
	}
	c := reconcileCounts{heads: len(heads)}
	seen := make(map[string]bool)
	for _, kind := range events.Kinds {
		for _, obj := range w.informers.sources[kind].list() {
			k, err := keyOf(kind, obj)
			if err != nil {
				continue
			}
			subject := events.Subject(w.cfg.SubjectPrefix, kind, k.Namespace, k.Name)
			seen[subject] = true
			head, ok := heads[subject]
			if w.seed(ctx, t, k, obj, head, ok) {
				c.queued++
			} else {
				c.unchanged++
			}
		}
	}
	for subject, head := range heads {
		if seen[subject] || head.Op == events.OpDelete {
			continue
		}
		kind, ns, name, err := events.ParseSubject(w.cfg.SubjectPrefix, subject)
		k := key{Kind: kind, Namespace: ns, Name: name}
		if err != nil || !w.inScope(k) {
			continue
		}
		t.setRecord(k, record{UID: head.UID, RV: head.ResourceVersion, Op: head.Op})
		t.expect(k)
		c.gone++
	}
	w.metrics.reconciled.WithLabelValues("unchanged").Add(float64(c.unchanged))
	w.metrics.reconciled.WithLabelValues("queued").Add(float64(c.queued))
	w.metrics.reconciled.WithLabelValues("gone").Add(float64(c.gone))
	w.log.Info("reconciled stream with the API", "subjects", c.heads, "unchanged", c.unchanged,
		"queued", c.queued, "gone", c.gone)
	return nil
}

// seed records what the stream holds for k from its last message (head) and
// queues k unless the message has the cached resourceVersion. It reports
// whether k was queued.
func (w *Watcher) seed(ctx context.Context, t *term, k key, obj runtime.Object, head stream.Head, ok bool) bool {
	cur := stateOf(obj)
	if !ok || head.Op == events.OpDelete {
		t.expect(k)
		return true
	}
	rec := record{UID: head.UID, RV: head.ResourceVersion, Op: head.Op, Seq: head.Sequence}
	if head.UID == cur.UID && head.ResourceVersion == cur.RV {
		rec.Digest, rec.HasDigest = cur.Digest, cur.HasDigest
		t.setRecord(k, rec)
		return false
	}
	if head.UID == cur.UID {
		rec.Digest, rec.HasDigest = w.headDigest(ctx, head.Subject)
	}
	t.setRecord(k, rec)
	t.expect(k)
	return true
}

// headDigest is the digest of the object in the last message of subject,
// so that a version that differs only in what does not matter (a dropped
// no-op update) is not published again after a restart.
func (w *Watcher) headDigest(ctx context.Context, subject string) (digest, bool) {
	ctx, cancel := context.WithTimeout(ctx, natsTimeout)
	defer cancel()
	msg, err := w.nats.stream.GetLastMsgForSubject(ctx, subject)
	if err != nil {
		w.log.Warn("read last message failed", "subject", subject, "error", err)
		return digest{}, false
	}
	ev, err := events.Decode(msg.Data)
	if err != nil || ev.Object == nil {
		w.log.Warn("last message not decodable, republishing", "subject", subject, "error", err)
		return digest{}, false
	}
	d, err := digestOf(ev.Object)
	return d, err == nil
}

// inScope reports whether the watcher is responsible for k: its namespace
// (or all), any IngressClass and GatewayClass, and only the ConfigMaps it
// was given. Subjects
// outside the scope are never deleted by the reconcile.
func (w *Watcher) inScope(k key) bool {
	switch k.Kind {
	case events.KindIngressClass, events.KindGatewayClass:
		return true
	case events.KindConfigMap:
		return w.configMapScope(k)
	case events.KindNamespace:
		return w.cfg.WatchNamespace == "" || k.Name == w.cfg.WatchNamespace
	case events.KindService:
		if w.cfg.GatewayServiceSelector != "" && k.Namespace == w.cfg.ElectionNamespace {
			return true // the Services of Gateways (gwservice.go)
		}
	}
	return w.cfg.WatchNamespace == "" || k.Namespace == w.cfg.WatchNamespace
}
