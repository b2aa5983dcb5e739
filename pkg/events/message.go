package events

import (
	"fmt"
	"time"
)

// DecodeMessage decodes the payload of a stream message, checks that its
// subject names the same object as its envelope (a mismatch wraps
// ErrMalformed), and fills in Sequence, Subject and PublishedAt.
func DecodeMessage(prefix, subject string, data []byte, seq uint64, published time.Time) (Event, error) {
	ev, err := Decode(data)
	if err != nil {
		return Event{}, err
	}
	k, ns, name, err := ParseSubject(prefix, subject)
	if err != nil {
		return Event{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if k != ev.Kind || ns != ev.Namespace || name != ev.Name {
		return Event{}, fmt.Errorf("%w: subject %s carries %s %s", ErrMalformed, subject, ev.Kind, ev.Key())
	}
	ev.Sequence, ev.Subject, ev.PublishedAt = seq, subject, published
	return ev, nil
}
