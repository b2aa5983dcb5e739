package replay

import (
	"context"
	"slices"
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// History says whether the state rebuilt at a point is complete, or whether
// messages were removed from the stream (per-subject history limits, age
// limits, purges) and which objects the state may lack because of it.
//
// An object is in the rebuilt state when its last message at or before the
// point is still in the stream. Per-subject limits remove only older
// messages of an object that has newer ones, so most removed messages do
// not matter. An object does matter when all its messages up to the point
// were removed: if its first message after the point is an update or a
// delete, it existed at the point and is Missing; if it is a create, it is
// taken not to have existed. Objects with no message left at all (purged,
// or aged out) cannot be named.
type History struct {
	// Complete: no message at or before the point was removed.
	Complete bool `json:"complete"`
	// FirstSequence is the first message the stream holds now.
	FirstSequence uint64 `json:"firstSequence"`
	// Removed counts messages at or before the point that the stream no
	// longer holds.
	Removed uint64 `json:"removed"`
	// Missing are objects that existed at the point (their first message
	// after it is an update or a delete, not a create) but whose state at
	// the point was removed: the rebuilt state lacks them.
	Missing []MissingObject `json:"missing,omitempty"`
}

// MissingObject is an object whose state at the point is unknown.
type MissingObject struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Subject   string `json:"subject"`
	// NextSequence and NextOp are its first message after the point.
	NextSequence uint64 `json:"nextSequence"`
	NextOp       string `json:"nextOp"`
}

// historyTracker follows the messages read up to a point.
type historyTracker struct {
	seen    map[string]struct{} // subjects with a message at or before the point
	last    uint64              // last sequence read at or before the point
	removed uint64              // sequences skipped so far
}

func newHistoryTracker() *historyTracker {
	return &historyTracker{seen: map[string]struct{}{}}
}

func (h *historyTracker) observe(m *message) {
	h.removed += m.Sequence - h.last - 1
	h.last = m.Sequence
	h.seen[m.Subject] = struct{}{}
}

// history completes the report for point seq (every sequence up to it is
// accounted for): when messages were removed, it reads the headers of the
// messages after the point to find the objects that existed at it.
func (r *Replayer) history(ctx context.Context, st streamState, h *historyTracker, point uint64) (History, error) {
	out := History{FirstSequence: st.first}
	if st.trimmed() {
		out.Removed = h.removed + point - min(point, h.last)
	}
	if out.Removed == 0 {
		out.Complete = true
		return out, nil
	}
	next := map[string]bool{}
	err := r.read(ctx, point+1, st.last, true, func(m *message) error {
		if _, ok := h.seen[m.Subject]; ok || next[m.Subject] {
			return nil
		}
		next[m.Subject] = true
		// A message without a known op is not an event: it says nothing.
		if op := events.Op(m.Header.Get(events.HeaderOp)); op == events.OpUpdate || op == events.OpDelete {
			out.Missing = append(out.Missing, missingObject(r.opts.SubjectPrefix, m, string(op)))
		}
		return nil
	})
	slices.SortFunc(out.Missing, func(a, b MissingObject) int { return strings.Compare(a.Subject, b.Subject) })
	return out, err
}

func missingObject(prefix string, m *message, op string) MissingObject {
	o := MissingObject{Subject: m.Subject, NextSequence: m.Sequence, NextOp: op}
	if k, ns, name, err := events.ParseSubject(prefix, m.Subject); err == nil {
		o.Kind, o.Namespace, o.Name = string(k), ns, name
	}
	return o
}
