package watch_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// TestReconcileAfterDowntime: what changed while no watcher ran is
// published on start (a delete for what is gone), and nothing else.
func TestReconcileAfterDowntime(t *testing.T) {
	e := newEnv(t)
	ctx, c, ns := t.Context(), e.client, e.ns
	first := start(t, e.config("watcher-a"))
	for _, name := range []string{"keep", "changed", "gone"} {
		e.create(t, service(ns, name))
	}
	e.create(t, endpointSlice(ns, "keep-1", "keep", "198.18.0.1"))
	e.waitMessage(t, e.subject(events.KindEndpointSlice, "keep-1"), events.OpCreate)
	gone := e.waitMessage(t, e.subject(events.KindService, "gone"), events.OpCreate)
	first.stop(t)

	// While no watcher runs: a delete, an update, a create, and a no-op
	// EndpointSlice update (new resourceVersion, same endpoints).
	if err := c.CoreV1().Services(ns).Delete(ctx, "gone", deleteOpts); err != nil {
		t.Fatal(err)
	}
	e.setServicePort(t, "changed", 8080)
	e.create(t, service(ns, "new"))
	slice, err := c.DiscoveryV1().EndpointSlices(ns).Get(ctx, "keep-1", getOpts)
	if err != nil {
		t.Fatal(err)
	}
	slice.Labels["team"] = "blue"
	if _, err := c.DiscoveryV1().EndpointSlices(ns).Update(ctx, slice, updateOpts); err != nil {
		t.Fatal(err)
	}
	before := e.lastSeq(t)

	start(t, e.config("watcher-b"))
	deleted := e.waitMessage(t, e.subject(events.KindService, "gone"), events.OpDelete)
	if deleted.Event.UID != gone.Event.UID || deleted.Event.WatcherID != "watcher-b" {
		t.Errorf("delete %s (uid %s) does not match the create %s (uid %s)", deleted, deleted.Event.UID, gone, gone.Event.UID)
	}
	e.waitMessage(t, e.subject(events.KindService, "changed"), events.OpUpdate)
	e.waitMessage(t, e.subject(events.KindService, "new"), events.OpCreate)
	want := []string{
		e.subject(events.KindService, "changed") + " update",
		e.subject(events.KindService, "gone") + " delete",
		e.subject(events.KindService, "new") + " create",
		e.subject(events.KindService, "marker") + " create",
	}
	checkNewMessages(t, e, before, want)
}

// TestRestartWithoutChanges: a watcher restarted with nothing changed
// publishes nothing.
func TestRestartWithoutChanges(t *testing.T) {
	e := newEnv(t)
	ctx, ns := t.Context(), e.ns
	first := start(t, e.config("watcher-a"))
	for _, kc := range everyKind(t, e) {
		if err := kc.create(ctx); err != nil {
			t.Fatalf("create %s: %v", kc.kind, err)
		}
		e.waitMessage(t, e.subject(kc.kind, kc.name), events.OpCreate)
	}
	e.create(t, tlsSecret(ns, "tls-2"))
	e.waitMessage(t, e.subject(events.KindSecret, "tls-2"), events.OpCreate)
	first.stop(t)
	before := e.lastSeq(t)

	second := start(t, e.config("watcher-b"))
	eventually(t, "the reconcile of the restarted watcher", func() bool {
		return second.metric(t, "ingress_sync_watcher_reconciled_objects_total", "result", "unchanged") >= 7
	})
	if n := second.metric(t, "ingress_sync_watcher_reconciled_objects_total", "result", "queued") +
		second.metric(t, "ingress_sync_watcher_reconciled_objects_total", "result", "gone"); n != 0 {
		t.Errorf("reconcile queued %v objects, want none", n)
	}
	checkNewMessages(t, e, before, []string{e.subject(events.KindService, "marker") + " create"})
}

// checkNewMessages creates a marker Service, waits for it and checks that
// the stream holds exactly want ("<subject> <op>", in any order) after
// sequence before, counting this test's objects only. The watcher of e runs
// one worker, which publishes keys in the order it queued them: anything
// queued before the marker is in the stream once the marker is (keys whose
// publish failed come back after a backoff, behind the marker: wait for
// those first).
func checkNewMessages(t *testing.T, e *env, before uint64, want []string) {
	t.Helper()
	e.create(t, service(e.ns, "marker"))
	e.waitMessage(t, e.subject(events.KindService, "marker"), events.OpCreate)
	var got []string
	for _, m := range e.messages(t) {
		// IngressClasses of other tests may exist: count this test's only.
		if m.Seq > before && strings.Contains(m.Subject, e.ns) {
			got = append(got, m.Subject+" "+string(m.Event.Op))
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("new messages:\n  %v\nwant\n  %v", got, want)
	}
}
