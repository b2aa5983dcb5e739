package stream_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
)

// TestReadRange: the messages of a range, in order, with their stream
// fields; a range that ends on a deleted message still ends; fn's error is
// returned as it is; headers only reads no payload.
func TestReadRange(t *testing.T) {
	ctx := testContext(t)
	_, js, s := setupStream(t)
	publishInOrder(t, ctx, newPublisher(t, js), configMapEvent("a", 1), configMapEvent("b", 1),
		configMapEvent("a", 2), configMapEvent("c", 1), configMapEvent("b", 2))
	if err := s.DeleteMsg(ctx, 5); err != nil {
		t.Fatal(err)
	}
	read := func(o stream.ReadOptions, end uint64, fn func(stream.Message) error) ([]uint64, error) {
		var seqs []uint64
		err := stream.ReadRange(ctx, js, "INGRESS", o, end, func(m stream.Message) error {
			seqs = append(seqs, m.Sequence)
			return fn(m)
		})
		return seqs, err
	}
	all := stream.ReadOptions{Filter: events.FilterSubject(prefix), Start: 2}
	seqs, err := read(all, 5, func(m stream.Message) error {
		ev, err := m.Decode(prefix)
		if err != nil || ev.Sequence != m.Sequence || ev.Subject != m.Subject || m.Time.IsZero() {
			t.Errorf("message %d decodes to %+v, %v", m.Sequence, ev, err)
		}
		return nil
	})
	if err != nil || !slices.Equal(seqs, []uint64{2, 3, 4}) {
		t.Errorf("ReadRange 2..5 (5 deleted) = %v, %v; want [2 3 4]", seqs, err)
	}
	stop := errors.New("stop")
	if seqs, err := read(all, 4, func(stream.Message) error { return stop }); !errors.Is(err, stop) || !slices.Equal(seqs, []uint64{2}) {
		t.Errorf("ReadRange with fn failing = %v, %v; want [2] and fn's error", seqs, err)
	}
	heads := all
	heads.HeadersOnly = true
	if _, err := read(heads, 3, func(m stream.Message) error {
		if len(m.Data) != 0 || m.Header.Get(events.HeaderOp) != string(events.OpUpdate) {
			t.Errorf("headers-only message %d: %d bytes of data, headers %v", m.Sequence, len(m.Data), m.Header)
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	if _, err := read(stream.ReadOptions{Filter: all.Filter}, 3, nil); !errors.Is(err, stream.ErrInvalidConfig) {
		t.Errorf("ReadRange from 0 = %v, want ErrInvalidConfig", err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Consumers != 0 {
		t.Errorf("%d consumers left on the stream, want 0", info.State.Consumers)
	}
}
