package stream

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// DefaultHeadsTimeout bounds LastPerSubject when ctx has no deadline.
const DefaultHeadsTimeout = time.Minute

// Head is the last message of one subject, read from its headers only:
// what the watcher's reconcile-on-start compares with the API server.
type Head struct {
	Subject         string
	Sequence        uint64
	Op              events.Op
	Kind            events.Kind
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
	if err := events.ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	ctx, cancel := bounded(ctx, DefaultHeadsTimeout)
	defer cancel()
	var heads map[string]Head
	err := readAgainIfStalled(func() (err error) {
		heads, err = lastPerSubject(ctx, js, stream, prefix)
		return err
	})
	return heads, err
}

// lastPerSubject is one read of LastPerSubject.
func lastPerSubject(ctx context.Context, js jetstream.JetStream, stream, prefix string) (map[string]Head, error) {
	cu, err := newCatchUp(ctx, js, stream)
	if err != nil {
		return nil, err
	}
	heads := make(map[string]Head)
	if cu.done {
		return heads, nil
	}
	r, err := openReader(ctx, js, stream, eventReads(prefix, 0, true))
	if err != nil {
		return nil, err
	}
	defer r.close()
	if err := readHeads(ctx, r, prefix, &cu, heads); err != nil {
		return nil, fmt.Errorf("stream: last messages of %s: %w", stream, err)
	}
	return heads, nil
}

// HeadOf is the Head of one stored message (read with GetMsg or
// GetLastMsgForSubject), as LastPerSubject reads it.
func HeadOf(prefix string, m *jetstream.RawStreamMsg) Head {
	return headOf(prefix, m.Subject, m.Header, m.Sequence)
}

// readHeads reads messages into heads until caught up.
func readHeads(ctx context.Context, r *reader, prefix string, cu *catchUp, heads map[string]Head) error {
	return readCaughtUp(ctx, r, cu, func(m Message) {
		head := headOf(prefix, m.Subject, m.Header, m.Sequence)
		heads[head.Subject] = head
	})
}

// headOf builds the head of a message from its headers, and from its
// subject where the headers lack the identity.
func headOf(prefix, subject string, h nats.Header, seq uint64) Head {
	head := Head{
		Subject: subject, Sequence: seq,
		Op: events.Op(h.Get(events.HeaderOp)), Kind: events.Kind(h.Get(events.HeaderKind)),
		Namespace: h.Get(events.HeaderNamespace), Name: h.Get(events.HeaderName),
		UID: h.Get(events.HeaderUID), ResourceVersion: h.Get(events.HeaderResourceVersion),
	}
	if head.Kind == "" || head.Name == "" {
		if k, ns, name, err := events.ParseSubject(prefix, subject); err == nil {
			head.Kind, head.Namespace, head.Name = k, ns, name
		}
	}
	return head
}
