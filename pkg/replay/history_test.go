package replay

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// missingNames lists the missing objects as "Kind ns/name".
func missingNames(h History) []string {
	var out []string
	for _, m := range h.Missing {
		out = append(out, m.Kind+" "+keyOf(m.Namespace, m.Name))
	}
	return out
}

// TestHistoryTrimmedPerSubject: with one message kept per subject, the
// state before an object's last update cannot be rebuilt, and the report
// names the object.
func TestHistoryTrimmedPerSubject(t *testing.T) {
	r := newRecorder(t, 1)
	svc := r.publish(events.OpCreate, fixtures.Service("shop", "web", 80))
	r.publish(events.OpCreate, fixtures.EndpointSlice("shop", "web-abc", "web", 8080, "10.0.0.1"))
	r.publish(events.OpCreate, fixtures.Ingress("shop", "web", fixtures.Rule("shop.example.com", fixtures.Prefix("/", "web", 80))))
	before := r.publish(events.OpUpdate, fixtures.Ingress("shop", "web", fixtures.Rule("shop.example.com", fixtures.Prefix("/", "web", 80), fixtures.Prefix("/v2", "web", 80))))
	slice := r.publish(events.OpUpdate, fixtures.EndpointSlice("shop", "web-abc", "web", 8080, "10.0.0.1", "10.0.0.2"))
	last := r.publish(events.OpUpdate, fixtures.Ingress("shop", "web", fixtures.Rule("shop.example.com", fixtures.Prefix("/", "web", 80))))
	r.publishRaw(testPrefix+".ingress.shop.not-an-event", nil, []byte("x")) // no op header: says nothing about the past
	rp := r.replayer(testModelOptions())
	ctx := context.Background()

	snap, err := rp.At(ctx, Point{Seq: before})
	if err != nil {
		t.Fatal(err)
	}
	h := snap.History
	want := []string{"EndpointSlice shop/web-abc", "Ingress shop/web"}
	if h.Complete || h.Removed != 3 || !slices.Equal(missingNames(h), want) {
		t.Errorf("history at seq %d = %+v; want incomplete, 3 removed, missing %v", before, h, want)
	}
	if m := h.Missing[1]; m.NextSequence != last || m.NextOp != "update" || m.Subject != "ingress.ingress.shop.web" {
		t.Errorf("missing Ingress = %+v; want next seq %d update", m, last)
	}
	if snap.Events != 1 || snap.Objects != 1 {
		t.Errorf("rebuilt %d events into %d objects; want only the Service (seq %d)", snap.Events, snap.Objects, svc)
	}

	snap, err = rp.At(ctx, Point{Seq: last})
	if err != nil {
		t.Fatal(err)
	}
	if h := snap.History; h.Complete || h.Removed != 3 || len(h.Missing) != 0 || snap.Sequence != last {
		t.Errorf("history at the last seq = %+v; want trimmed (3 removed), nothing missing", h)
	}
	if want := r.buildUpTo(last, testModelOptions()); snap.Configuration.Checksum != want.Checksum {
		t.Errorf("at the last seq the state is whole again: checksum %s, want %s", snap.Configuration.Checksum, want.Checksum)
	}

	tl, err := rp.Timeline(ctx, Point{Seq: slice}, Point{}, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if tl.Start.History.Complete || len(tl.Start.History.Missing) != 2 || tl.Entries[0].Note == "" {
		t.Errorf("timeline from seq %d: start history %+v, first entry note %q; want 2 missing and a note", slice, tl.Start.History, tl.Entries[0].Note)
	}
}

// TestHistoryPurged: after a purge the stream starts later; points before
// it are refused, and later points name what is missing.
func TestHistoryPurged(t *testing.T) {
	r := newRecorder(t, -1)
	seqs := scenario(r)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	s, err := r.js.Stream(ctx, testStream)
	if err != nil {
		t.Fatal(err)
	}
	keep := seqs["api-route"]
	if err := s.Purge(ctx, jetstream.WithPurgeSequence(keep)); err != nil {
		t.Fatal(err)
	}
	rp := r.replayer(testModelOptions())
	if _, err := rp.At(ctx, Point{Seq: keep - 1}); !errors.Is(err, ErrBeforeStream) {
		t.Errorf("At(seq %d) after a purge up to %d = %v; want ErrBeforeStream", keep-1, keep, err)
	}
	if _, err := rp.At(ctx, Point{Time: r.events[0].ObservedAt.Add(-time.Hour)}); !errors.Is(err, ErrBeforeStream) {
		t.Errorf("At(a time before the stream) = %v; want ErrBeforeStream", err)
	}
	snap, err := rp.At(ctx, Point{Seq: seqs["unused-slice"]})
	if err != nil {
		t.Fatal(err)
	}
	h := snap.History
	if h.Complete || h.FirstSequence != keep || h.Removed != keep-1 || !slices.Equal(missingNames(h), []string{"EndpointSlice shop/api-xyz"}) {
		t.Errorf("history after a purge = %+v; want first seq %d, %d removed, missing EndpointSlice shop/api-xyz", h, keep, keep-1)
	}
}

// TestDeletedLastMessage: a point or range ending on a deleted message (the
// stream still counts its sequence) ends the read instead of waiting.
func TestDeletedLastMessage(t *testing.T) {
	r := newRecorder(t, -1)
	scenario(r)
	last := uint64(len(r.events))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	s, err := r.js.Stream(ctx, testStream)
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range []uint64{last, last - 2} {
		if err := s.DeleteMsg(ctx, seq); err != nil {
			t.Fatal(err)
		}
	}
	rp := r.replayer(testModelOptions())
	snap, err := rp.At(ctx, Point{Seq: last})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Sequence != last-1 || snap.History.Complete || snap.History.Removed != 2 {
		t.Errorf("At(deleted last seq) = seq %d, history %+v; want seq %d and 2 removed", snap.Sequence, snap.History, last-1)
	}
	tl, err := rp.Timeline(ctx, Point{Seq: last - 3}, Point{Seq: last}, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if tl.Events != 2 || tl.LastSequence != last-1 {
		t.Errorf("timeline to a deleted seq: %d events up to seq %d; want 2 up to %d", tl.Events, tl.LastSequence, last-1)
	}
}
