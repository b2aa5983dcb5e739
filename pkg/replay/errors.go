package replay

import "errors"

// Sentinel errors, matched with errors.Is. A stream that does not exist is
// reported wrapping jetstream.ErrStreamNotFound, with the stream's name.
var (
	// ErrInvalidOptions: Options or a Filter that cannot be used.
	ErrInvalidOptions = errors.New("replay: invalid options")
	// ErrInvalidPoint: a point that is neither a stream sequence nor an
	// RFC3339 time, or a range whose end comes before its start.
	ErrInvalidPoint = errors.New("replay: invalid point")
	// ErrBeforeStream: a point before the first message the stream holds
	// (before it started, or in history that has been removed).
	ErrBeforeStream = errors.New("replay: point before the start of the stream")
	// ErrBeyondEnd: a sequence after the last message of the stream.
	ErrBeyondEnd = errors.New("replay: point beyond the end of the stream")
	// ErrEmptyStream: the stream holds no message.
	ErrEmptyStream = errors.New("replay: stream is empty")
	// ErrMalformedPayload: a payload that `syncer decode` cannot read.
	ErrMalformedPayload = errors.New("replay: malformed payload")
)
