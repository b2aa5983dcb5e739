package churn

import (
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// Recorder collects what the latency figures are computed from, after the
// run: the writes (object, resourceVersion, start time), what the stream
// tap saw (object, resourceVersion, sequence) and the syncers' status
// reports (sequence applied, time). It is safe for concurrent use.
type Recorder struct {
	mu      sync.Mutex
	writes  []writeRec
	obs     map[ObjectKey][]obsRec
	lastSeq uint64
	reports map[string][]statusRec
	latest  map[string]events.SyncerStatus
}

type writeRec struct {
	key ObjectKey
	op  events.Op
	rv  string
	t0  time.Time
}

type obsRec struct {
	op     events.Op
	rv     string
	seq    uint64
	stored time.Time // when the stream stored it
}

type statusRec struct {
	seq uint64
	at  time.Time
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{obs: map[ObjectKey][]obsRec{}, reports: map[string][]statusRec{}, latest: map[string]events.SyncerStatus{}}
}

// Write records a write of ch, started at t0, that reaches the stream as
// resourceVersion rv. The writes of one object must be recorded in order.
func (r *Recorder) Write(ch Change, rv string, t0 time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, writeRec{key: ch.Key(), op: ch.Op, rv: rv, t0: t0})
}

// Observe records an event the stream stored at seq; observations of one
// object must come in stream order.
func (r *Recorder) Observe(key ObjectKey, op events.Op, rv string, seq uint64, stored time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.obs[key] = append(r.obs[key], obsRec{op: op, rv: rv, seq: seq, stored: stored})
	r.lastSeq = max(r.lastSeq, seq)
}

// Status records a syncer's status report.
func (r *Recorder) Status(st events.SyncerStatus) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports[st.Pod] = append(r.reports[st.Pod], statusRec{seq: st.Sequence, at: st.Time})
	r.latest[st.Pod] = st
}

// Latest returns the last status report of every syncer that reported.
func (r *Recorder) Latest() map[string]events.SyncerStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]events.SyncerStatus, len(r.latest))
	for k, v := range r.latest {
		out[k] = v
	}
	return out
}

// Writes is the number of writes recorded.
func (r *Recorder) Writes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.writes)
}

// Applied is what AppliedLatencies finds.
type Applied struct {
	// Streamed are the latencies from write start until the stream stored
	// the event that carried the write.
	Streamed []time.Duration
	// Latencies from write start to the first report at or past the
	// write's sequence, of every syncer.
	Latencies []time.Duration
	// Unmatched writes never showed on the stream; Unapplied (write,
	// syncer) pairs were not applied by the end.
	Unmatched, Unapplied int
	// Last is when the last write was applied by the last syncer.
	Last time.Time
}

// AppliedLatencies matches every write to the stream sequence that carried
// it (or a later state of the same object, when the watcher coalesced
// updates) and to the first status report of each syncer at or past that
// sequence.
func (r *Recorder) AppliedLatencies() Applied {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out Applied
	carriers := matchSequences(r.writes, r.obs)
	for i, c := range carriers {
		if c.seq == 0 {
			out.Unmatched++
			continue
		}
		out.Streamed = append(out.Streamed, max(c.stored.Sub(r.writes[i].t0), 0))
	}
	for _, reps := range r.reports {
		cum := cumulativeMax(reps)
		for i, w := range r.writes {
			if carriers[i].seq == 0 {
				continue
			}
			at, ok := appliedAt(reps, cum, carriers[i].seq)
			if !ok {
				out.Unapplied++
				continue
			}
			out.Latencies = append(out.Latencies, max(at.Sub(w.t0), 0))
			if at.After(out.Last) {
				out.Last = at
			}
		}
	}
	return out
}

// matchSequences returns the observation that carried every write (a zero
// one, sequence 0, for none).
// Writes and observations of one object are both in order, so one cursor
// per object walks the observations: a create or update is carried by the
// first later non-delete observation with a resourceVersion at least its
// own, a delete by the first later delete.
func matchSequences(writes []writeRec, obs map[ObjectKey][]obsRec) []obsRec {
	out := make([]obsRec, len(writes))
	cursor := map[ObjectKey]int{}
	for i, w := range writes {
		list := obs[w.key]
		for j := cursor[w.key]; j < len(list); j++ {
			if carries(list[j], w) {
				out[i], cursor[w.key] = list[j], j
				break
			}
		}
	}
	return out
}

func carries(o obsRec, w writeRec) bool {
	if w.op == events.OpDelete {
		return o.op == events.OpDelete
	}
	return o.op != events.OpDelete && w.rv != "" && rvAtLeast(o.rv, w.rv)
}

// rvAtLeast compares resourceVersions as numbers when both are (the API
// server's are, in practice), else tests equality.
func rvAtLeast(got, want string) bool {
	a, errA := strconv.ParseUint(got, 10, 64)
	b, errB := strconv.ParseUint(want, 10, 64)
	if errA == nil && errB == nil {
		return a >= b
	}
	return got == want
}

// cumulativeMax is the highest sequence reported up to each report (a
// restarted syncer may report lower ones for a while).
func cumulativeMax(reps []statusRec) []uint64 {
	out := make([]uint64, len(reps))
	var m uint64
	for i, r := range reps {
		m = max(m, r.seq)
		out[i] = m
	}
	return out
}

// appliedAt is the time of the first report at or past seq.
func appliedAt(reps []statusRec, cum []uint64, seq uint64) (time.Time, bool) {
	i, _ := slices.BinarySearch(cum, seq)
	if i == len(cum) {
		return time.Time{}, false
	}
	return reps[i].at, true
}
