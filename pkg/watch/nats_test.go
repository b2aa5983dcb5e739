package watch_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// TestNATSDownAtStart: the watcher retries NATS with backoff, says so in its
// log, and once NATS is up every change made meanwhile is in the stream.
func TestNATSDownAtStart(t *testing.T) {
	e := newEnv(t)
	e.nats.Stop()
	ctx, c, ns := t.Context(), e.client, e.ns
	w := start(t, e.config("watcher-a"))
	e.create(t, service(ns, "web"))
	e.create(t, service(ns, "short-lived"))
	if err := c.CoreV1().Services(ns).Delete(ctx, "short-lived", deleteOpts); err != nil {
		t.Fatal(err)
	}
	svc := e.setServicePort(t, "web", 8080)
	eventually(t, "three logged connection attempts", func() bool {
		return len(w.logs.lines("NATS connection failed, retrying", "attempt=3")) > 0
	})
	for _, line := range w.logs.lines("NATS connection failed, retrying") {
		if !strings.Contains(line, "retryIn=") || !strings.Contains(line, "err=") {
			t.Errorf("retry log line without backoff or error: %s", line)
		}
	}

	e.nats.Restart()
	m := e.waitMessage(t, e.subject(events.KindService, "web"), events.OpCreate)
	if m.Event.ResourceVersion != svc.ResourceVersion || m.Event.Object.(*corev1.Service).Spec.Ports[0].Port != 8080 {
		t.Errorf("published %s, want the state after the update (rv %s)", m, svc.ResourceVersion)
	}
	checkNewMessages(t, e, 0, []string{
		events.Subject(prefix, events.KindNamespace, "", ns) + " create",
		e.subject(events.KindService, "web") + " create",
		e.subject(events.KindService, "marker") + " create",
	})
}

// TestNATSOutage: changes made while NATS is down are all published once it
// is back, a delete with the object's last state. The publisher gives up
// after two short attempts, so the watcher's own requeueing is what brings
// the changes through.
func TestNATSOutage(t *testing.T) {
	e := newEnv(t)
	ctx, c, ns := t.Context(), e.client, e.ns
	cfg := e.config("watcher-a")
	cfg.PublishAttempts, cfg.PublishAckTimeout = 2, 200*time.Millisecond
	w := start(t, cfg)
	for _, name := range []string{"updated", "deleted", "kept"} {
		e.create(t, service(ns, name))
		e.waitMessage(t, e.subject(events.KindService, name), events.OpCreate)
	}
	before := e.lastSeq(t)

	e.nats.Stop()
	eventually(t, "the watcher noticing the outage", func() bool {
		return len(w.logs.lines("disconnected from NATS")) > 0
	})
	e.setServicePort(t, "updated", 8080)
	if err := c.CoreV1().Services(ns).Delete(ctx, "deleted", deleteOpts); err != nil {
		t.Fatal(err)
	}
	e.create(t, service(ns, "created"))
	e.nats.Restart()

	del := e.waitMessage(t, e.subject(events.KindService, "deleted"), events.OpDelete)
	if del.Event.Object == nil {
		t.Errorf("delete %s lost the last state of the object", del)
	}
	e.waitMessage(t, e.subject(events.KindService, "updated"), events.OpUpdate)
	e.waitMessage(t, e.subject(events.KindService, "created"), events.OpCreate)
	checkNewMessages(t, e, before, []string{
		e.subject(events.KindService, "updated") + " update",
		e.subject(events.KindService, "deleted") + " delete",
		e.subject(events.KindService, "created") + " create",
		e.subject(events.KindService, "marker") + " create",
	})
}

// TestStreamUnavailable: while NATS is up but no stream takes the subjects
// (as when JetStream is unavailable), publishes fail for good; the watcher
// queues the keys again and publishes their current state once the stream
// is back. Unlike a disconnect, nothing is buffered by the client here: only
// the watcher's requeueing brings the changes through.
func TestStreamUnavailable(t *testing.T) {
	e := newEnv(t)
	ns := e.ns
	cfg := e.config("watcher-a")
	cfg.PublishAttempts, cfg.PublishAckTimeout = 2, 200*time.Millisecond
	w := start(t, cfg)
	e.create(t, service(ns, "updated"))
	e.waitMessage(t, e.subject(events.KindService, "updated"), events.OpCreate)
	before := e.lastSeq(t)

	e.setStreamSubjects(t, "parked.>")
	e.setServicePort(t, "updated", 8080)
	e.create(t, service(ns, "created"))
	eventually(t, "publishes failing for good", func() bool {
		return w.metric(t, "ingress_sync_watcher_publish_errors_total", "kind", "Service") >= 2
	})
	e.setStreamSubjects(t, events.FilterSubject(prefix))
	// Keys come back after a backoff, behind any marker: wait for them.
	e.waitMessage(t, e.subject(events.KindService, "updated"), events.OpUpdate)
	e.waitMessage(t, e.subject(events.KindService, "created"), events.OpCreate)
	checkNewMessages(t, e, before, []string{
		e.subject(events.KindService, "updated") + " update",
		e.subject(events.KindService, "created") + " create",
		e.subject(events.KindService, "marker") + " create",
	})
}

// setStreamSubjects changes the subjects of the test's stream.
func (e *env) setStreamSubjects(t *testing.T, subjects ...string) {
	t.Helper()
	s, err := e.js.Stream(t.Context(), streamName)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cfg := info.Config
	cfg.Subjects = subjects
	if _, err := e.js.UpdateStream(t.Context(), cfg); err != nil {
		t.Fatalf("update stream subjects: %v", err)
	}
}
