package events

import "errors"

// Sentinel errors. Every error returned by this package that belongs to one
// of these classes wraps the sentinel, so callers match with errors.Is.
var (
	// ErrBadSubject: a subject that is not <prefix>.<kind>.<namespace>.<name>
	// for a known kind, or a prefix that cannot start a subject.
	ErrBadSubject = errors.New("events: bad subject")

	// ErrMalformed: a payload that is not a valid encoded Event.
	ErrMalformed = errors.New("events: malformed event")

	// ErrSchemaVersion: an envelope written by a newer schema than this
	// build knows.
	ErrSchemaVersion = errors.New("events: unsupported schema version")

	// ErrInvalidEvent: an Event that cannot be encoded or published (unknown
	// op or kind, missing name, object of the wrong type).
	ErrInvalidEvent = errors.New("events: invalid event")
)
