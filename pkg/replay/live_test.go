package replay

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/model"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
	"github.com/ingress-sync/ingress-sync/pkg/syncer"
	"github.com/ingress-sync/ingress-sync/pkg/syncer/syncertest"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// withFallback adds a freshly generated fallback certificate, as
// `syncer run` does at start (each process its own).
func withFallback(t *testing.T, opts model.Options) model.Options {
	t.Helper()
	p, err := certs.Generate(certs.Options{Hosts: []string{"ingress-sync.invalid"}})
	if err != nil {
		t.Fatal(err)
	}
	opts.FallbackCertificate = &config.Certificate{Name: config.FallbackCertificateName, Cert: p.CertPEM, Key: p.KeyPEM}
	return opts
}

// startSyncer runs a real Syncer, fed by a real stream.Consumer from the
// recorder's stream, until the test ends. The messages the consumer skips
// go to skipped as well as to the Syncer, when skipped is not nil.
func startSyncer(t *testing.T, r *recorder, opts model.Options, skipped *liveSkips) *syncer.Syncer {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := syncer.New(syncertest.New(), syncer.Options{Model: opts, Pod: "live", Logger: log, Holdoff: time.Millisecond, MaxHoldoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	onSkip := s.DecodeError
	if skipped != nil {
		onSkip = func(seq uint64, subject string, err error) {
			skipped.add(Skipped{Sequence: seq, Subject: subject, Error: err.Error()})
			s.DecodeError(seq, subject, err)
		}
	}
	c, err := stream.NewConsumer(r.js, testStream, testPrefix, s, stream.WithConsumerLogger(log), stream.WithDecodeErrorHandler(onSkip))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, run := range []func(context.Context) error{s.Start, c.Start} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := run(ctx); err != nil {
				t.Errorf("live syncer: %v", err)
			}
		}()
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	return s
}

// waitApplied waits (at most testTimeout) until the Syncer reports that
// its running Configuration includes stream sequence seq.
func waitApplied(t *testing.T, s *syncer.Syncer, seq uint64) events.SyncerStatus {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for time.Now().Before(deadline) {
		if st := s.Status(); st.Ready && st.Sequence >= seq {
			return st
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("the live syncer did not apply seq %d within %s: %+v", seq, testTimeout, s.Status())
	return events.SyncerStatus{}
}

// TestAtMatchesLiveSyncer: a real Syncer consumes the recorded events one at
// a time and reports the checksum it applied after each; replaying the
// stream at each of those sequences (with another generated fallback
// certificate, as another process would) gives the same checksums.
func TestAtMatchesLiveSyncer(t *testing.T) {
	r := newRecorder(t, -1)
	live := startSyncer(t, r, withFallback(t, testModelOptions()), nil)
	reported := map[uint64]string{}
	var order []uint64
	r.after = func(seq uint64) {
		st := waitApplied(t, live, seq)
		if st.Sequence != seq {
			t.Fatalf("the syncer reports seq %d after event %d", st.Sequence, seq)
		}
		reported[seq] = st.Checksum
		order = append(order, seq)
	}
	scenario(r)
	rp := r.replayer(withFallback(t, testModelOptions()))
	changes := 0
	for i, seq := range order {
		snap, err := rp.At(context.Background(), Point{Seq: seq})
		if err != nil {
			t.Fatal(err)
		}
		if got := snap.Configuration.Checksum; got != reported[seq] {
			t.Errorf("seq %d: replay checksum %s, the live syncer reported %s", seq, got, reported[seq])
		}
		if i > 0 && reported[seq] != reported[order[i-1]] {
			changes++
		}
	}
	if changes < 5 {
		t.Errorf("only %d checksum changes along the scenario: the comparison proves little", changes)
	}
}

// liveSkips are the messages a live Consumer skipped.
type liveSkips struct {
	mu   sync.Mutex
	list []Skipped
}

func (l *liveSkips) add(s Skipped) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list = append(l.list, s)
}

func (l *liveSkips) get() []Skipped {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.list)
}

// TestReplayRejectsWhatTheSyncerRejects: a message whose payload is a
// valid event of another object than its subject names, and one that is
// not an event at all, are skipped by the live syncer; a replay skips the
// same messages with the same errors, and rebuilds what the syncer built.
func TestReplayRejectsWhatTheSyncerRejects(t *testing.T) {
	r := newRecorder(t, -1)
	var skipped liveSkips
	live := startSyncer(t, r, withFallback(t, testModelOptions()), &skipped)
	seqs := scenario(r)
	other := fixtures.Ingress("shop", "web", fixtures.Rule("evil.example.com", fixtures.Prefix("/", "web", 80)))
	ev := events.Event{Op: events.OpUpdate, Kind: events.KindIngress, Namespace: "shop", Name: "web",
		UID: "u-web", ResourceVersion: "999", Object: other}
	mismatch := r.publishRaw(events.Subject(testPrefix, events.KindIngress, "shop", "other"), events.Headers(ev), mustEncode(t, ev))
	garbage := r.publishRaw(events.Subject(testPrefix, events.KindService, "shop", "junk"), nil, []byte("not msgpack"))
	last := r.publish(events.OpUpdate, fixtures.EndpointSlice("shop", "web-abc", "web", 8080, "10.0.0.9"))
	st := waitApplied(t, live, last)

	want := skipped.get()
	if len(want) != 2 || want[0].Sequence != mismatch || want[1].Sequence != garbage {
		t.Fatalf("the live syncer skipped %+v; want seqs %d and %d", want, mismatch, garbage)
	}
	rp := r.replayer(withFallback(t, testModelOptions()))
	snap, err := rp.At(context.Background(), Point{Seq: last})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(snap.Skipped, want) {
		t.Errorf("replay skipped %+v\nthe live syncer %+v", snap.Skipped, want)
	}
	if snap.Configuration.Checksum != st.Checksum {
		t.Errorf("replay checksum %s, the live syncer applied %s", snap.Configuration.Checksum, st.Checksum)
	}
	tl, err := rp.Timeline(context.Background(), Point{Seq: seqs["global"] + 1}, Point{}, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Entries) < 2 {
		t.Fatalf("timeline from seq %d has %d entries", seqs["global"]+1, len(tl.Entries))
	}
	for i, e := range tl.Entries[:2] {
		if e.Sequence != want[i].Sequence || e.Error != want[i].Error || e.Changed {
			t.Errorf("timeline entry %+v: want seq %d skipped with %q, nothing changed", e, want[i].Sequence, want[i].Error)
		}
	}
}
