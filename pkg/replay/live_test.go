package replay

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/model"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
	"github.com/ingress-sync/ingress-sync/pkg/syncer"
	"github.com/ingress-sync/ingress-sync/pkg/syncer/syncertest"
)

// withFallback adds a freshly generated fallback certificate, as
// `syncer run` does at start (each process its own).
func withFallback(t *testing.T, opts model.Options) model.Options {
	t.Helper()
	p, err := certs.Generate(certs.Options{Hosts: []string{"ingress-sync.invalid"}})
	if err != nil {
		t.Fatal(err)
	}
	opts.FallbackCertificate = &model.Certificate{Name: model.FallbackCertificateName, Cert: p.CertPEM, Key: p.KeyPEM}
	return opts
}

// startSyncer runs a real Syncer, fed by a real stream.Consumer from the
// recorder's stream, until the test ends.
func startSyncer(t *testing.T, r *recorder, opts model.Options) *syncer.Syncer {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := syncer.New(syncertest.New(), syncer.Options{Model: opts, Pod: "live", Logger: log, Holdoff: time.Millisecond, MaxHoldoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c, err := stream.NewConsumer(r.js, testStream, testPrefix, s, stream.WithConsumerLogger(log), stream.WithDecodeErrorHandler(s.DecodeError))
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
	live := startSyncer(t, r, withFallback(t, testModelOptions()))
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
