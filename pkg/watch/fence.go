package watch

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
)

// Fencing. The term's publisher is fenced (stream.WithFencing): each event
// is stored only if the last message of its subject is the one the term
// knows of, from its reconcile or its own acknowledgements. Another writer
// on the subject (a replica that still believes it leads) makes the publish
// fail with stream.ErrConflict; the term then reads the subject's last
// message again (refresh) and decides anew. Before publishing, a version
// older than the one the stream holds is dropped (aheadOfCache): the
// informer delivers the newer one later. So two replicas that both lead for
// a while never store an older version of an object after a newer one.

// stale marks the record of k after a conflict: the stream holds a message
// this term did not publish, to be read before deciding again.
func (t *term) stale(k key) {
	t.mu.Lock()
	defer t.mu.Unlock()
	rec := t.records[k]
	rec.Stale = true
	t.records[k] = rec
}

// refresh reads the last message of k's subject after a conflict: it becomes
// the record of k, and the publisher expects it as the subject's last.
func (t *term) refresh(ctx context.Context, k key) (record, bool, error) {
	subject := events.Subject(t.w.cfg.SubjectPrefix, k.Kind, k.Namespace, k.Name)
	ctx, cancel := context.WithTimeout(ctx, streamCallTimeout)
	defer cancel()
	msg, err := t.w.nats.stream.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		t.mu.Lock()
		delete(t.records, k)
		t.mu.Unlock()
		t.pub.Expect(subject, 0)
		return record{}, false, nil
	}
	if err != nil {
		return record{}, false, fmt.Errorf("read the last message of %s: %w", subject, err)
	}
	head := stream.HeadOf(t.w.cfg.SubjectPrefix, msg)
	rec := record{UID: head.UID, RV: head.ResourceVersion, Op: head.Op, Seq: head.Sequence}
	if ev, err := events.Decode(msg.Data); err == nil && ev.Object != nil {
		if d, err := digestOf(ev.Object); err == nil {
			rec.Digest, rec.HasDigest = d, true
		}
	}
	t.setRecord(k, rec)
	t.pub.Expect(subject, head.Sequence)
	t.w.log.Info("read the subject again after a conflict", "subject", subject, "sequence", head.Sequence,
		"op", head.Op, "resourceVersion", head.ResourceVersion, "uid", head.UID)
	return rec, true, nil
}

// aheadOfCache reports whether the stream's message for k (rec) holds a
// newer version than the cache: cur's resourceVersion, or for a deleted
// object that of its last state. Versions are compared as the API server's
// resourceVersions of one object (resourceversion.CompareResourceVersion);
// versions that are not comparable never count as ahead, so that a
// publish is never held back for good.
func (t *term) aheadOfCache(k key, rec record, cur *state) bool {
	mine := ""
	if cur != nil {
		mine = cur.RV
	} else {
		t.mu.Lock()
		tomb := t.tombs[k]
		t.mu.Unlock()
		if m, err := meta.Accessor(tomb); tomb != nil && err == nil {
			mine = m.GetResourceVersion()
		}
	}
	c, err := resourceversion.CompareResourceVersion(mine, rec.RV)
	return err == nil && c < 0
}
