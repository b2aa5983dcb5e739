package replay

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestAtMatchesLiveBuild: the Configuration replayed at a point has the
// checksum of model.Build on a store fed with exactly the events up to that
// point, which is what a live syncer builds when it has applied them.
func TestAtMatchesLiveBuild(t *testing.T) {
	r := newRecorder(t, -1)
	seqs := scenario(r)
	rp := r.replayer(testModelOptions())
	ctx := context.Background()
	for _, name := range []string{"class", "web-ing", "api-route", "web-scale-down", "unused-slice", "api-down", "tls", "blog-ing", "blog-delete"} {
		seq := seqs[name]
		want := r.buildUpTo(seq, testModelOptions())
		t.Run(name+"/seq", func(t *testing.T) {
			snap, err := rp.At(ctx, Point{Seq: seq})
			if err != nil {
				t.Fatal(err)
			}
			if snap.Configuration.Checksum != want.Checksum || snap.Sequence != seq || snap.Events != int(seq) {
				t.Errorf("At(seq %d) = checksum %s, seq %d, %d events; want %s, seq %d, %d events",
					seq, snap.Configuration.Checksum, snap.Sequence, snap.Events, want.Checksum, seq, seq)
			}
			if !snap.History.Complete {
				t.Errorf("history of an untrimmed stream reported incomplete: %+v", snap.History)
			}
		})
		t.Run(name+"/time", func(t *testing.T) {
			snap, err := rp.At(ctx, Point{Time: r.timeOf(seq)})
			if err != nil {
				t.Fatal(err)
			}
			// Messages stored within the same instant are all included.
			want := r.buildUpTo(snap.Sequence, testModelOptions())
			if snap.Sequence < seq || snap.Configuration.Checksum != want.Checksum {
				t.Errorf("At(time of seq %d) = seq %d checksum %s; want seq >= %d and checksum %s",
					seq, snap.Sequence, snap.Configuration.Checksum, seq, want.Checksum)
			}
		})
	}
}

// TestAtOptions: the model flags reach Build (an Ingress of another class
// is served only when that class is ours).
func TestAtOptions(t *testing.T) {
	r := newRecorder(t, -1)
	scenario(r)
	opts := testModelOptions()
	opts.IngressClass, opts.ControllerClass = "other", "example.com/other"
	snap, err := r.replayer(opts).At(context.Background(), Point{Seq: uint64(len(r.events))})
	if err != nil {
		t.Fatal(err)
	}
	want := r.buildUpTo(uint64(len(r.events)), opts)
	if snap.Configuration.Checksum != want.Checksum || len(snap.Configuration.Servers) != 1 {
		t.Errorf("with another class: checksum %s, %d servers; want %s and only the default server",
			snap.Configuration.Checksum, len(snap.Configuration.Servers), want.Checksum)
	}
}

func TestAtErrors(t *testing.T) {
	r := newRecorder(t, -1)
	scenario(r)
	first := r.timeOf(1)
	ctx := context.Background()
	tests := []struct {
		name    string
		stream  string
		point   Point
		want    error
		message string
	}{
		{"time before the stream starts", testStream, Point{Time: first.Add(-time.Hour)}, ErrBeforeStream, "is before the first message"},
		{"sequence beyond the last", testStream, Point{Seq: 1000}, ErrBeyondEnd, "sequence 1000 is after the last message"},
		{"unknown stream", "NOPE", Point{Seq: 1}, jetstream.ErrStreamNotFound, `stream "NOPE"`},
		{"no point", testStream, Point{}, ErrInvalidPoint, "no point"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rp, err := New(r.js, Options{Stream: tc.stream, SubjectPrefix: testPrefix, NewBuilder: testBuilder(testModelOptions())})
			if err != nil {
				t.Fatal(err)
			}
			_, err = rp.At(ctx, tc.point)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.message) {
				t.Errorf("At = %v; want an error wrapping %v that says %q", err, tc.want, tc.message)
			}
		})
	}
}

func TestAtEmptyStream(t *testing.T) {
	r := newRecorder(t, -1)
	_, err := r.replayer(testModelOptions()).At(context.Background(), Point{Seq: 1})
	if !errors.Is(err, ErrEmptyStream) {
		t.Errorf("At on an empty stream = %v; want ErrEmptyStream", err)
	}
}

// TestAtSkipsUndecodable: like the syncer, a replay skips a message it
// cannot decode, and says so.
func TestAtSkipsUndecodable(t *testing.T) {
	r := newRecorder(t, -1)
	scenario(r)
	bad := r.publishRaw(testPrefix+".ingress.shop.broken", nil, []byte("not msgpack"))
	snap, err := r.replayer(testModelOptions()).At(context.Background(), Point{Seq: bad})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Skipped) != 1 || snap.Skipped[0].Sequence != bad || !strings.Contains(snap.Skipped[0].Error, "malformed") {
		t.Errorf("Skipped = %+v; want seq %d, malformed", snap.Skipped, bad)
	}
	if want := r.buildUpTo(bad, testModelOptions()); snap.Configuration.Checksum != want.Checksum {
		t.Errorf("checksum %s, want %s", snap.Configuration.Checksum, want.Checksum)
	}
}
