package stream

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// Publisher defaults.
const (
	DefaultMaxPending    = 1024
	DefaultRetryAttempts = 10
	DefaultRetryBackoff  = 100 * time.Millisecond
	DefaultAckTimeout    = 5 * time.Second
	// maxRetryBackoff caps the doubling of the retry backoff (unless the
	// base backoff itself is longer).
	maxRetryBackoff = 5 * time.Second
)

// PublisherOption configures a Publisher. Options validate their input:
// NewPublisher returns an error wrapping ErrInvalidConfig for a bad one.
type PublisherOption func(*publisherConfig) error

type publisherConfig struct {
	maxPending int
	attempts   int
	backoff    time.Duration
	ackTimeout time.Duration
	maxPayload int // 0: the connection's
	fenced     bool
	observer   func(events.Event, time.Duration, error)
	logger     *slog.Logger
}

func defaultPublisherConfig() publisherConfig {
	return publisherConfig{
		maxPending: DefaultMaxPending,
		attempts:   DefaultRetryAttempts,
		backoff:    DefaultRetryBackoff,
		ackTimeout: DefaultAckTimeout,
		logger:     slog.Default(),
	}
}

// WithMaxPending bounds the events accepted by Publish and not yet finally
// acked or failed (in flight, waiting to retry, or queued behind an earlier
// event of the same object). Publish blocks while n are pending.
func WithMaxPending(n int) PublisherOption {
	return func(c *publisherConfig) error {
		if n < 1 {
			return fmt.Errorf("max pending %d < 1", n)
		}
		c.maxPending = n
		return nil
	}
}

// WithRetry sets how many times an event is sent in all (attempts >= 1)
// before it finally fails, and the wait before the first retry, doubled for
// each further retry up to 5s (or backoff, if longer).
func WithRetry(attempts int, backoff time.Duration) PublisherOption {
	return func(c *publisherConfig) error {
		if attempts < 1 || backoff <= 0 {
			return fmt.Errorf("retry attempts %d, backoff %s: want >= 1 and > 0", attempts, backoff)
		}
		c.attempts, c.backoff = attempts, backoff
		return nil
	}
}

// WithAckTimeout sets how long one attempt waits for the stream's ack.
func WithAckTimeout(d time.Duration) PublisherOption {
	return func(c *publisherConfig) error {
		if d <= 0 {
			return fmt.Errorf("ack timeout %s <= 0", d)
		}
		c.ackTimeout = d
		return nil
	}
}

// WithMaxPayload sets the largest message (payload and headers) Publish
// accepts. The default is the max_payload the server announced to the
// connection, read at every Publish.
func WithMaxPayload(n int) PublisherOption {
	return func(c *publisherConfig) error {
		if n < 1 {
			return fmt.Errorf("max payload %d < 1", n)
		}
		c.maxPayload = n
		return nil
	}
}

// WithFencing makes the Publisher fenced: every event is sent with the
// Nats-Expected-Last-Subject-Sequence header, the stream sequence of the
// last message of its subject as far as the Publisher knows (0, none, until
// Expect says otherwise; then the sequence of its own last event there), so
// that the stream stores it only if no other writer published on the subject
// meanwhile. A refused event fails with ErrConflict, without retries, and so
// do the events of the subject queued behind it, unsent: the caller reads
// the subject's last message, calls Expect with its sequence and decides
// again. A retry of an event that was stored but whose ack was lost fails
// the same way (the stream checks the sequence before the Nats-Msg-Id).
//
// Two writers that both believe they are the only one (two watchers in the
// window where both hold the Lease) can then never interleave their
// messages of one object unseen.
func WithFencing() PublisherOption {
	return func(c *publisherConfig) error {
		c.fenced = true
		return nil
	}
}

// WithObserver sets a function called once per event Publish accepted
// (returned nil for), when it is finally acked (err nil) or finally fails,
// with the time since Publish was called: the one report of these
// outcomes (an event Publish refused is reported by its error alone). It
// is called from the publisher's goroutines before Flush counts the event
// as done; it must not block, nor call Publish. An acked event carries its
// stream sequence in ev.Sequence (that of the original message when the
// stream dropped it as a duplicate).
func WithObserver(f func(ev events.Event, latency time.Duration, err error)) PublisherOption {
	return func(c *publisherConfig) error {
		if f == nil {
			return fmt.Errorf("nil observer")
		}
		c.observer = f
		return nil
	}
}

// WithPublisherLogger sets the logger of retries, at debug level (default
// slog.Default()). Outcomes are not logged: see WithObserver.
func WithPublisherLogger(l *slog.Logger) PublisherOption {
	return func(c *publisherConfig) error {
		if l == nil {
			return fmt.Errorf("nil logger")
		}
		c.logger = l
		return nil
	}
}
