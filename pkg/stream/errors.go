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

	// ErrConflict: a fenced Publisher's event that the stream refused, or
	// that was not sent, because the last message of its subject is not the
	// one the Publisher expected: another writer published on the subject
	// (see WithFencing and Publisher.Expect).
	ErrConflict = errors.New("stream: the subject's last message is not the expected one")

	// ErrPublisherClosed: Publish after Close, or a retry cut short by Close.
	ErrPublisherClosed = errors.New("stream: publisher closed")

	// ErrNoURL: Connect without a server URL (it also wraps
	// ErrInvalidConfig).
	ErrNoURL = errors.New("stream: no NATS URL")

	// ErrConnect: Connect found no server to connect to, before its context
	// ended or, with WithConnectOnce, at its one attempt.
	ErrConnect = errors.New("stream: connecting to NATS")

	// ErrIdle: no message arrived within the wait of a read.
	ErrIdle = errors.New("stream: no message within the wait")

	// ErrStalled: a consumer that delivered nothing for a whole stream
	// check while the server had messages pending for it, or whose
	// server-side consumer is gone (as when the server holding it was
	// killed); the Consumer opens a new one.
	ErrStalled = errors.New("stream: consumer stalled")

	// ErrNoMetadata: a delivered message without JetStream metadata.
	ErrNoMetadata = errors.New("stream: no JetStream metadata")
)
