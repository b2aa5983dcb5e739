package watch_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
)

// farFuture is a resourceVersion newer than any of the test's control plane.
const farFuture = "999999999999"

// TestFencingAgainstAnotherLeader: a watcher and a second writer that also
// believes it leads (a fenced publisher, as a watcher's) publish versions of
// one Service. When the other's version is older, the watcher's publish is
// refused, it reads the subject again and publishes its newer version after
// it; when the other's is newer, the watcher drops its older version. The
// stream never holds an older version after a newer one.
func TestFencingAgainstAnotherLeader(t *testing.T) {
	e := newEnv(t)
	rw := start(t, e.config("watcher-a"))
	e.create(t, service(e.ns, "web"))
	subject := e.subject(events.KindService, "web")
	e.waitMessage(t, subject, events.OpCreate)
	other := newOtherLeader(t, e)

	// Behind: the other writer publishes the version the stream holds.
	other.publish(t, subject, e.service(t, "web"))
	svc := e.setServicePort(t, "web", 81)
	eventually(t, "the watcher's newer version after the other's", func() bool {
		m, ok := lastOn(e.messages(t), subject)
		return ok && m.Event.ResourceVersion == svc.ResourceVersion && m.Event.WatcherID == rw.id
	})
	if n := rw.metric(t, "ingress_sync_watcher_publish_conflicts_total"); n < 1 {
		t.Errorf("%v conflicts counted, want at least 1", n)
	}

	// Ahead: the other writer publishes a version newer than the watcher's next.
	ahead := e.service(t, "web")
	ahead.ResourceVersion, ahead.Spec.Ports[0].Port = farFuture, 99
	other.publish(t, subject, ahead)
	e.setServicePort(t, "web", 82)
	eventually(t, "the watcher dropping its older version", func() bool {
		return rw.metric(t, "ingress_sync_watcher_stale_versions_dropped_total") >= 1
	})
	if m, _ := lastOn(e.messages(t), subject); m.Event.ResourceVersion != farFuture {
		t.Errorf("last message %s, want the other writer's newer version %s", m, farFuture)
	}
	inOrder(t, e.messages(t))
}

// TestTwoLeadersKeepVersionsInOrder: two watchers that both publish (no
// leader election: both believe they lead) under a burst of updates of one
// Service. Each version is stored in order, and the stream ends with the
// API's.
func TestTwoLeadersKeepVersionsInOrder(t *testing.T) {
	e := newEnv(t)
	a, b := start(t, e.config("watcher-a")), start(t, e.config("watcher-b"))
	e.create(t, service(e.ns, "web"))
	subject := e.subject(events.KindService, "web")
	e.waitMessage(t, subject, events.OpCreate)
	var svc *corev1.Service
	for port := int32(81); port <= 120; port++ {
		svc = e.setServicePort(t, "web", port)
	}
	eventually(t, "the last version in the stream", func() bool {
		m, ok := lastOn(e.messages(t), subject)
		return ok && m.Event.ResourceVersion == svc.ResourceVersion
	})
	inOrder(t, e.messages(t))
	t.Logf("conflicts: %v (watcher-a), %v (watcher-b); messages on the subject: %d",
		a.metric(t, "ingress_sync_watcher_publish_conflicts_total"),
		b.metric(t, "ingress_sync_watcher_publish_conflicts_total"), len(on(e.messages(t), subject)))
}

// otherLeader is a second writer that believes it leads: a fenced
// publisher that expects the subject's last message, as a watcher does
// after its reconcile.
type otherLeader struct {
	e   *env
	pub *stream.Publisher
}

func newOtherLeader(t *testing.T, e *env) *otherLeader {
	t.Helper()
	p, err := stream.NewPublisher(e.js, prefix, stream.WithFencing())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		_ = p.Close(ctx)
	})
	return &otherLeader{e: e, pub: p}
}

// publish publishes svc as an update after the subject's last message and
// waits for the ack.
func (o *otherLeader) publish(t *testing.T, subject string, svc *corev1.Service) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	s, err := o.e.js.Stream(ctx, streamName)
	if err != nil {
		t.Fatal(err)
	}
	last, err := s.GetLastMsgForSubject(ctx, subject)
	if err != nil {
		t.Fatal(err)
	}
	o.pub.Expect(subject, last.Sequence)
	ev := events.Event{
		Op: events.OpUpdate, Kind: events.KindService, Namespace: svc.Namespace, Name: svc.Name,
		UID: string(svc.UID), ResourceVersion: svc.ResourceVersion, ObservedAt: time.Now(),
		WatcherID: "watcher-other", SchemaVersion: events.SchemaVersion, Object: events.Trim(svc),
	}
	if err := o.pub.Publish(ctx, ev); err != nil {
		t.Fatal(err)
	}
	if err := o.pub.Flush(ctx); err != nil {
		t.Fatalf("the other writer's publish: %v", err)
	}
}

// service reads a Service of the test's namespace.
func (e *env) service(t *testing.T, name string) *corev1.Service {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	svc, err := e.client.CoreV1().Services(e.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// lastOn is the last message of subject.
func lastOn(msgs []message, subject string) (message, bool) {
	ms := on(msgs, subject)
	if len(ms) == 0 {
		return message{}, false
	}
	return ms[len(ms)-1], true
}

// inOrder fails the test when a message holds an older resourceVersion of
// its object than a message before it.
func inOrder(t *testing.T, msgs []message) {
	t.Helper()
	last := map[string]message{}
	for _, m := range msgs {
		prev, ok := last[m.Subject]
		last[m.Subject] = m
		if !ok {
			continue
		}
		c, err := resourceversion.CompareResourceVersion(m.Event.ResourceVersion, prev.Event.ResourceVersion)
		if err != nil {
			t.Errorf("%s after %s: %v", m, prev, err)
		} else if c < 0 {
			t.Errorf("%s: an older version after %s", m, prev)
		}
	}
	if t.Failed() {
		t.Logf("stream:\n%s", fmt.Sprint(msgs))
	}
}
