package replay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// pullBatch is how many messages the ordered consumer asks for at once.
const pullBatch = 2048

// streamState is what the stream held when a replay began; a replay reads
// that snapshot and ignores later messages.
type streamState struct {
	first, last         uint64
	firstTime, lastTime time.Time
	msgs, deleted       uint64
}

// trimmed reports whether messages have been removed from the stream: its
// first sequence is past 1, or messages inside it were deleted (per-subject
// limits delete old messages of one subject).
func (s streamState) trimmed() bool { return s.first > 1 || s.deleted > 0 }

// message is one stream message as read; readEvents also decodes it.
type message struct {
	seq     uint64
	subject string
	time    time.Time
	header  nats.Header
	data    []byte
	ev      events.Event // decoded by readEvents
	err     error        // why it could not be decoded
}

// state reads the stream's first and last sequence and times.
func (r *Replayer) state(ctx context.Context) (streamState, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	s, err := r.js.Stream(ctx, r.opts.Stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return streamState{}, fmt.Errorf("replay: stream %q not found (check --stream and the NATS account): %w", r.opts.Stream, err)
	}
	if err != nil {
		return streamState{}, fmt.Errorf("replay: stream %q: %w", r.opts.Stream, err)
	}
	st := s.CachedInfo().State
	return streamState{
		first: st.FirstSeq, last: st.LastSeq,
		firstTime: st.FirstTime, lastTime: st.LastTime,
		msgs: st.Msgs, deleted: uint64(st.NumDeleted),
	}, nil
}

// read calls fn for every event message with start <= seq <= end, in stream
// order, through an ordered (ephemeral) consumer that is deleted when read
// returns. It stops early when fn returns errStop. Every wait for a message
// is bounded by Options.Timeout.
func (r *Replayer) read(ctx context.Context, start, end uint64, headersOnly bool, fn func(*message) error) error {
	if start > end {
		return nil
	}
	stream, err := r.stream(ctx)
	if err != nil {
		return err
	}
	if more, err := r.more(ctx, stream, start, end); err != nil || !more {
		return err
	}
	oc, err := r.openConsumer(ctx, start, headersOnly)
	if err != nil {
		return err
	}
	defer r.deleteConsumer(oc)
	it, err := oc.Messages(jetstream.PullMaxMessages(pullBatch))
	if err != nil {
		return fmt.Errorf("replay: read stream %q: %w", r.opts.Stream, err)
	}
	defer it.Stop()
	defer context.AfterFunc(ctx, it.Stop)()
	for {
		m, pending, err := r.next(ctx, it)
		if err != nil {
			return err
		}
		if m.seq > end {
			return nil
		}
		if err := fn(m); err != nil {
			if errors.Is(err, errStop) {
				return nil
			}
			return err
		}
		if m.seq == end {
			return nil
		}
		if pending == 0 {
			if more, err := r.more(ctx, stream, m.seq+1, end); err != nil || !more {
				return err
			}
		}
	}
}

func (r *Replayer) stream(ctx context.Context) (jetstream.Stream, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	s, err := r.js.Stream(ctx, r.opts.Stream)
	if err != nil {
		return nil, fmt.Errorf("replay: stream %q: %w", r.opts.Stream, err)
	}
	return s, nil
}

// more asks the stream whether an event message with from <= seq <= end
// exists. A message's pending count is only a hint: the end of the range
// may be a deleted message, and a filtered consumer's count can lag.
func (r *Replayer) more(ctx context.Context, s jetstream.Stream, from, end uint64) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	m, err := s.GetMsg(ctx, from, jetstream.WithGetMsgSubject(events.FilterSubject(r.opts.SubjectPrefix)))
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("replay: read stream %q: %w", r.opts.Stream, err)
	}
	return m.Sequence <= end, nil
}

// errStop ends a read early without error.
var errStop = errors.New("stop reading")

func (r *Replayer) openConsumer(ctx context.Context, start uint64, headersOnly bool) (jetstream.Consumer, error) {
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	oc, err := r.js.OrderedConsumer(ctx, r.opts.Stream, jetstream.OrderedConsumerConfig{
		FilterSubjects:    []string{events.FilterSubject(r.opts.SubjectPrefix)},
		DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:       start,
		HeadersOnly:       headersOnly,
		InactiveThreshold: time.Minute,
		MaxResetAttempts:  10,
	})
	if err != nil {
		return nil, fmt.Errorf("replay: read stream %q: %w", r.opts.Stream, err)
	}
	return oc, nil
}

// deleteConsumer removes the ordered consumer rather than leaving it to
// expire; best effort.
func (r *Replayer) deleteConsumer(oc jetstream.Consumer) {
	info := oc.CachedInfo()
	if info == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), min(r.opts.Timeout, 2*time.Second))
	defer cancel()
	_ = r.js.DeleteConsumer(ctx, r.opts.Stream, info.Name)
}

// next waits for the next message, at most Options.Timeout.
func (r *Replayer) next(ctx context.Context, it jetstream.MessagesContext) (*message, uint64, error) {
	msg, err := it.Next(jetstream.NextMaxWait(r.opts.Timeout))
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		return nil, 0, fmt.Errorf("replay: read stream %q: %w", r.opts.Stream, err)
	}
	md, err := msg.Metadata()
	if err != nil {
		return nil, 0, fmt.Errorf("replay: read stream %q: %w", r.opts.Stream, err)
	}
	return &message{
		seq: md.Sequence.Stream, subject: msg.Subject(), time: md.Timestamp,
		header: msg.Headers(), data: msg.Data(),
	}, md.NumPending, nil
}

// decode sets m.ev, with its stream fields, or m.err.
func (m *message) decode() {
	m.ev, m.err = events.Decode(m.data)
	if m.err == nil {
		m.ev.Sequence, m.ev.Subject, m.ev.PublishedAt = m.seq, m.subject, m.time
	}
}

// decodeBatch is how many decoded messages go to the caller at once.
const decodeBatch = 256

// readEvents is read with every message decoded (m.ev or m.err set) on
// another goroutine, so that reading and decoding overlap with what fn
// does. fn runs on the caller's goroutine, in stream order.
func (r *Replayer) readEvents(ctx context.Context, start, end uint64, fn func(*message) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan []*message, 8)
	done := make(chan error, 1)
	go func() {
		defer close(batches)
		batch := make([]*message, 0, decodeBatch)
		send := func() error {
			select {
			case batches <- batch:
				batch = make([]*message, 0, decodeBatch)
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		err := r.read(ctx, start, end, false, func(m *message) error {
			m.decode()
			if batch = append(batch, m); len(batch) == decodeBatch {
				return send()
			}
			return nil
		})
		if err == nil && len(batch) > 0 {
			err = send()
		}
		done <- err
	}()
	for batch := range batches {
		for _, m := range batch {
			if err := fn(m); err != nil {
				cancel()
				for range batches { // let the reader finish
				}
				<-done
				if errors.Is(err, errStop) {
					return nil
				}
				return err
			}
		}
	}
	return <-done
}
