package watch

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
)

// round follows the keys one reconcile queued until the stream holds the
// state of each: published and acknowledged, found unchanged, or refused
// for good. Once the reconcile has queued them all and none is left, the
// round is complete (done receives), and the guard marks the stream
// reconciled, so that syncers that found the stream recreated know that
// it holds the watcher's whole state again.
type round struct {
	mu      sync.Mutex
	created time.Time // of the stream reconciled with
	began   time.Time // when the round began
	pending map[key]bool
	seeding bool          // the reconcile is still queueing keys
	open    bool          // begun, and its completion not yet signalled
	done    chan struct{} // capacity 1
}

func newRound() *round { return &round{pending: make(map[key]bool), done: make(chan struct{}, 1)} }

// begin starts a round on the stream created at created; what an earlier
// round still waited for is forgotten (this reconcile queues it again).
func (r *round) begin(created time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.created, r.pending, r.seeding, r.open = created, make(map[key]bool), true, true
	r.began = time.Now()
}

// expect adds k to the round.
func (r *round) expect(k key) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.open {
		r.pending[k] = true
	}
}

// seeded ends the queueing of the round.
func (r *round) seeded() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seeding = false
	r.complete()
}

// settle says that the stream holds the state of k.
func (r *round) settle(k key) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending[k] {
		delete(r.pending, k)
		r.complete()
	}
}

// complete signals the end of an open round once nothing is pending.
// r.mu is held.
func (r *round) complete() {
	if !r.open || r.seeding || len(r.pending) > 0 {
		return
	}
	r.open = false
	select {
	case r.done <- struct{}{}:
	default:
	}
}

// age is the time since the round began.
func (r *round) age() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return time.Since(r.began)
}

// streamCreated is the creation time of the stream last reconciled with.
func (r *round) streamCreated() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.created
}

// beginRound, expect and endRound are the reconcile's side of the round:
// expect also queues k.
func (t *term) beginRound(created time.Time) { t.round.begin(created) }

func (t *term) expect(k key) {
	t.round.expect(k)
	t.queue.Add(k)
}

func (t *term) endRound() { t.round.seeded() }

// resetRecords forgets what the term believed the stream holds, for a
// stream that was recreated: the next reconcile seeds it again.
func (t *term) resetRecords() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.records = make(map[key]record)
	t.tombs = make(map[key]runtime.Object)
}
