package replay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
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
	stream.Message
	ev  events.Event // decoded by readEvents
	err error        // why it could not be decoded
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
// order, through the one stream reader (stream.ReadRange: an ordered,
// ephemeral consumer deleted when read returns). It stops early when fn
// returns errStop. Every network call and every wait for a message is
// bounded by Options.Timeout.
func (r *Replayer) read(ctx context.Context, start, end uint64, headersOnly bool, fn func(*message) error) error {
	o := stream.ReadOptions{
		Filter: events.FilterSubject(r.opts.SubjectPrefix), Start: start, HeadersOnly: headersOnly,
		Batch: pullBatch, Timeout: r.opts.Timeout,
	}
	var fnErr error // fn's own error, returned as it is
	err := stream.ReadRange(ctx, r.js, r.opts.Stream, o, end, func(m stream.Message) error {
		fnErr = fn(&message{Message: m})
		return fnErr
	})
	switch {
	case fnErr != nil && errors.Is(fnErr, errStop):
		return nil
	case fnErr != nil:
		return fnErr
	case err == nil, ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return err
	}
	return fmt.Errorf("replay: read stream %q: %w", r.opts.Stream, err)
}

// errStop ends a read early without error.
var errStop = errors.New("stop reading")

// decode sets m.ev, with its stream fields, or m.err, exactly as the live
// syncer's Consumer decodes (a subject that does not match the envelope is
// an error too).
func (m *message) decode(prefix string) {
	m.ev, m.err = m.Decode(prefix)
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
			m.decode(r.opts.SubjectPrefix)
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
