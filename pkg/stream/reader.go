package stream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

const (
	// maxResetAttempts is how often an ordered consumer tries to recreate
	// itself (after a server restart, say) before it gives up and lets the
	// caller start a new one.
	maxResetAttempts = 5
	// idlePoll is how long a reader that has not caught up waits for a
	// message before it asks the server whether anything is left.
	idlePoll = time.Second
	// deleteTimeout bounds the deletion of a reader's consumer.
	deleteTimeout = 2 * time.Second
)

// Message is one stream message as an ordered consumer delivers it.
type Message struct {
	Sequence uint64 // stream sequence
	Subject  string
	Time     time.Time // when the stream stored it
	Header   nats.Header
	Data     []byte // empty when reading headers only
	// Pending is how many messages the consumer still had to deliver
	// after this one: a hint, since a filtered consumer's count can lag.
	Pending uint64

	consumer string // the server-side consumer that delivered it
}

// Decode is the event m carries, with its subject checked against its
// envelope (events.DecodeMessage): the one decode path of the syncer's
// Consumer and of replay.
func (m Message) Decode(prefix string) (events.Event, error) {
	return events.DecodeMessage(prefix, m.Subject, m.Data, m.Sequence, m.Time)
}

// ReadOptions say what a read delivers.
type ReadOptions struct {
	// Filter is the subject filter, e.g. events.FilterSubject(prefix).
	Filter string
	// Start is the first stream sequence to read; 0 reads the last message
	// of every subject first, then everything after it.
	Start       uint64
	HeadersOnly bool
	// Batch is how many messages are pulled at once; 0 is the client's
	// default.
	Batch int
	// Timeout bounds every JetStream API call and, in ReadRange, every
	// wait for a message. 0 bounds the calls by DefaultTimeout when ctx
	// has no deadline of its own.
	Timeout time.Duration
}

// bound is ctx bounded for one API call.
func (o ReadOptions) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if o.Timeout > 0 {
		return context.WithTimeout(ctx, o.Timeout)
	}
	return bounded(ctx, DefaultTimeout)
}

// wait is the longest ReadRange waits for a message.
func (o ReadOptions) wait() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

func (o ReadOptions) consumerConfig() jetstream.OrderedConsumerConfig {
	cfg := jetstream.OrderedConsumerConfig{
		FilterSubjects:   []string{o.Filter},
		DeliverPolicy:    jetstream.DeliverLastPerSubjectPolicy,
		HeadersOnly:      o.HeadersOnly,
		MaxResetAttempts: maxResetAttempts,
	}
	if o.Start > 0 {
		cfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
		cfg.OptStartSeq = o.Start
	}
	return cfg
}

// eventReads reads the events under prefix from stream sequence start (0:
// the last message of every subject first).
func eventReads(prefix string, start uint64, headersOnly bool) ReadOptions {
	return ReadOptions{Filter: events.FilterSubject(prefix), Start: start, HeadersOnly: headersOnly}
}

// ReadRange calls fn for every message matching o.Filter with o.Start <=
// sequence <= end, in stream order, through an ordered (ephemeral) consumer
// that is deleted when ReadRange returns. o.Start must be at least 1. A
// stream that stops delivering within o.Timeout is an error wrapping
// ErrIdle; an error of fn ends the read and is returned as it is.
func ReadRange(ctx context.Context, js jetstream.JetStream, stream string, o ReadOptions, end uint64, fn func(Message) error) error {
	if o.Start == 0 || o.Filter == "" {
		return fmt.Errorf("%w: read range needs a filter and a start sequence", ErrInvalidConfig)
	}
	if o.Start > end {
		return nil
	}
	s, err := streamOf(ctx, js, stream, o)
	if err != nil {
		return err
	}
	if more, err := o.more(ctx, s, o.Start, end); err != nil || !more {
		return err
	}
	r, err := openReader(ctx, js, stream, o)
	if err != nil {
		return err
	}
	defer r.close()
	for {
		m, err := r.next(ctx, o.wait())
		switch {
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			return fmt.Errorf("stream: read %s: %w", stream, err)
		case m.Sequence > end:
			return nil
		}
		if err := fn(m); err != nil || m.Sequence == end {
			return err
		}
		if m.Pending == 0 {
			if more, err := o.more(ctx, s, m.Sequence+1, end); err != nil || !more {
				return err
			}
		}
	}
}

func streamOf(ctx context.Context, js jetstream.JetStream, stream string, o ReadOptions) (jetstream.Stream, error) {
	ctx, cancel := o.bound(ctx)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, fmt.Errorf("stream: stream %s: %w", stream, err)
	}
	return s, nil
}

// more asks the stream whether a message matching the filter with from <=
// sequence <= end exists. A message's pending count is only a hint: the
// end of the range may be a deleted message, and a filtered consumer's
// count can lag.
func (o ReadOptions) more(ctx context.Context, s jetstream.Stream, from, end uint64) (bool, error) {
	ctx, cancel := o.bound(ctx)
	defer cancel()
	m, err := s.GetMsg(ctx, from, jetstream.WithGetMsgSubject(o.Filter))
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("stream: read %s: %w", s.CachedInfo().Config.Name, err)
	}
	return m.Sequence <= end, nil
}

// reader is one ordered consumer and its message iterator.
type reader struct {
	js     jetstream.JetStream
	stream string
	opts   ReadOptions
	oc     jetstream.Consumer
	it     jetstream.MessagesContext
	name   string      // of the server-side consumer created first
	stop   func() bool // unregisters the stop-on-cancel hook
}

// openReader creates an ordered consumer on stream with o. Its iterator
// stops when ctx is done.
func openReader(ctx context.Context, js jetstream.JetStream, stream string, o ReadOptions) (*reader, error) {
	cctx, cancel := o.bound(ctx)
	defer cancel()
	oc, err := js.OrderedConsumer(cctx, stream, o.consumerConfig())
	if err != nil {
		return nil, fmt.Errorf("stream: consumer on stream %s: %w", stream, err)
	}
	var pull []jetstream.PullMessagesOpt
	if o.Batch > 0 {
		pull = append(pull, jetstream.PullMaxMessages(o.Batch))
	}
	it, err := oc.Messages(pull...)
	if err != nil {
		deleteConsumer(js, stream, oc)
		return nil, fmt.Errorf("stream: consume stream %s: %w", stream, err)
	}
	return &reader{js: js, stream: stream, opts: o, oc: oc, it: it, name: oc.CachedInfo().Name,
		stop: context.AfterFunc(ctx, it.Stop)}, nil
}

// consumer is the name of the server-side consumer the ordered consumer
// reads through now ("" before it has one); nats.go replaces it when it
// recreates itself.
func (r *reader) consumer() string {
	if info := r.oc.CachedInfo(); info != nil {
		return info.Name
	}
	return ""
}

// close stops the iterator and deletes the consumer on the server rather
// than leaving it to expire.
func (r *reader) close() {
	r.stop()
	r.it.Stop()
	deleteConsumer(r.js, r.stream, r.oc)
}

func deleteConsumer(js jetstream.JetStream, stream string, oc jetstream.Consumer) {
	info := oc.CachedInfo()
	if info == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), deleteTimeout)
	defer cancel()
	_ = js.DeleteConsumer(ctx, stream, info.Name) // best effort: it expires anyway
}

// next returns the next message. A wait > 0 bounds the wait: ErrIdle when
// no message came within it. A message without JetStream metadata is an
// error wrapping ErrNoMetadata, returned with the message's subject.
func (r *reader) next(ctx context.Context, wait time.Duration) (Message, error) {
	if wait <= 0 {
		return r.nextIn(ctx, ctx)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	return r.nextIn(ctx, wctx)
}

// nextIn is next waiting as long as wctx, a context derived from ctx, lives:
// ErrIdle when its deadline comes first. A caller that reads many messages
// within one deadline passes the same wctx to each read, which spares a
// timer per message.
func (r *reader) nextIn(ctx, wctx context.Context) (Message, error) {
	msg, err := r.it.Next(jetstream.NextContext(wctx))
	if err != nil {
		if wctx != ctx && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return Message{}, ErrIdle
		}
		return Message{}, err
	}
	md, err := msg.Metadata()
	if err != nil {
		return Message{Subject: msg.Subject()}, fmt.Errorf("%w: %w", ErrNoMetadata, err)
	}
	return Message{
		Sequence: md.Sequence.Stream, Subject: msg.Subject(), Time: md.Timestamp,
		Header: msg.Headers(), Data: msg.Data(), Pending: md.NumPending, consumer: md.Consumer,
	}, nil
}

// stalled asks the server, when no message came since the last check
// (progressed false), whether the consumer still exists and has nothing
// pending: an error wrapping ErrStalled when it is gone or has messages it
// does not deliver. The ordered consumer of nats.go can stop delivering,
// without an error, after the server that held it was SIGKILLed. A failed
// call is not a stall: the next check asks again.
func (r *reader) stalled(ctx context.Context, progressed bool) error {
	if progressed {
		return nil
	}
	ictx, cancel := r.opts.bound(ctx)
	defer cancel()
	info, err := r.oc.Info(ictx)
	switch {
	case errors.Is(err, jetstream.ErrConsumerNotFound):
		return fmt.Errorf("%w: consumer %s is gone", ErrStalled, r.name)
	case err != nil || ctx.Err() != nil:
		return nil
	case info.NumPending > 0:
		return fmt.Errorf("%w: %d messages pending, none delivered", ErrStalled, info.NumPending)
	}
	return nil
}

// pending asks the server how many messages the consumer has left to
// deliver, and whether it has nothing left beyond stream sequence handled
// (drained). A failure to ask says 0, false.
func (r *reader) pending(ctx context.Context, handled uint64) (uint64, bool) {
	ictx, cancel := r.opts.bound(ctx)
	defer cancel()
	info, err := r.oc.Info(ictx)
	if err != nil {
		return 0, false
	}
	return info.NumPending, info.NumPending == 0 && info.Delivered.Stream <= handled
}

// catchUp tracks whether a reader has read the stream as it was when
// reading began: up to its last sequence at that time (target), or until a
// message says nothing is pending.
type catchUp struct {
	target uint64
	done   bool
}

// newCatchUp reads the target from the stream's state; an empty stream is
// caught up from the start.
func newCatchUp(ctx context.Context, js jetstream.JetStream, stream string) (catchUp, error) {
	info, err := streamInfo(ctx, js, stream)
	if err != nil {
		return catchUp{}, err
	}
	return catchUpOf(info), nil
}

// catchUpOf is the target of a read of the stream info describes.
func catchUpOf(info *jetstream.StreamInfo) catchUp {
	state := info.State
	if state.Msgs == 0 {
		return catchUp{done: true}
	}
	return catchUp{target: state.LastSeq}
}

// stalledReads bounds the reads readAgainIfStalled makes.
const stalledReads = 3

// readAgainIfStalled runs read, and again with a fresh start when it
// stalled (ErrStalled), at most stalledReads times in all.
func readAgainIfStalled(read func() error) error {
	var err error
	for range stalledReads {
		if err = read(); !errors.Is(err, ErrStalled) {
			return err
		}
	}
	return err
}

// observe records a message; it reports true once, when the reader has
// caught up.
func (c *catchUp) observe(seq, pending uint64) bool {
	if c.done || (pending > 0 && seq < c.target) {
		return false
	}
	c.done = true
	return true
}

// firstIdle is how long readCaughtUp waits for a reader's first message
// before it asks whether the reader stalled: an ordered consumer delivers
// its first message within milliseconds, and one made on a stream just
// created can stall from the start (the watcher's reconcile of a recreated
// stream reads the last message of every subject through one).
const firstIdle = 250 * time.Millisecond

// readCaughtUp passes every message of r to handle until r has caught up.
// A reader that delivered nothing for idlePoll, and then nothing in one
// short read, while the server holds messages for it has stalled: the error
// wraps ErrStalled, and the caller reads again with a new reader
// (readAgainIfStalled). The short read keeps a process that was stopped
// past idlePoll from taking its buffered messages for a stall.
func readCaughtUp(ctx context.Context, r *reader, cu *catchUp, handle func(Message)) error {
	var last uint64
	// quiet: the last read ended idle with messages left; the next one, of
	// stallGrace, confirms the stall (see streamCheck.confirm).
	quiet := false
	for !cu.done {
		wait := idlePoll
		switch {
		case quiet:
			wait = stallGrace
		case last == 0:
			wait = firstIdle
		}
		m, err := r.next(ctx, wait)
		if errors.Is(err, ErrIdle) {
			if _, cu.done = r.pending(ctx, last); !cu.done {
				if quiet {
					if err := r.stalled(ctx, false); err != nil {
						return err
					}
				}
				quiet = !quiet
			}
			continue
		}
		if err != nil {
			return err
		}
		quiet = false
		handle(m)
		last = m.Sequence
		cu.observe(last, m.Pending)
	}
	return nil
}
