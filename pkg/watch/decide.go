package watch

import (
	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// record is what the current leader term believes the stream holds for one
// key: the last event published (or found while reconciling).
type record struct {
	UID       string
	RV        string
	Op        events.Op
	Digest    digest
	HasDigest bool // false when seeded from a message that could not be decoded
	// Failed marks a publish whose acknowledgement failed after Publish
	// returned: the stream may not hold it, so the key is published again.
	Failed bool
	// Seq is the stream sequence of the message, once acknowledged (or
	// found while reconciling); 0 until then.
	Seq uint64
	// Stale marks a record after a publish of the key conflicted (another
	// writer published on its subject): the subject's last message is read
	// again before deciding (term.refresh).
	Stale bool
}

// state is the cached object of a key, reduced to what decide needs.
type state struct {
	UID       string
	RV        string
	Digest    digest
	HasDigest bool
}

// plan is what to publish for a key.
type plan struct {
	DeleteOld bool      // first publish a delete of the recorded object (its UID changed)
	Op        events.Op // then publish this op of the current state; "" for nothing
	Noop      bool      // an update dropped because nothing that matters changed
}

// decide compares what the stream holds (rec, nil if nothing) with the
// cache (cur, nil if the object is gone) and says what to publish.
func decide(rec *record, cur *state) plan {
	if cur == nil {
		if rec == nil || (rec.Op == events.OpDelete && !rec.Failed) {
			return plan{}
		}
		return plan{Op: events.OpDelete}
	}
	switch {
	case rec == nil:
		return plan{Op: events.OpCreate}
	case rec.Op == events.OpDelete:
		return plan{DeleteOld: rec.Failed && rec.UID != cur.UID, Op: events.OpCreate}
	case rec.UID != cur.UID:
		return plan{DeleteOld: true, Op: events.OpCreate}
	case rec.Failed:
		if rec.Op == events.OpCreate {
			return plan{Op: events.OpCreate}
		}
		return plan{Op: events.OpUpdate}
	case sameContent(rec, cur):
		return plan{Noop: rec.RV != cur.RV}
	}
	return plan{Op: events.OpUpdate}
}

// sameContent compares digests when both are known, else resource versions.
func sameContent(rec *record, cur *state) bool {
	if rec.HasDigest && cur.HasDigest {
		return rec.Digest == cur.Digest
	}
	return rec.RV == cur.RV
}
