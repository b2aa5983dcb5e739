package replay

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"fmt"
	"time"
)

// Snapshot is the Configuration rebuilt at a point of the stream.
type Snapshot struct {
	Stream string `json:"stream"`
	// Point is the point asked for; Sequence and Time are those of the
	// last message at or before it.
	Point    Point     `json:"-"`
	Sequence uint64    `json:"sequence"`
	Time     time.Time `json:"time"`
	// Events counts the messages applied, Skipped those that could not be.
	Events  int       `json:"events"`
	Skipped []Skipped `json:"skipped,omitempty"`
	History History   `json:"history"`
	// Objects is the number of objects in the rebuilt store.
	Objects       int                   `json:"objects"`
	Configuration *config.Configuration `json:"configuration"`
}

// At rebuilds the store as it was at p — for every object, its last
// message at or before p, applied in stream order — and builds the
// Configuration from it with Options.Model. A point before the first
// message the stream holds is an error wrapping ErrBeforeStream, a sequence
// after its last message one wrapping ErrBeyondEnd.
func (r *Replayer) At(ctx context.Context, p Point) (*Snapshot, error) {
	if p.IsZero() {
		return nil, fmt.Errorf("%w: no point given", ErrInvalidPoint)
	}
	st, err := r.state(ctx)
	if err != nil {
		return nil, err
	}
	if err := r.checkStart(st, p); err != nil {
		return nil, err
	}
	e := r.newEngine()
	h := newHistoryTracker()
	snap := &Snapshot{Stream: r.opts.Stream, Point: p}
	err = r.readEvents(ctx, st.first, st.last, func(m *message) error {
		r.progress(m.Sequence, st.first, st.last)
		if !p.includes(m.Sequence, m.Time) {
			return errStop
		}
		h.observe(m)
		snap.Sequence, snap.Time = m.Sequence, m.Time
		if err := applyMessage(e, m); err != nil {
			snap.Skipped = append(snap.Skipped, Skipped{Sequence: m.Sequence, Subject: m.Subject, Error: err.Error()})
			return nil
		}
		snap.Events++
		return nil
	})
	if err != nil {
		return nil, err
	}
	point := snap.Sequence
	if p.Seq > 0 {
		point = p.Seq
	}
	if snap.History, err = r.history(ctx, st, h, point); err != nil {
		return nil, err
	}
	e.rebuild()
	snap.Configuration, snap.Objects = e.cur, e.inc.Len()
	return snap, nil
}

// applyMessage applies the decoded m to the store without building.
func applyMessage(e *engine, m *message) error {
	if m.err != nil {
		return m.err
	}
	return e.apply(m.ev)
}

// checkStart rejects a point the stream cannot answer: before its first
// message, or a sequence after its last.
func (r *Replayer) checkStart(st streamState, p Point) error {
	if st.msgs == 0 {
		return fmt.Errorf("%w: stream %q holds no message", ErrEmptyStream, r.opts.Stream)
	}
	switch {
	case p.Seq > st.last:
		return fmt.Errorf("%w: sequence %d is after the last message of stream %q (seq %d at %s)",
			ErrBeyondEnd, p.Seq, r.opts.Stream, st.last, formatTime(st.lastTime))
	case p.Seq > 0 && p.Seq < st.first:
		return fmt.Errorf("%w: sequence %d is before the first message stream %q holds (seq %d at %s); older history was removed",
			ErrBeforeStream, p.Seq, r.opts.Stream, st.first, formatTime(st.firstTime))
	case p.Seq == 0 && p.Time.Before(st.firstTime):
		return fmt.Errorf("%w: %s is before the first message stream %q holds (seq %d at %s)",
			ErrBeforeStream, formatTime(p.Time), r.opts.Stream, st.first, formatTime(st.firstTime))
	}
	return nil
}

// formatTime is the time format of every output: RFC3339 in UTC with
// milliseconds.
func formatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }
