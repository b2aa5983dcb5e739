package replay

import (
	"context"
	"fmt"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// Filter selects timeline entries. With Namespace and Host both empty every
// entry is kept; otherwise an entry is kept when its event is in Namespace
// or when its change touches Host (a reload, of the global settings,
// touches every host).
type Filter struct {
	Namespace string
	Host      string
	// ChangedOnly drops the events that did not change the Configuration.
	ChangedOnly bool
}

func (f Filter) keep(e *Entry) bool {
	if f.ChangedOnly && !e.Changed {
		return false
	}
	if f.Namespace == "" && f.Host == "" {
		return true
	}
	return f.Namespace != "" && e.Namespace == f.Namespace || f.Host != "" && (e.Reload || e.Diff.touches(f.Host))
}

// Entry is one event of a timeline and what it did to the Configuration.
type Entry struct {
	Time      time.Time `json:"time"`
	Sequence  uint64    `json:"sequence"`
	Op        string    `json:"op"`
	Kind      string    `json:"kind"`
	Namespace string    `json:"namespace,omitempty"`
	Name      string    `json:"name"`
	// Changed: the Configuration after the event differs from before.
	// Reload: nginx.conf had to change, which only the global settings
	// (the controller ConfigMap) do; ReloadReasons say why. Dynamic: route
	// tables (hosts), backends or certificates were sent to Lua. A change
	// can be both.
	Changed       bool     `json:"changed"`
	Reload        bool     `json:"reload"`
	Dynamic       bool     `json:"dynamic"`
	ReloadReasons []string `json:"reloadReasons,omitempty"`
	Diff          Diff     `json:"diff"`
	// Error says why the message was skipped (it could not be decoded or
	// applied); nothing changed then.
	Error string `json:"error,omitempty"`
	// Note flags an update or delete of an object the replay did not hold:
	// its earlier messages are not in the stream (history trimmed), so the
	// diff may show as new what only changed.
	Note string `json:"note,omitempty"`
}

// noteUnknown is Entry.Note for an object without earlier state.
const noteUnknown = "no earlier message of this object in the stream (history trimmed?): the diff compares with a state that lacked it"

// Timeline is what the events between two points did.
type Timeline struct {
	Stream string `json:"stream"`
	From   Point  `json:"from"`
	To     Point  `json:"to"`
	// Start is the state before the first event of the range.
	Start Baseline `json:"start"`
	// FirstSequence and LastSequence bound the events walked (0 when the
	// range holds none); Events counts them.
	FirstSequence uint64 `json:"firstSequence"`
	LastSequence  uint64 `json:"lastSequence"`
	Events        int    `json:"events"`
	// Changes, Reloads and Dynamic count the events (kept or not) that
	// changed the Configuration, needed a reload (global settings), and
	// sent something to Lua (routes, backends, certificates).
	Changes int `json:"changes"`
	Reloads int `json:"reloads"`
	Dynamic int `json:"dynamic"`
	// Entries are the events the filter kept, in stream order.
	Entries []Entry `json:"entries"`
	// Checksum is that of the Configuration after the last event.
	Checksum string `json:"checksum"`
}

// Baseline is the Configuration a timeline starts from.
type Baseline struct {
	Sequence uint64  `json:"sequence"` // last message before the range; 0 for none
	Checksum string  `json:"checksum"`
	Servers  int     `json:"servers"`
	Backends int     `json:"backends"`
	History  History `json:"history"`
}

// Timeline walks the events from `from` to `to` (both included; zero
// Points mean the start and the end of the stream) and rebuilds after each
// one: the events before `from` are applied without building, then every
// event is compared with the Configuration before it (config.Diff). Points
// the stream cannot answer are errors as for At; `to` before `from` wraps
// ErrInvalidPoint.
func (r *Replayer) Timeline(ctx context.Context, from, to Point, f Filter) (*Timeline, error) {
	st, err := r.state(ctx)
	if err != nil {
		return nil, err
	}
	if err := r.checkRange(st, from, to); err != nil {
		return nil, err
	}
	last := st.last
	if to.Seq > 0 {
		last = to.Seq
	}
	w := &walk{r: r, e: r.newEngine(), h: newHistoryTracker(), from: from, to: to, filter: f,
		tl: &Timeline{Stream: r.opts.Stream, From: from, To: to, Entries: make([]Entry, 0, entriesHint(st.first, from.Seq, last))}}
	if err := r.readEvents(ctx, st.first, last, func(m *message) error {
		r.progress(m.Sequence, st.first, last)
		return w.message(m)
	}); err != nil {
		return nil, err
	}
	if !w.started {
		end := w.h.last
		if from.Seq > 0 {
			end = from.Seq - 1
		}
		w.start(end)
	}
	if w.tl.Start.History, err = r.history(ctx, st, w.h, w.tl.Start.Sequence); err != nil {
		return nil, err
	}
	w.tl.Checksum = w.e.checksum()
	return w.tl, w.e.verifyErr
}

// entriesHint is the room to make for the entries of a timeline over the
// sequences first (or from, when set) to last: one per message, up to a
// bound (a filter keeps fewer, and a time range is not known in
// sequences).
func entriesHint(first, from, last uint64) int {
	first = max(first, from)
	if last < first {
		return 0
	}
	return int(min(last-first+1, 1<<17))
}

// checkRange validates from and to against each other and the stream.
func (r *Replayer) checkRange(st streamState, from, to Point) error {
	if !from.IsZero() {
		if err := r.checkStart(st, from); err != nil {
			return err
		}
		if from.Seq == 0 && from.Time.After(st.lastTime) {
			return fmt.Errorf("%w: %s is after the last message of stream %q (seq %d at %s)",
				ErrBeyondEnd, formatTime(from.Time), r.opts.Stream, st.last, formatTime(st.lastTime))
		}
	} else if st.msgs == 0 {
		return fmt.Errorf("%w: stream %q holds no message", ErrEmptyStream, r.opts.Stream)
	}
	if to.Seq > st.last {
		return fmt.Errorf("%w: sequence %d is after the last message of stream %q (seq %d at %s)",
			ErrBeyondEnd, to.Seq, r.opts.Stream, st.last, formatTime(st.lastTime))
	}
	if from.IsZero() || to.IsZero() {
		return nil
	}
	if from.Seq > 0 && to.Seq > 0 && to.Seq < from.Seq || from.Seq == 0 && to.Seq == 0 && to.Time.Before(from.Time) {
		return fmt.Errorf("%w: --to %s is before --from %s", ErrInvalidPoint, to, from)
	}
	return nil
}

// walk is the state of one Timeline.
type walk struct {
	r        *Replayer
	e        *engine
	h        *historyTracker
	from, to Point
	filter   Filter
	started  bool
	tl       *Timeline
}

// message handles one message of the read: before the range it is only
// applied; the first one in range builds the baseline; after the range the
// read stops.
func (w *walk) message(m *message) error {
	if !w.started && w.before(m) {
		w.h.observe(m)
		_ = applyMessage(w.e, m) // skipped messages before the range are not reported
		return nil
	}
	if !w.to.IsZero() && !w.to.includes(m.Sequence, m.Time) {
		return errStop
	}
	if !w.started {
		w.start(m.Sequence - 1)
	}
	entry := w.step(m)
	if entry.Changed {
		w.tl.Changes++
		w.tl.Reloads += boolInt(entry.Reload)
		w.tl.Dynamic += boolInt(entry.Dynamic)
	}
	if w.tl.Events++; w.tl.FirstSequence == 0 {
		w.tl.FirstSequence = m.Sequence
	}
	w.tl.LastSequence = m.Sequence
	if w.filter.keep(&entry) {
		w.tl.Entries = append(w.tl.Entries, entry)
	}
	return nil
}

// before reports whether m comes before the range.
func (w *walk) before(m *message) bool {
	switch {
	case w.from.Seq > 0:
		return m.Sequence < w.from.Seq
	case !w.from.Time.IsZero():
		return m.Time.Before(w.from.Time)
	}
	return false
}

// start builds the baseline from the events before the range, which ends
// at sequence seq.
func (w *walk) start(seq uint64) {
	w.started = true
	w.e.rebuild()
	w.tl.Start = Baseline{Sequence: seq, Checksum: w.e.cur.Checksum, Servers: len(w.e.cur.Servers), Backends: w.e.cur.Backends.Len()}
}

// step applies one message in range and describes it.
func (w *walk) step(m *message) Entry {
	entry := Entry{Time: m.Time, Sequence: m.Sequence}
	ev := m.ev
	if m.err != nil {
		entry.fromSubject(w.r.opts.SubjectPrefix, m)
		entry.Error = m.err.Error()
		return entry
	}
	entry.Op, entry.Kind, entry.Namespace, entry.Name = string(ev.Op), string(ev.Kind), ev.Namespace, ev.Name
	if ev.Op != events.OpCreate && !w.e.has(ev) {
		entry.Note = noteUnknown
	}
	d, ch, changed, err := w.e.step(ev)
	if err != nil {
		entry.Error = err.Error()
		return entry
	}
	entry.Diff, entry.Changed = d, changed
	entry.Reload, entry.Dynamic, entry.ReloadReasons = ch.Reload, ch.Dynamic(), ch.ReloadReasons
	return entry
}

// fromSubject fills the identity of an undecodable message from its
// subject and headers.
func (e *Entry) fromSubject(prefix string, m *message) {
	e.Op = m.Header.Get(events.HeaderOp)
	if k, ns, name, err := events.ParseSubject(prefix, m.Subject); err == nil {
		e.Kind, e.Namespace, e.Name = string(k), ns, name
		return
	}
	e.Name = m.Subject
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
