package stream

import "errors"

// Sentinel errors. Every error returned by this package that belongs to one
// of these classes wraps the sentinel, so callers match with errors.Is.
// Errors about events themselves wrap the sentinels of pkg/events
// (ErrInvalidEvent, ErrMalformed, ErrBadSubject).
var (
	// ErrInvalidConfig: a Config, option or argument that is not valid.
	ErrInvalidConfig = errors.New("stream: invalid configuration")

	// ErrTooLarge: an encoded event (payload and headers) over the maximum
	// message size of the connection.
	ErrTooLarge = errors.New("stream: event too large")

	// ErrPublisherClosed: Publish after Close, or a retry cut short by Close.
	ErrPublisherClosed = errors.New("stream: publisher closed")

	// ErrNoURL: Connect without a server URL.
	ErrNoURL = errors.New("stream: no NATS URL")

	// ErrIdle: no message arrived within the wait of a read.
	ErrIdle = errors.New("stream: no message within the wait")

	// ErrNoMetadata: a delivered message without JetStream metadata.
	ErrNoMetadata = errors.New("stream: no JetStream metadata")
)
