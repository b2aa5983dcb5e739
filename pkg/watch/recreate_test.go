package watch_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
)

// TestStreamRecreated: the leader finds the event stream deleted (it
// creates it again) or deleted and created again by someone else; either
// way it republishes its whole state into the new stream, and marks it
// reconciled once all of it is there, at a sequence that covers it.
func TestStreamRecreated(t *testing.T) {
	e := newEnv(t)
	cfg := e.config("watcher-a")
	cfg.StreamCheckInterval = 100 * time.Millisecond
	w := start(t, cfg)
	for _, name := range []string{"a", "b", "c"} {
		e.create(t, service(e.ns, name))
		e.waitMessage(t, e.subject(events.KindService, name), events.OpCreate)
	}
	first := e.waitMarker(t, time.Time{})

	// Deleted: the watcher creates the stream again.
	if err := e.js.DeleteStream(t.Context(), streamName); err != nil {
		t.Fatal(err)
	}
	second := e.waitMarker(t, first.Created)
	e.checkRepublished(t, second, []string{"a", "b", "c"})

	// Deleted and created again by someone else, with a change made
	// meanwhile.
	if err := e.js.DeleteStream(t.Context(), streamName); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Ensure(t.Context(), e.js, stream.Config{Name: streamName, SubjectPrefix: prefix}); err != nil {
		t.Fatal(err)
	}
	e.create(t, service(e.ns, "d"))
	third := e.waitMarker(t, second.Created)
	e.waitMessage(t, e.subject(events.KindService, "d"), events.OpCreate)
	e.checkRepublished(t, third, []string{"a", "b", "c"})
	if got := w.metric(t, "ingress_sync_watcher_stream_recreated_total"); got < 2 {
		t.Errorf("stream_recreated_total %v, want at least 2", got)
	}
}

// waitMarker waits for a reconcile marker on a stream created after
// notBefore (zero: any) and returns the stream's state.
func (e *env) waitMarker(t *testing.T, notBefore time.Time) stream.StreamState {
	t.Helper()
	var st stream.StreamState
	eventually(t, "a reconcile marker on the stream", func() bool {
		var err error
		st, err = stream.ReadState(t.Context(), e.js, streamName)
		return err == nil && st.HasMarker && st.Created.After(notBefore)
	})
	return st
}

// checkRepublished checks that the stream st describes holds a create of
// each Service of names at or below the marker's sequence.
func (e *env) checkRepublished(t *testing.T, st stream.StreamState, names []string) {
	t.Helper()
	var got []string
	for _, m := range e.messages(t) {
		if m.Event.Kind != events.KindService || !strings.Contains(m.Subject, e.ns) || m.Seq > st.Reconciled {
			continue
		}
		if m.Event.Op != events.OpCreate {
			t.Errorf("republished %s, want a create", m)
		}
		got = append(got, m.Event.Name)
	}
	for _, name := range names {
		if !slices.Contains(got, name) {
			t.Errorf("Services in the new stream up to its marker (%d): %v, want %s among them", st.Reconciled, got, name)
		}
	}
}
