package stream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// Restart backoff of a Consumer whose ordered consumer failed for good.
const (
	consumerBackoff    = 250 * time.Millisecond
	consumerMaxBackoff = 10 * time.Second
)

// DefaultStreamCheck is how often a Consumer asks the server whether the
// stream it reads is still the same one (WithStreamCheck).
const DefaultStreamCheck = 5 * time.Second

// errRebootstrap: the ordered consumer recreated itself during the
// bootstrap; a new bootstrap reads the rest.
var errRebootstrap = errors.New("stream: ordered consumer recreated during the bootstrap")

// Handler receives the events of a Consumer, one at a time, in stream
// order, on the goroutine that called Start.
type Handler interface {
	// HandleEvent gets every decoded event. An error is logged with the
	// event's sequence and the event is skipped; it does not stop the
	// consumer.
	HandleEvent(ctx context.Context, ev events.Event) error
	// CaughtUp is called once, after the events of the stream as it was
	// when Start began have been handled (at once for an empty stream).
	// Events after it are live. After a recreated stream (see
	// WithStreamRecreated) it is called again, once the new stream's
	// bootstrap has been handled.
	CaughtUp(ctx context.Context)
}

// ConsumerOption configures a Consumer; NewConsumer returns an error
// wrapping ErrInvalidConfig for a bad one.
type ConsumerOption func(*consumerConfig) error

type consumerConfig struct {
	onDecodeError func(seq uint64, subject string, err error)
	onRecreated   func(ctx context.Context)
	checkEvery    time.Duration
	startSeq      uint64
	logger        *slog.Logger
}

// WithDecodeErrorHandler sets the function that reports every message that
// cannot be decoded, or whose subject does not match its payload
// (events.DecodeMessage), with its stream sequence and subject; without
// one, the Consumer logs a warning. The message is skipped; the consumer
// goes on.
func WithDecodeErrorHandler(f func(seq uint64, subject string, err error)) ConsumerOption {
	return func(c *consumerConfig) error {
		if f == nil {
			return fmt.Errorf("nil decode error handler")
		}
		c.onDecodeError = f
		return nil
	}
}

// WithStartSequence reads every message from stream sequence seq on,
// instead of the last message of each subject: a replay of the history.
func WithStartSequence(seq uint64) ConsumerOption {
	return func(c *consumerConfig) error {
		if seq < 1 {
			return fmt.Errorf("start sequence %d < 1", seq)
		}
		c.startSeq = seq
		return nil
	}
}

// WithStreamRecreated sets the function called when the stream was
// deleted and created again (its sequences restarted), once the watcher has
// marked the new stream reconciled (MarkReconciled) and before the events
// of its bootstrap: the Handler then gets the last message of every
// subject of the new stream, and CaughtUp again. Until then nothing is
// delivered. Without it the Handler gets the new bootstrap on top of what
// it holds.
func WithStreamRecreated(f func(ctx context.Context)) ConsumerOption {
	return func(c *consumerConfig) error {
		if f == nil {
			return fmt.Errorf("nil stream recreated handler")
		}
		c.onRecreated = f
		return nil
	}
}

// WithStreamCheck sets how often the Consumer asks the server whether the
// stream is still the one it reads (default DefaultStreamCheck). It also
// asks whenever the ordered consumer recreates itself, and on every restart.
func WithStreamCheck(d time.Duration) ConsumerOption {
	return func(c *consumerConfig) error {
		if d <= 0 {
			return fmt.Errorf("stream check interval %s <= 0", d)
		}
		c.checkEvery = d
		return nil
	}
}

// WithConsumerLogger sets the logger (default slog.Default()).
func WithConsumerLogger(l *slog.Logger) ConsumerOption {
	return func(c *consumerConfig) error {
		if l == nil {
			return fmt.Errorf("nil logger")
		}
		c.logger = l
		return nil
	}
}

// Consumer reads the event stream with an ordered consumer (ephemeral,
// unacknowledged, in-memory on the server) and hands the events to a
// Handler. It bootstraps with the last message of every subject under
// <prefix>.>, signals CaughtUp, then delivers live events.
//
// It resumes after a NATS outage or server restart from the message after
// the last one it handled: the ordered consumer recreates itself from its
// cursor, and when that fails for good, Start creates a new one at the last
// handled sequence + 1. Messages at or below the last handled sequence are
// dropped, so no sequence is delivered twice.
//
// An interruption during the bootstrap is the exception to resuming from
// the cursor: read from there, the rest of the stream would also deliver
// the older versions of the objects not yet seen. Instead the Consumer
// starts a new last-per-subject bootstrap; it delivers every object whose
// last message is after the last handled sequence, and nothing else, since
// the bootstrap runs in sequence order.
//
// A stream deleted and created again (its creation time changed, or its
// last sequence is below the last one handled) is found on every restart
// of the ordered consumer and every WithStreamCheck interval. The Consumer
// then delivers nothing until the watcher has marked the new stream
// reconciled (MarkReconciled), calls the WithStreamRecreated function, and
// bootstraps from the new stream as at the start.
type Consumer struct {
	js       jetstream.JetStream
	stream   string
	prefix   string
	h        Handler
	cfg      consumerConfig
	lastSeq  atomic.Uint64
	caughtUp atomic.Bool
	created  time.Time // of the stream read; zero until known (Start's goroutine only)
	// stalls counts the bootstrap readers in a row found stalled before
	// their first message: each next one waits twice as long before it is
	// (Start's goroutine only).
	stalls int
}

// NewConsumer returns a Consumer of the events under prefix in stream.
func NewConsumer(js jetstream.JetStream, stream, prefix string, h Handler, opts ...ConsumerOption) (*Consumer, error) {
	if js == nil || h == nil {
		return nil, fmt.Errorf("%w: consumer needs a JetStream context and a handler", ErrInvalidConfig)
	}
	if err := (Config{Name: stream, SubjectPrefix: prefix}).validate(); err != nil {
		return nil, fmt.Errorf("%w: consumer: %w", ErrInvalidConfig, err)
	}
	cfg := consumerConfig{logger: slog.Default(), checkEvery: DefaultStreamCheck}
	for _, opt := range opts {
		if err := opt(&cfg); err != nil {
			return nil, fmt.Errorf("%w: consumer: %w", ErrInvalidConfig, err)
		}
	}
	return &Consumer{js: js, stream: stream, prefix: prefix, h: h, cfg: cfg}, nil
}

// LastSequence is the stream sequence of the last message handled (0
// before the first).
func (c *Consumer) LastSequence() uint64 { return c.lastSeq.Load() }

// IsCaughtUp reports whether CaughtUp has been signalled.
func (c *Consumer) IsCaughtUp() bool { return c.caughtUp.Load() }

// Start consumes until ctx is done, then returns nil. It returns an error
// only when the NATS connection has been closed for good. Any other failure
// (stream missing, server gone) is logged and retried with backoff.
func (c *Consumer) Start(ctx context.Context) error {
	for attempt := 1; ; attempt++ {
		before := c.lastSeq.Load()
		err := c.consume(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, errRebootstrap) {
			c.cfg.logger.Info("event consumer bootstrapping again", "stream", c.stream, "after_seq", c.lastSeq.Load())
			attempt = 0
			continue
		}
		if errors.Is(err, ErrStreamRecreated) {
			if !c.recover(ctx) {
				return nil
			}
			attempt = 0
			continue
		}
		if errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, jetstream.ErrConnectionClosed) {
			return fmt.Errorf("stream: consumer of %s: %w", c.stream, err)
		}
		if c.lastSeq.Load() != before {
			attempt = 1 // it made progress: not a failure loop
		}
		wait := backoff(attempt, consumerBackoff, consumerMaxBackoff, rand.Int64N)
		c.cfg.logger.Warn("event consumer interrupted, resuming", "stream", c.stream,
			"after_seq", c.lastSeq.Load(), "wait", wait, "err", err)
		if !sleep(ctx, nil, wait) {
			return nil
		}
	}
}

// resumeFrom is the start sequence of a new ordered consumer: 0 (a
// last-per-subject bootstrap) until caught up, after the last handled
// message from then on; in replay mode, the configured start until a
// message has been handled.
func (c *Consumer) resumeFrom() uint64 {
	if c.bootstrapping() {
		return 0
	}
	if last := c.lastSeq.Load(); last > 0 {
		return last + 1
	}
	return c.cfg.startSeq
}

// bootstrapping: reading the last message per subject, not yet caught up.
func (c *Consumer) bootstrapping() bool {
	return c.cfg.startSeq == 0 && !c.caughtUp.Load()
}

// consume runs one ordered consumer until it fails or ctx is done.
func (c *Consumer) consume(ctx context.Context) error {
	info, err := streamInfo(ctx, c.js, c.stream)
	if err != nil {
		return err
	}
	if err := c.sameStream(stateOf(info)); err != nil {
		return err
	}
	cu := catchUp{done: true}
	if !c.caughtUp.Load() {
		cu = catchUpOf(info)
		if !cu.done && c.lastSeq.Load() >= cu.target {
			cu.done = true
		}
		if cu.done {
			c.signalCaughtUp(ctx)
		}
	}
	r, err := openReader(ctx, c.js, c.stream, eventReads(c.prefix, c.resumeFrom(), false))
	if err != nil {
		return err
	}
	defer r.close()
	return c.loop(ctx, r, &cu)
}

// loop handles messages until the reader fails, the stream turns out to be
// another one, or ctx is done. Until caught up, it asks the server whether
// anything is left whenever no message came for idlePoll.
func (c *Consumer) loop(ctx context.Context, r *reader, cu *catchUp) error {
	check := streamCheck{every: c.cfg.checkEvery, consumer: r.name, first: min(firstIdle<<min(c.stalls, 8), idlePoll)}
	check.reset(ctx)
	defer check.stop()
	delivered := time.Now() // the last message, or the start
	for {
		m, err := check.read(ctx, r, cu.done)
		if err == nil {
			check.progressed, check.delivered = true, true
			delivered = time.Now()
			c.stalls = 0
		}
		switch {
		case errors.Is(err, ErrIdle):
			if err := c.idle(ctx, r, cu, &check, delivered); err != nil {
				return err
			}
			if err := c.consumerChanged(ctx, r, &check); err != nil {
				return err
			}
		case errors.Is(err, ErrNoMetadata):
			c.decodeError(0, m.Subject, fmt.Errorf("%w: %w", events.ErrMalformed, err))
		case err != nil:
			return err
		case m.consumer != r.name && c.bootstrapping():
			return errRebootstrap
		case m.consumer != check.consumer:
			// The ordered consumer recreated itself: on the same stream?
			if err := c.checkStream(ctx); err != nil && !errors.Is(err, errCheckFailed) {
				return err
			}
			check.consumer = m.consumer
			c.handle(ctx, m, cu)
		default:
			c.handle(ctx, m, cu)
		}
		if check.due() && !check.confirm(ctx) {
			if err := c.checkDue(ctx, r, &check); err != nil {
				return err
			}
		}
	}
}

// checkDue is the periodic check of the stream and of the reader: a
// failed check is asked again after checkRetry.
func (c *Consumer) checkDue(ctx context.Context, r *reader, check *streamCheck) error {
	err := c.checkStream(ctx)
	if errors.Is(err, errCheckFailed) {
		check.start(ctx, checkRetry)
		return nil
	}
	if err != nil {
		return err
	}
	if err := r.stalled(ctx, check.progressed); err != nil {
		return err
	}
	check.reset(ctx)
	return nil
}

// consumerChanged checks the stream at once when the ordered consumer
// recreated itself (a local look, see consumerPoll): on a recreated
// stream, it then delivers nothing until that stream's sequences reach
// the last one handled.
func (c *Consumer) consumerChanged(ctx context.Context, r *reader, check *streamCheck) error {
	name := r.consumer()
	if name == "" || name == check.consumer {
		return nil
	}
	err := c.checkStream(ctx)
	switch {
	case errors.Is(err, errCheckFailed):
		return nil // looked at again at the next poll
	case err != nil:
		return err
	}
	check.consumer = name
	return nil
}

// idle: no message came for a while. Before the bootstrap is caught up,
// the reader is caught up when its consumer has nothing left, and stalled
// when it has messages pending yet delivered none for idlePoll, or
// firstIdle before its first message, doubled for each reader in a row
// that stalled so (an ordered consumer created on a stream just recreated
// can stop so, and a slow server must not be taken for one): it is
// opened again at once, not at the next check of the stream. (A process
// stopped past idlePoll may take its buffered messages for a stall here:
// that costs a new bootstrap, nothing else.)
func (c *Consumer) idle(ctx context.Context, r *reader, cu *catchUp, check *streamCheck, delivered time.Time) error {
	if cu.done {
		return nil
	}
	pending, drained := r.pending(ctx, c.lastSeq.Load())
	switch {
	case drained:
		cu.done = true
		c.signalCaughtUp(ctx)
	case pending > 0 && time.Since(delivered) >= check.idle():
		if !check.delivered {
			c.stalls++
		}
		return fmt.Errorf("%w: %d messages pending during the bootstrap, none delivered for %s", ErrStalled,
			pending, time.Since(delivered).Round(time.Millisecond))
	}
	return nil
}

// handle delivers one message unless it was delivered before, and signals
// CaughtUp after the message that completes the bootstrap.
func (c *Consumer) handle(ctx context.Context, m Message, cu *catchUp) {
	if m.Sequence > c.lastSeq.Load() {
		c.deliver(ctx, m)
		c.lastSeq.Store(m.Sequence)
	}
	if cu.observe(m.Sequence, m.Pending) {
		c.signalCaughtUp(ctx)
	}
}

func (c *Consumer) deliver(ctx context.Context, m Message) {
	ev, err := m.Decode(c.prefix)
	if err != nil {
		c.decodeError(m.Sequence, m.Subject, err)
		return
	}
	if err := c.h.HandleEvent(ctx, ev); err != nil {
		c.cfg.logger.Error("event handler failed, event skipped", "seq", ev.Sequence,
			"subject", ev.Subject, "err", err)
	}
}

// decodeError reports a skipped message once: to the decode error handler
// when there is one, else in the log.
func (c *Consumer) decodeError(seq uint64, subject string, err error) {
	if c.cfg.onDecodeError != nil {
		c.cfg.onDecodeError(seq, subject, err)
		return
	}
	c.cfg.logger.Warn("undecodable event skipped", "seq", seq, "subject", subject, "err", err)
}

func (c *Consumer) signalCaughtUp(ctx context.Context) {
	if c.caughtUp.CompareAndSwap(false, true) {
		c.h.CaughtUp(ctx)
	}
}
