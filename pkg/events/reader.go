package events

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
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

// errIdle: no message arrived within idlePoll.
var errIdle = errors.New("events: no message within the poll interval")

// orderedConfig reads the events under prefix: from stream sequence start,
// or, when start is 0, the last message of every subject, then everything
// after it.
func orderedConfig(prefix string, start uint64, headersOnly bool) jetstream.OrderedConsumerConfig {
	cfg := jetstream.OrderedConsumerConfig{
		FilterSubjects:   []string{FilterSubject(prefix)},
		DeliverPolicy:    jetstream.DeliverLastPerSubjectPolicy,
		HeadersOnly:      headersOnly,
		MaxResetAttempts: maxResetAttempts,
	}
	if start > 0 {
		cfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
		cfg.OptStartSeq = start
	}
	return cfg
}

// reader is one ordered consumer and its message iterator.
type reader struct {
	js     jetstream.JetStream
	stream string
	oc     jetstream.Consumer
	it     jetstream.MessagesContext
	name   string      // of the server-side consumer created first
	stop   func() bool // unregisters the stop-on-cancel hook
}

// openReader creates an ordered consumer on stream with cfg. Its iterator
// stops when ctx is done.
func openReader(ctx context.Context, js jetstream.JetStream, stream string, cfg jetstream.OrderedConsumerConfig) (*reader, error) {
	cctx, cancel := bounded(ctx, DefaultTimeout)
	defer cancel()
	oc, err := js.OrderedConsumer(cctx, stream, cfg)
	if err != nil {
		return nil, fmt.Errorf("events: consumer on stream %s: %w", stream, err)
	}
	it, err := oc.Messages()
	if err != nil {
		deleteConsumer(js, stream, oc)
		return nil, fmt.Errorf("events: consume stream %s: %w", stream, err)
	}
	return &reader{js: js, stream: stream, oc: oc, it: it, name: oc.CachedInfo().Name,
		stop: context.AfterFunc(ctx, it.Stop)}, nil
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

// next returns the next message. With poll set, it gives up after idlePoll
// with errIdle.
func (r *reader) next(ctx context.Context, poll bool) (jetstream.Msg, error) {
	if !poll {
		return r.it.Next(jetstream.NextContext(ctx))
	}
	pctx, cancel := context.WithTimeout(ctx, idlePoll)
	defer cancel()
	msg, err := r.it.Next(jetstream.NextContext(pctx))
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		return nil, errIdle
	}
	return msg, err
}

// drained asks the server whether the consumer has nothing left to
// deliver beyond stream sequence handled.
func (r *reader) drained(ctx context.Context, handled uint64) bool {
	ictx, cancel := bounded(ctx, DefaultTimeout)
	defer cancel()
	info, err := r.oc.Info(ictx)
	return err == nil && info.NumPending == 0 && info.Delivered.Stream <= handled
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
	sctx, cancel := bounded(ctx, DefaultTimeout)
	defer cancel()
	s, err := js.Stream(sctx, stream)
	if err != nil {
		return catchUp{}, fmt.Errorf("events: stream %s: %w", stream, err)
	}
	state := s.CachedInfo().State
	if state.Msgs == 0 {
		return catchUp{done: true}, nil
	}
	return catchUp{target: state.LastSeq}, nil
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
