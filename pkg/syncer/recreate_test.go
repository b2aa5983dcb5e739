package syncer

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// TestRecreatedStreamKeepsServing: after StreamRecreated, the events of the
// new stream's bootstrap go into a store of their own while the running
// configuration keeps serving; at CaughtUp the new store is served, applied
// as an ordinary diff from the running configuration: what the new stream
// holds is never removed, what it lacks (deleted meanwhile) is.
func TestRecreatedStreamKeepsServing(t *testing.T) {
	h := start(t, Options{})
	baseObjects(h) // a.example.com
	h.send(events.OpCreate, fixtures.Ingress("default", "b", fixtures.Rule("b.example.com", fixtures.Prefix("/", "web", 80))))
	h.send(events.OpCreate, fixtures.Ingress("default", "gone", fixtures.Rule("gone.example.com", fixtures.Prefix("/", "web", 80))))
	h.s.CaughtUp(context.Background())
	h.settle()
	before := h.s.Running()
	if got := serverNames(before); !slices.Equal(got, []string{"_", "a.example.com", "b.example.com", "gone.example.com"}) {
		t.Fatalf("servers before %v", got)
	}

	// The new stream's bootstrap, in its own sequences: first a part of
	// the state, which alone would remove b.example.com and the backend.
	h.s.StreamRecreated(context.Background())
	h.seq = 0
	h.send(events.OpCreate, fixtures.Service("default", "web", 80))
	h.send(events.OpCreate, fixtures.Ingress("default", "web", fixtures.Rule("a.example.com", fixtures.Prefix("/", "web", 80))))
	h.s.DecodeError(3, "ingress.ingress.default.garbage", events.ErrMalformed)
	h.seq = 3
	if running := h.s.Running(); running.Checksum != before.Checksum {
		t.Fatalf("the running configuration changed during the new bootstrap: %v", serverNames(running))
	}
	h.send(events.OpCreate, fixtures.EndpointSlice("default", "web-1", "web", 8080, "198.18.0.1"))
	h.send(events.OpCreate, fixtures.Ingress("default", "b", fixtures.Rule("b.example.com", fixtures.Prefix("/", "web", 80))))
	h.send(events.OpCreate, fixtures.Ingress("default", "new", fixtures.Rule("new.example.com", fixtures.Prefix("/", "web", 80))))
	h.s.CaughtUp(context.Background())
	h.settle()

	after := h.s.Running()
	if got := serverNames(after); !slices.Equal(got, []string{"_", "a.example.com", "b.example.com", "new.example.com"}) {
		t.Fatalf("servers after the new bootstrap %v", got)
	}
	calls := h.rec.Calls()
	if len(calls) != 2 {
		t.Fatalf("calls %v, want the initial reload and one update from the new stream", calls)
	}
	if got := hostsOf(calls[1].Change); !slices.Equal(got, []string{"new.example.com", "-gone.example.com"}) {
		t.Errorf("the new stream's change has hosts %v, want new.example.com upserted and gone.example.com removed", got)
	}
	if ch := calls[1].Change; len(ch.BackendsRemoved) != 0 || ch.Reload {
		t.Errorf("the new stream's change removes backends %v (reload %v), want a dynamic update removing none", ch.BackendsRemoved, ch.Reload)
	}
	if st := h.s.Status(); st.Sequence != 6 || st.Checksum != after.Checksum {
		t.Errorf("status at sequence %d with %s, want 6 and the new checksum %s", st.Sequence, st.Checksum, after.Checksum)
	}
	if got := testutil.ToFloat64(h.s.m.streamRecreated); got != 1 {
		t.Errorf("stream_recreated_total %v, want 1", got)
	}
}

func serverNames(cfg *config.Configuration) []string {
	if cfg == nil {
		return nil
	}
	var out []string
	for _, s := range cfg.Servers {
		out = append(out, s.Hostname)
	}
	return out
}
