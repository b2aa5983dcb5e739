package watch_test

import (
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/test/testkit/natstest"
	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"
)

// outage is how long TestAPIServerOutage keeps kube-apiserver down, and
// resumeTimeout bounds each wait after it (it only turns a hang into a
// failure: the informers' watches resume within a probe interval of the
// API's return, apigate.go; the fault suite asserts the bound).
const (
	outage        = 30 * time.Second
	resumeTimeout = 2 * time.Minute
)

// TestAPIServerOutage: kube-apiserver is down for 30 s with two watchers
// (leader election, the default timings, the API gate) running. During the outage
// nothing is deleted from the stream and no watcher stops; afterwards one
// leads again, a change made just before the outage and one made after it
// reach the stream, and an unchanged object is not published again (the
// caches were kept).
func TestAPIServerOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("needs kube-apiserver and etcd (make controlplane); not run with -short")
	}
	cp := testenv.Start(t) // its own: the shared one stays up for the other tests
	client := cp.Client(t)
	srv := natstest.New(t)
	_, js := natstest.Connect(t, srv.URL())
	e := &env{client: client, rest: cp.Config(), ns: testenv.NewNamespace(t, client), nats: srv, js: js}
	elected := func(id string) *runningWatcher {
		cfg := e.config(id)
		cfg.LeaderElect, cfg.ElectionNamespace = true, e.ns
		return start(t, cfg)
	}
	a, b := elected("watcher-a"), elected("watcher-b")
	eventually(t, "a leader", func() bool { return a.leads(t) || b.leads(t) })
	e.create(t, service(e.ns, "keep"))
	e.create(t, service(e.ns, "before"))
	e.waitMessage(t, e.subject(events.KindService, "keep"), events.OpCreate)
	e.waitMessage(t, e.subject(events.KindService, "before"), events.OpCreate)
	from := e.lastSeq(t)
	before := e.setServicePort(t, "before", 81) // just before the outage

	if err := cp.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	for time.Since(down) < outage {
		noDeletes(t, e.messages(t), from)
		for _, rw := range []*runningWatcher{a, b} {
			if len(rw.done) > 0 {
				t.Fatalf("watcher %s stopped during the outage", rw.id)
			}
		}
		time.Sleep(time.Second)
	}
	t.Logf("kube-apiserver down for %s; leaders at its end: %s %v, %s %v",
		time.Since(down).Round(time.Millisecond), a.id, a.leads(t), b.id, b.leads(t))
	if err := cp.StartAPIServer(t.Context()); err != nil {
		t.Fatal(err)
	}

	back := time.Now()
	e.create(t, service(e.ns, "after"))
	// The informers' requests waited at the API gate: they go once its
	// probe finds the API ready again.
	within(t, resumeTimeout, "a leader after the outage", func() bool { return a.leads(t) || b.leads(t) })
	within(t, resumeTimeout, "the Service created after the outage", func() bool {
		_, ok := lastOn(e.messages(t), e.subject(events.KindService, "after"))
		return ok
	})
	t.Logf("the Service created after the outage was in the stream %s after kube-apiserver was back",
		time.Since(back).Round(time.Millisecond))
	within(t, resumeTimeout, "the change made before the outage", func() bool {
		m, ok := lastOn(e.messages(t), e.subject(events.KindService, "before"))
		return ok && m.Event.ResourceVersion == before.ResourceVersion
	})
	msgs := e.messages(t)
	noDeletes(t, msgs, from)
	if keep := on(msgs, e.subject(events.KindService, "keep")); len(keep) != 1 {
		t.Errorf("the unchanged Service was published again: %v", keep)
	}
	inOrder(t, msgs)
}

// noDeletes fails the test on a delete after sequence from (the test
// deletes nothing).
func noDeletes(t *testing.T, msgs []message, from uint64) {
	t.Helper()
	for _, m := range msgs {
		if m.Seq > from && m.Event.Op == events.OpDelete {
			t.Fatalf("a delete was published: %s", m)
		}
	}
}
