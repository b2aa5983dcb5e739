package stream

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Metadata keys of the event stream's reconcile marker (see
// MarkReconciled): the stream sequence up to which the stream holds the
// watcher's state, and the creation time of the stream it was written for.
const (
	MetaReconciledSequence = "ingress-sync.reconciled.sequence"
	MetaReconciledCreated  = "ingress-sync.reconciled.created"
)

// ErrStreamRecreated: the stream is not the one an operation began on (it
// was deleted and created again, so its sequences restarted).
var ErrStreamRecreated = errors.New("stream: stream recreated")

// StreamState is what the watcher and the syncer compare to tell a
// recreated stream from the one they read: its creation time and last
// sequence, and the reconcile marker it carries.
type StreamState struct {
	Created time.Time
	LastSeq uint64
	Msgs    uint64
	// Reconciled is the marker's sequence, and HasMarker whether the
	// stream carries a marker written for this very stream (its creation
	// time matches).
	Reconciled uint64
	HasMarker  bool
	// FirstTime is the time its first message was stored; zero when it
	// holds none.
	FirstTime time.Time
	// HasLeader: a replicated stream has elected a leader (a stream of
	// one server always has). Until then nothing answers its publishes:
	// each waits out its ack timeout.
	HasLeader bool
}

// Stale reports whether the stream holds messages stored before it was
// created: the files of a deleted stream of the same name, opened by the
// new one. nats-server forgets a deleted stream before it removes its
// files; a stream created again in between opens them, then loses them,
// and publishes to it time out. Such a stream must be deleted and created
// again.
func (s StreamState) Stale() bool {
	return s.Msgs > 0 && !s.FirstTime.IsZero() && s.FirstTime.Before(s.Created)
}

// ReadState reads the current state of stream, bounded by DefaultTimeout
// unless ctx has a deadline. A missing stream is an error wrapping
// jetstream.ErrStreamNotFound.
func ReadState(ctx context.Context, js jetstream.JetStream, stream string) (StreamState, error) {
	info, err := streamInfo(ctx, js, stream)
	if err != nil {
		return StreamState{}, err
	}
	return stateOf(info), nil
}

func streamInfo(ctx context.Context, js jetstream.JetStream, stream string) (*jetstream.StreamInfo, error) {
	s, err := streamOf(ctx, js, stream, ReadOptions{})
	if err != nil {
		return nil, err
	}
	return s.CachedInfo(), nil
}

func stateOf(info *jetstream.StreamInfo) StreamState {
	st := StreamState{Created: info.Created, LastSeq: info.State.LastSeq, Msgs: info.State.Msgs, FirstTime: info.State.FirstTime,
		HasLeader: info.Cluster == nil || info.Cluster.Leader != "" || info.Config.Replicas <= 1}
	md := info.Config.Metadata
	seq, err := strconv.ParseUint(md[MetaReconciledSequence], 10, 64)
	if err != nil {
		return st
	}
	created, err := time.Parse(time.RFC3339Nano, md[MetaReconciledCreated])
	if err != nil || !created.Equal(info.Created) {
		return st
	}
	st.Reconciled, st.HasMarker = seq, true
	return st
}

// Replaces reports whether s is another stream than the one old describes:
// created at another time, or with sequences below old's last one.
func (s StreamState) Replaces(old StreamState) bool {
	return !s.Created.Equal(old.Created) || s.LastSeq < old.LastSeq
}

// MarkReconciled writes the reconcile marker on stream: the watcher's
// state is complete in it up to its last sequence. A syncer that found the
// stream recreated waits for this marker before it bootstraps again, so
// that it never applies the partial state of a half-republished stream.
// created is the creation time of the stream the watcher reconciled with;
// when the stream is another one by now, MarkReconciled writes nothing and
// returns an error wrapping ErrStreamRecreated. It returns the sequence
// marked. Ensure drops the marker (it writes the configuration without it);
// the next reconcile writes it again.
func MarkReconciled(ctx context.Context, js jetstream.JetStream, stream string, created time.Time) (uint64, error) {
	ctx, cancel := bounded(ctx, DefaultTimeout)
	defer cancel()
	info, err := streamInfo(ctx, js, stream)
	if err != nil {
		return 0, err
	}
	if !info.Created.Equal(created) {
		return 0, fmt.Errorf("%w: %s created at %s, reconciled the one of %s", ErrStreamRecreated,
			stream, info.Created.Format(time.RFC3339Nano), created.Format(time.RFC3339Nano))
	}
	st := stateOf(info)
	if st.HasMarker && st.Reconciled == st.LastSeq {
		return st.LastSeq, nil
	}
	cfg := info.Config
	cfg.Metadata = maps.Clone(cfg.Metadata)
	if cfg.Metadata == nil {
		cfg.Metadata = make(map[string]string, 2)
	}
	cfg.Metadata[MetaReconciledSequence] = strconv.FormatUint(st.LastSeq, 10)
	cfg.Metadata[MetaReconciledCreated] = info.Created.Format(time.RFC3339Nano)
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		return 0, fmt.Errorf("stream: mark %s reconciled: %w", stream, err)
	}
	return st.LastSeq, nil
}

// How a Consumer that found its stream recreated polls for the marker.
const (
	markerPoll    = 250 * time.Millisecond
	markerMaxPoll = 500 * time.Millisecond
	markerLogged  = 30 * time.Second
)

// sameStream checks that st is the stream the Consumer reads (recording it
// when it knows none yet): an error wrapping ErrStreamRecreated otherwise.
func (c *Consumer) sameStream(st StreamState) error {
	if c.created.IsZero() {
		c.created = st.Created
		return nil
	}
	if st.Replaces(StreamState{Created: c.created, LastSeq: c.lastSeq.Load()}) {
		return fmt.Errorf("%w: %s created at %s (was %s), last sequence %d (handled %d)", ErrStreamRecreated, c.stream,
			st.Created.Format(time.RFC3339Nano), c.created.Format(time.RFC3339Nano), st.LastSeq, c.lastSeq.Load())
	}
	return nil
}

// checkTimeout bounds one check of the stream, and checkRetry is the wait
// before the next after one failed: the servers may not answer at all for
// a while (a stream created twice at once), and a syncer must not wait
// DefaultTimeout and then a whole check interval to see the new stream.
const (
	checkTimeout = 2 * time.Second
	checkRetry   = 500 * time.Millisecond
)

// errCheckFailed: the server could not be asked whether the stream is the
// one read; the reader asks again after checkRetry.
var errCheckFailed = errors.New("stream: stream check failed")

// checkStream asks the server whether the stream is still the one read. A
// missing stream is returned (the reader fails with it too); another
// failure to ask is errCheckFailed.
func (c *Consumer) checkStream(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	info, err := streamInfo(cctx, c.js, c.stream)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		return err
	case err != nil && ctx.Err() == nil:
		c.cfg.logger.Warn("stream check failed, asking again soon", "stream", c.stream, "retry_in", checkRetry, "err", err)
		return errCheckFailed
	case err != nil:
		return ctx.Err()
	}
	return c.sameStream(stateOf(info))
}

// recover follows a recreated stream: it waits for the watcher's marker on
// the new stream, then resets the Consumer to bootstrap from it and calls
// the WithStreamRecreated function. False when ctx ended first.
func (c *Consumer) recover(ctx context.Context) bool {
	c.cfg.logger.Warn("event stream recreated: keeping what was handled until the watcher has republished",
		"stream", c.stream, "handled_seq", c.lastSeq.Load())
	began := time.Now()
	st, ok := c.awaitMarker(ctx)
	if !ok {
		return false
	}
	c.cfg.logger.Info("recreated event stream reconciled, bootstrapping again", "stream", c.stream,
		"reconciled_seq", st.Reconciled, "last_seq", st.LastSeq, "waited", time.Since(began).Round(time.Millisecond),
		"since_created", time.Since(st.Created).Round(time.Millisecond))
	c.created = st.Created
	c.lastSeq.Store(0)
	c.caughtUp.Store(false)
	if c.cfg.onRecreated != nil {
		c.cfg.onRecreated(ctx)
	}
	return true
}

// awaitMarker polls the stream until it carries a reconcile marker written
// for it.
func (c *Consumer) awaitMarker(ctx context.Context) (StreamState, bool) {
	logged := time.Now()
	for attempt := 1; ; attempt++ {
		st, err := ReadState(ctx, c.js, c.stream)
		if err == nil && st.HasMarker {
			return st, true
		}
		if time.Since(logged) >= markerLogged {
			c.cfg.logger.Warn("still waiting for the watcher to republish the recreated stream", "stream", c.stream,
				"last_seq", st.LastSeq, "err", err)
			logged = time.Now()
		}
		if !sleep(ctx, nil, backoff(attempt, markerPoll, markerMaxPoll, rand.Int64N)) {
			return StreamState{}, false
		}
	}
}

// streamCheck paces a reader's checks of the stream, and remembers the
// server-side consumer that delivered last. Once caught up, reads wait
// until the next check under one context per check (wctx), not a timer per
// message.
type streamCheck struct {
	every    time.Duration
	next     time.Time
	consumer string
	// progressed: a message came since the last check; delivered: one
	// came since the reader opened.
	progressed, delivered bool
	// first is how long a reader waits for its first message before it
	// asks the server (firstIdle, longer after stalls).
	first time.Duration
	// confirming: the interval ended without a message, and a short one
	// (stallGrace) runs before the reader may be called stalled.
	confirming bool
	wctx       context.Context
	cancel     context.CancelFunc
	// pctx, a child of wctx, ends every consumerPoll: a caught-up reader
	// then looks whether its ordered consumer recreated itself.
	pctx    context.Context
	pcancel context.CancelFunc
}

// consumerPoll is how often a caught-up reader without messages looks
// whether nats.go recreated its ordered consumer, which it does silently
// within a fraction of a second when the stream is deleted and created
// again (the new consumer then waits for sequences the new stream reaches
// only later). The look is local; only a change asks the server.
const consumerPoll = 250 * time.Millisecond

// stallGrace is the short read that confirms an interval without a message:
// a process stopped past the check (SIGSTOP, a long pause) finds the
// messages buffered meanwhile first, and is not taken for a stalled reader.
const stallGrace = 100 * time.Millisecond

// reset starts the next interval; stop must be called after the last one.
func (s *streamCheck) reset(ctx context.Context) {
	s.start(ctx, s.every)
	s.progressed, s.confirming = false, false
}

// confirm starts the short interval after one without a message; it
// reports false when that interval has run already.
func (s *streamCheck) confirm(ctx context.Context) bool {
	if s.progressed || s.confirming {
		return false
	}
	s.start(ctx, stallGrace)
	s.confirming = true
	return true
}

func (s *streamCheck) start(ctx context.Context, d time.Duration) {
	s.stop()
	s.next = time.Now().Add(d)
	s.wctx, s.cancel = context.WithDeadline(ctx, s.next)
}

func (s *streamCheck) stop() {
	if s.pcancel != nil {
		s.pcancel()
	}
	if s.cancel != nil {
		s.cancel()
	}
}

// pollCtx is the context a caught-up read waits under: until the next
// check or for consumerPoll, whichever ends first; a new one once it ended.
func (s *streamCheck) pollCtx() context.Context {
	if s.pctx != nil && s.pctx.Err() == nil {
		return s.pctx
	}
	if s.pcancel != nil {
		s.pcancel()
	}
	s.pctx, s.pcancel = context.WithTimeout(s.wctx, consumerPoll)
	return s.pctx
}

func (s *streamCheck) due() bool { return !time.Now().Before(s.next) }

// read returns the next message of r, ErrIdle when none came: once caught
// up by the next check, before that within idlePoll as well.
func (s *streamCheck) read(ctx context.Context, r *reader, caughtUp bool) (Message, error) {
	if caughtUp {
		return r.nextIn(ctx, s.pollCtx())
	}
	return r.next(ctx, min(max(time.Until(s.next), time.Millisecond), s.idle()))
}

// idle is how long a reader that is not caught up waits for a message
// before it asks the server: first until its first message, idlePoll
// after.
func (s *streamCheck) idle() time.Duration {
	if s.delivered || s.first <= 0 {
		return idlePoll
	}
	return s.first
}
