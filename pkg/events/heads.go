package events

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DefaultHeadsTimeout bounds LastPerSubject when ctx has no deadline.
const DefaultHeadsTimeout = time.Minute

// Head is the last message of one subject, read from its headers only:
// what the watcher's reconcile-on-start compares with the API server.
type Head struct {
	Subject         string
	Sequence        uint64
	Op              Op
	Kind            Kind
	Namespace, Name string
	UID             string
	ResourceVersion string
}

// LastPerSubject reads the headers (not the payloads) of the last message
// of every subject under prefix in stream, as the stream was when the call
// began, keyed by subject. Kind, namespace and name come from the headers,
// or from the subject for a message without them. It is bounded by ctx's
// deadline, or DefaultHeadsTimeout.
func LastPerSubject(ctx context.Context, js jetstream.JetStream, stream, prefix string) (map[string]Head, error) {
	if err := ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	ctx, cancel := bounded(ctx, DefaultHeadsTimeout)
	defer cancel()
	cu, err := newCatchUp(ctx, js, stream)
	if err != nil {
		return nil, err
	}
	heads := make(map[string]Head)
	if cu.done {
		return heads, nil
	}
	r, err := openReader(ctx, js, stream, orderedConfig(prefix, 0, true))
	if err != nil {
		return nil, err
	}
	defer r.close()
	if err := readHeads(ctx, r, prefix, &cu, heads); err != nil {
		return nil, fmt.Errorf("events: last messages of %s: %w", stream, err)
	}
	return heads, nil
}

// readHeads reads messages into heads until caught up.
func readHeads(ctx context.Context, r *reader, prefix string, cu *catchUp, heads map[string]Head) error {
	return readCaughtUp(ctx, r, cu, func(msg jetstream.Msg, seq uint64) {
		head := headOf(prefix, msg.Subject(), msg.Headers(), seq)
		heads[head.Subject] = head
	})
}

// readCaughtUp passes every message of r, with its stream sequence, to
// handle until r has caught up.
func readCaughtUp(ctx context.Context, r *reader, cu *catchUp, handle func(msg jetstream.Msg, seq uint64)) error {
	var last uint64
	for !cu.done {
		msg, err := r.next(ctx, true)
		if errors.Is(err, errIdle) {
			cu.done = r.drained(ctx, last)
			continue
		}
		if err != nil {
			return err
		}
		md, err := msg.Metadata()
		if err != nil {
			return err
		}
		handle(msg, md.Sequence.Stream)
		last = md.Sequence.Stream
		cu.observe(last, md.NumPending)
	}
	return nil
}

// headOf builds the head of a message from its headers, and from its
// subject where the headers lack the identity.
func headOf(prefix, subject string, h nats.Header, seq uint64) Head {
	head := Head{
		Subject: subject, Sequence: seq,
		Op: Op(h.Get(HeaderOp)), Kind: Kind(h.Get(HeaderKind)),
		Namespace: h.Get(HeaderNamespace), Name: h.Get(HeaderName),
		UID: h.Get(HeaderUID), ResourceVersion: h.Get(HeaderResourceVersion),
	}
	if head.Kind == "" || head.Name == "" {
		if k, ns, name, err := ParseSubject(prefix, subject); err == nil {
			head.Kind, head.Namespace, head.Name = k, ns, name
		}
	}
	return head
}
