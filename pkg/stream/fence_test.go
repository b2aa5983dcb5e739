package stream_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
)

// TestFencedPublishersKeepVersionsInOrder: two fenced publishers that both
// believe they are the only writer. The one that knows an older state of
// the subject is refused (with the events queued behind its refused one,
// unsent) until Expect tells it the subject's last message; the stream
// never stores its older version after the newer one.
func TestFencedPublishersKeepVersionsInOrder(t *testing.T) {
	ctx := testContext(t)
	_, js, s := setupStream(t)
	current := newPublisher(t, js, stream.WithFencing())
	behind := newPublisher(t, js, stream.WithFencing())
	subject := events.Subject(prefix, events.KindConfigMap, "ingress", "settings")

	publish := func(p *stream.Publisher, rvs ...int) error {
		t.Helper()
		for _, rv := range rvs {
			if err := p.Publish(ctx, configMapEvent("settings", rv)); err != nil {
				t.Fatalf("Publish version %d: %v", rv, err)
			}
		}
		return p.Flush(ctx)
	}
	if err := publish(current, 2); err != nil {
		t.Fatalf("the first writer: %v", err)
	}
	// Versions 1 and 3 were decided on a subject without messages: 1 is
	// refused, 3 (queued behind it) is not sent.
	if err := publish(behind, 1, 3); !errors.Is(err, stream.ErrConflict) {
		t.Fatalf("the writer that knows no message: Flush = %v, want ErrConflict", err)
	}
	if got := versions(t, s); !slices.Equal(got, []string{"2"}) {
		t.Fatalf("versions in the stream %v, want [2]", got)
	}

	last, err := s.GetLastMsgForSubject(ctx, subject)
	if err != nil {
		t.Fatal(err)
	}
	behind.Expect(subject, last.Sequence)
	if err := publish(behind, 3); err != nil {
		t.Fatalf("after Expect: %v", err)
	}
	// Now the first writer is the one that lags.
	if err := publish(current, 4); !errors.Is(err, stream.ErrConflict) {
		t.Fatalf("the first writer after the other's publish: Flush = %v, want ErrConflict", err)
	}
	if got := versions(t, s); !slices.Equal(got, []string{"2", "3"}) {
		t.Fatalf("versions in the stream %v, want [2 3]", got)
	}
}

// TestFencedPublisherChainsItsOwnEvents: events of one subject queued
// behind each other each expect the sequence of the one before.
func TestFencedPublisherChainsItsOwnEvents(t *testing.T) {
	ctx := testContext(t)
	_, js, s := setupStream(t)
	p := newPublisher(t, js, stream.WithFencing(), stream.WithMaxPending(8))
	for rv := 1; rv <= 6; rv++ {
		if err := p.Publish(ctx, configMapEvent("settings", rv)); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := versions(t, s); !slices.Equal(got, []string{"1", "2", "3", "4", "5", "6"}) {
		t.Fatalf("versions in the stream %v", got)
	}
}

// versions are the resourceVersions of the stream's messages, in order.
func versions(t *testing.T, s jetstream.Stream) []string {
	t.Helper()
	var out []string
	for _, m := range streamMessages(t, testContext(t), s) {
		out = append(out, fmt.Sprint(m.Header.Get(events.HeaderResourceVersion)))
	}
	return out
}

// TestFencedPublisherAfterStreamRecreated: a fenced publisher expects the
// last sequence of the deleted stream, so the recreated stream refuses its
// next event; after ExpectEmpty it expects none and the event is stored.
func TestFencedPublisherAfterStreamRecreated(t *testing.T) {
	ctx := testContext(t)
	_, js, _ := setupStream(t)
	p := newPublisher(t, js, stream.WithFencing())
	publish := func(rv int) error {
		t.Helper()
		if err := p.Publish(ctx, configMapEvent("settings", rv)); err != nil {
			t.Fatalf("Publish version %d: %v", rv, err)
		}
		return p.Flush(ctx)
	}
	for rv := 1; rv <= 2; rv++ {
		if err := publish(rv); err != nil {
			t.Fatal(err)
		}
	}
	if err := js.DeleteStream(ctx, "INGRESS"); err != nil {
		t.Fatal(err)
	}
	s, err := stream.Ensure(ctx, js, stream.Config{Name: "INGRESS", SubjectPrefix: prefix, History: 10})
	if err != nil {
		t.Fatal(err)
	}
	if err := publish(3); !errors.Is(err, stream.ErrConflict) {
		t.Fatalf("before ExpectEmpty: Flush = %v, want ErrConflict", err)
	}
	p.ExpectEmpty()
	if err := publish(4); err != nil {
		t.Fatalf("after ExpectEmpty: %v", err)
	}
	if got := versions(t, s); !slices.Equal(got, []string{"4"}) {
		t.Fatalf("versions in the recreated stream %v, want [4]", got)
	}
}
