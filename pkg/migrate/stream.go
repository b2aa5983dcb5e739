package migrate

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
)

// StreamOptions say which stream ReadStream reads.
type StreamOptions struct {
	Stream, SubjectPrefix string
	// Timeout bounds the whole read: the stream as it is now must have
	// been read by then.
	Timeout time.Duration
	// Logger receives the reader's warnings (default: discarded).
	Logger *slog.Logger
}

// ReadStream reads the current state of every object in the ingress event
// stream with the syncer's own reader (stream.Consumer: the last message of
// every subject, until caught up), then stops. Nothing on the server is
// changed: the reader is an ordered, ephemeral consumer.
func ReadStream(ctx context.Context, js jetstream.JetStream, o StreamOptions) (*Input, error) {
	if o.Timeout <= 0 {
		return nil, fmt.Errorf("%w: timeout must be positive", ErrInput)
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	if _, err := js.Stream(ctx, o.Stream); err != nil {
		return nil, fmt.Errorf("%w: stream %q: %w", ErrInput, o.Stream, err)
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &collector{objects: map[string]runtime.Object{}, done: cancel}
	c, err := stream.NewConsumer(js, o.Stream, o.SubjectPrefix, h, stream.WithConsumerLogger(log),
		stream.WithDecodeErrorHandler(h.skip))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	if !c.IsCaughtUp() {
		return nil, fmt.Errorf("%w: stream %q not read within %s", ErrInput, o.Stream, o.Timeout)
	}
	return h.input(o.Stream), nil
}

// collector keeps the last state of every object until CaughtUp.
type collector struct {
	mu      sync.Mutex
	objects map[string]runtime.Object
	skipped []string
	done    func()
}

// skip records a message that could not be decoded.
func (h *collector) skip(seq uint64, subject string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.skipped = append(h.skipped, fmt.Sprintf("stream message %d (%s) skipped: %v", seq, subject, err))
}

func (h *collector) HandleEvent(_ context.Context, ev events.Event) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	key := string(ev.Kind) + "/" + ev.Key()
	if ev.Op == events.OpDelete || ev.Object == nil {
		delete(h.objects, key)
	} else {
		h.objects[key] = ev.Object
	}
	return nil
}

func (h *collector) CaughtUp(context.Context) { h.done() }

func (h *collector) input(stream string) *Input {
	h.mu.Lock()
	defer h.mu.Unlock()
	in := &Input{Source: "stream " + stream, Notes: h.skipped}
	for _, obj := range h.objects {
		in.Objects = append(in.Objects, obj)
	}
	sortObjects(in.Objects)
	return in
}
