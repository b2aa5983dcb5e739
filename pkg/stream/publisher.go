package stream

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// Publisher publishes events to the stream asynchronously: Publish encodes
// and checks an event, sends it with js.PublishMsgAsync and returns; the ack
// is awaited in the background. Failed sends are retried with backoff under
// the same Nats-Msg-Id, so a send that did reach the stream before its ack
// was lost is dropped as a duplicate.
//
// Events of one object (one subject) are sent one at a time, in Publish
// order: a later event waits until the earlier one is acked or has finally
// failed. Retries therefore never reorder the history of an object, and the
// last message of a subject is always the last event published for it.
// Events of different objects are in flight concurrently.
//
// The ordering holds within one Publisher. A watcher that loses its
// leadership must Close its Publisher (with a short context, cutting its
// retries) before another one publishes, or a late retry could land after
// the new leader's event for the same object. A fenced Publisher (see
// WithFencing) also holds it across Publishers: an event is stored only if
// the last message of its subject is still the one the Publisher knows of.
//
// A Publisher is safe for concurrent use.
type Publisher struct {
	js     jetstream.JetStream // private context: its own ack timeout and reply subscription
	nc     *nats.Conn
	prefix string
	cfg    publisherConfig
	slots  chan struct{} // one per pending event
	done   chan struct{} // closed by Close to cut retries short
	once   sync.Once

	mu       sync.Mutex
	closed   bool
	subjects map[string][]*pubItem // subject busy -> events queued behind it
	epoch    uint64                // Flush generation, see Flush
	open     map[uint64]int        // pending events per epoch
	changed  chan struct{}         // closed and replaced when an event finishes
	firstErr error
	fences   map[string]*fence // fenced Publishers: what is known of each subject
}

// pubItem is one accepted event.
type pubItem struct {
	ev    events.Event
	msg   *nats.Msg
	start time.Time
	epoch uint64
	gen   uint64 // fenced Publishers: the generation of its subject's fence when published
}

// NewPublisher returns a Publisher of events under prefix on the
// connection of js. It publishes through its own JetStream context on that
// connection, so that its ack timeout and pending acks are its own; the
// stream must already exist (see Ensure).
func NewPublisher(js jetstream.JetStream, prefix string, opts ...PublisherOption) (*Publisher, error) {
	if js == nil || js.Conn() == nil {
		return nil, fmt.Errorf("%w: publisher needs a JetStream context", ErrInvalidConfig)
	}
	if err := events.ValidatePrefix(prefix); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	cfg := defaultPublisherConfig()
	for _, opt := range opts {
		if err := opt(&cfg); err != nil {
			return nil, fmt.Errorf("%w: publisher: %w", ErrInvalidConfig, err)
		}
	}
	own, err := jetstream.New(js.Conn(),
		jetstream.WithPublishAsyncTimeout(cfg.ackTimeout),
		jetstream.WithPublishAsyncMaxPending(cfg.maxPending))
	if err != nil {
		return nil, fmt.Errorf("stream: publisher: %w", err)
	}
	return &Publisher{
		js: own, nc: js.Conn(), prefix: prefix, cfg: cfg,
		slots:    make(chan struct{}, cfg.maxPending),
		done:     make(chan struct{}),
		subjects: make(map[string][]*pubItem),
		open:     make(map[uint64]int),
		changed:  make(chan struct{}),
		fences:   make(map[string]*fence),
	}, nil
}

// Publish encodes ev, checks its size and hands it to the background
// sender. It blocks while MaxPending events are pending, until ctx is done.
// An event that cannot be encoded (events.ErrInvalidEvent) or is too large
// (ErrTooLarge, naming the object and the sizes) is refused at once: the
// error is returned, and nothing else reports it. The outcome of an event
// Publish accepted (returned nil for) goes to the observer, and a failure
// also to the next Flush. ctx bounds only the wait for a slot.
func (p *Publisher) Publish(ctx context.Context, ev events.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	start := time.Now()
	msg, err := p.message(ev)
	if err != nil {
		return err
	}
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-p.done:
		return ErrPublisherClosed
	}
	it := &pubItem{ev: ev, msg: msg, start: start}
	if first, err := p.enqueue(it); err != nil || !first {
		return err
	}
	go p.run(it)
	return nil
}

// message builds the NATS message of ev and checks its size.
func (p *Publisher) message(ev events.Event) (*nats.Msg, error) {
	data, err := events.Encode(ev)
	if err != nil {
		return nil, err
	}
	msg := &nats.Msg{Subject: events.Subject(p.prefix, ev.Kind, ev.Namespace, ev.Name), Header: events.Headers(ev), Data: data}
	limit := p.cfg.maxPayload
	if limit == 0 {
		limit = int(p.nc.MaxPayload()) // 0 while never connected: no check
	}
	if size := len(data) + headersSize(msg.Header) + p.fenceHeaderSize(); limit > 0 && size > limit {
		return nil, fmt.Errorf("%w: %s %s: %d bytes (payload %d, headers %d) over the maximum of %d",
			ErrTooLarge, ev.Kind, ev.Key(), size, len(data), size-len(data), limit)
	}
	return msg, nil
}

// enqueue registers it as pending. It reports whether it is the first of
// its subject, to be sent now; otherwise it waits in the subject's queue.
func (p *Publisher) enqueue(it *pubItem) (first bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		<-p.slots
		return false, ErrPublisherClosed
	}
	it.epoch = p.epoch
	it.gen = p.fenceGen(it.msg.Subject)
	p.open[it.epoch]++
	queue, busy := p.subjects[it.msg.Subject]
	if busy {
		p.subjects[it.msg.Subject] = append(queue, it)
		return false, nil
	}
	p.subjects[it.msg.Subject] = nil
	return true, nil
}

// run sends it and then, one after the other, the events queued behind it
// on the same subject.
func (p *Publisher) run(it *pubItem) {
	for it != nil {
		p.finish(it, p.send(it))
		it = p.next(it.msg.Subject)
	}
}

// next takes the next queued event of subject, or marks the subject idle.
func (p *Publisher) next(subject string) *pubItem {
	p.mu.Lock()
	defer p.mu.Unlock()
	queue := p.subjects[subject]
	if len(queue) == 0 {
		delete(p.subjects, subject)
		return nil
	}
	p.subjects[subject] = queue[1:]
	return queue[0]
}

// send publishes it until it is acked, fails for good or runs out of
// attempts.
func (p *Publisher) send(it *pubItem) error {
	if err := p.arm(it); err != nil {
		return p.finalError(it, 0, err)
	}
	for attempt := 1; ; attempt++ {
		err := p.attempt(it)
		if err == nil {
			p.acked(it)
			return nil
		}
		if conflict(err) {
			p.conflicted(it)
		}
		if !retriable(err) || p.nc.IsClosed() || attempt >= p.cfg.attempts {
			return p.finalError(it, attempt, err)
		}
		wait := backoff(attempt, p.cfg.backoff, max(maxRetryBackoff, p.cfg.backoff), rand.Int64N)
		p.cfg.logger.Debug("retrying event publish", "subject", it.msg.Subject, "attempt", attempt, "wait", wait, "err", err)
		if !sleep(context.Background(), p.done, wait) {
			return p.finalError(it, attempt, ErrPublisherClosed)
		}
	}
}

// attempt sends it once and waits for the ack (bounded by the ack timeout
// of the private JetStream context).
func (p *Publisher) attempt(it *pubItem) error {
	select {
	case <-p.done:
		return ErrPublisherClosed
	default:
	}
	paf, err := p.js.PublishMsgAsync(it.msg)
	if err != nil {
		return err
	}
	select {
	case ack := <-paf.Ok():
		it.ev.Sequence = ack.Sequence // the observer's; a duplicate's is the original's
		return nil
	case err := <-paf.Err():
		return err
	case <-p.done:
		return ErrPublisherClosed
	}
}

// retriable reports whether another attempt may succeed.
func retriable(err error) bool {
	switch {
	case errors.Is(err, ErrPublisherClosed),
		errors.Is(err, nats.ErrConnectionClosed),
		errors.Is(err, jetstream.ErrConnectionClosed),
		errors.Is(err, nats.ErrMaxPayload),
		errors.Is(err, nats.ErrBadSubject),
		errors.Is(err, nats.ErrBadHeaderMsg):
		return false
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code >= 500 // 503: JetStream not (yet) available
	}
	return true // timeouts, disconnects, no responders, full buffers
}

// finalError describes a final failure; size limits wrap ErrTooLarge.
func (p *Publisher) finalError(it *pubItem, attempts int, err error) error {
	var apiErr *jetstream.APIError
	switch {
	case errors.Is(err, nats.ErrMaxPayload) ||
		(errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamMessageExceedsMaximum):
		err = fmt.Errorf("%w: %w", ErrTooLarge, err)
	case conflict(err):
		err = fmt.Errorf("%w: %w", ErrConflict, err)
	}
	return fmt.Errorf("stream: publish %s %s on %s failed after %d attempt(s): %w",
		it.ev.Kind, it.ev.Key(), it.msg.Subject, attempts, err)
}

// finish reports the final outcome of it and frees its slot.
func (p *Publisher) finish(it *pubItem, err error) {
	p.observe(it.ev, it.start, err)
	p.mu.Lock()
	if err != nil && p.firstErr == nil {
		p.firstErr = err
	}
	if p.open[it.epoch]--; p.open[it.epoch] == 0 {
		delete(p.open, it.epoch)
	}
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
	<-p.slots
}

// observe hands the final outcome of an accepted event to the observer,
// the one place that reports it (the Publisher does not log it).
func (p *Publisher) observe(ev events.Event, start time.Time, err error) {
	if p.cfg.observer != nil {
		p.cfg.observer(ev, time.Since(start), err)
	}
}

// Flush waits until every event published before the call is finally acked
// or has finally failed (events published meanwhile are not waited for),
// and returns the first final failure since the previous Flush (the one
// report of failures for a Publisher without an observer), or ctx's error
// when ctx ends first.
func (p *Publisher) Flush(ctx context.Context) error {
	p.mu.Lock()
	target := p.epoch
	p.epoch++
	for p.pendingUpTo(target) {
		changed := p.changed
		p.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
		p.mu.Lock()
	}
	err := p.firstErr
	p.firstErr = nil
	p.mu.Unlock()
	return err
}

// pendingUpTo reports whether events of epoch target or earlier are
// pending. Callers hold p.mu.
func (p *Publisher) pendingUpTo(target uint64) bool {
	for e := range p.open {
		if e <= target {
			return true
		}
	}
	return false
}

// Pending is the number of events accepted and not yet finally acked or
// failed.
func (p *Publisher) Pending() int { return len(p.slots) }

// Close refuses further events, waits like Flush for the pending ones and
// returns its result. When ctx ends first, retries are cut short and the
// events still pending fail with ErrPublisherClosed. Close does not close
// the connection.
func (p *Publisher) Close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	err := p.Flush(ctx)
	p.once.Do(func() { close(p.done) })
	if err != nil && ctx.Err() != nil {
		// The pending events fail at once now that done is closed.
		_ = p.Flush(context.Background())
	}
	p.js.CleanupPublisher()
	return err
}

// headersSize is the number of bytes h takes on the wire, as nats.go counts
// it against the server's max_payload.
func headersSize(h nats.Header) int {
	const (
		preamble = len("NATS/1.0\r\n")
		sep      = len(": ") + len("\r\n")
		end      = len("\r\n")
	)
	n := preamble + end
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + sep + len(v)
		}
	}
	return n
}
