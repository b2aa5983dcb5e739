package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// TestSyncerRestart: a restarted syncer bootstraps from the stream and
// converges to the checksum of its peer, including changes made while it
// was down.
func TestSyncerRestart(t *testing.T) {
	ns := setup(t)
	service(t, ns, "web")
	applyIngress(t, ours(ns, "a", fixtures.Rule("a-"+ns+".example.com", fixtures.Prefix("/", "web", 80))))
	converged(t)
	s := w.Syncers[1]
	if err := s.Stop(); err != nil {
		t.Fatalf("stop %s: %v", s.Name, err)
	}
	applyIngress(t, ours(ns, "b", fixtures.Rule("b-"+ns+".example.com", fixtures.Prefix("/", "web", 80))))
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	converged(t)
	routes(t, nil, map[string]string{"http://b-" + ns + ".example.com/": "web"})
}

// TestWatcherRestart: changes made while the watcher is down (create,
// update, delete) all reach the syncers once it is back.
func TestWatcherRestart(t *testing.T) {
	ns := setup(t)
	service(t, ns, "web")
	other := backend(t, "web-2")
	applyIngress(t, ours(ns, "keep", fixtures.Rule("keep-"+ns+".example.com", fixtures.Prefix("/", "web", 80))))
	applyIngress(t, ours(ns, "gone", fixtures.Rule("gone-"+ns+".example.com", fixtures.Prefix("/", "web", 80))))
	routes(t, nil, map[string]string{"http://gone-" + ns + ".example.com/": "web"})
	if err := w.Watcher.Stop(); err != nil {
		t.Fatalf("stop watcher: %v", err)
	}
	applyIngress(t, ours(ns, "new", fixtures.Rule("new-"+ns+".example.com", fixtures.Prefix("/", "web", 80))))
	setEndpoints(t, ns, "web", other)
	if err := w.Kube.NetworkingV1().Ingresses(ns).Delete(t.Context(), "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Watcher.Start(); err != nil {
		t.Fatal(err)
	}
	routes(t, nil, map[string]string{
		"http://new-" + ns + ".example.com/":  "web-2",
		"http://keep-" + ns + ".example.com/": "web-2",
		"http://gone-" + ns + ".example.com/": "",
	})
	converged(t)
}

// TestNATSRestart: the syncers resume after the nats-server restarts and
// converge on changes made around the outage.
func TestNATSRestart(t *testing.T) {
	ns := setup(t)
	service(t, ns, "web")
	applyIngress(t, ours(ns, "before", fixtures.Rule("before-"+ns+".example.com", fixtures.Prefix("/", "web", 80))))
	converged(t)
	w.StopNATS()
	applyIngress(t, ours(ns, "during", fixtures.Rule("during-"+ns+".example.com", fixtures.Prefix("/", "web", 80))))
	time.Sleep(time.Second) // the watcher sees the change while NATS is down
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := w.StartNATS(ctx); err != nil {
		t.Fatal(err)
	}
	applyIngress(t, ours(ns, "after", fixtures.Rule("after-"+ns+".example.com", fixtures.Prefix("/", "web", 80))))
	routes(t, nil, map[string]string{
		"http://during-" + ns + ".example.com/": "web",
		"http://after-" + ns + ".example.com/":  "web",
	})
	converged(t)
}

// TestStatusAddress: the watcher writes the status address on our Ingresses
// and not on others.
func TestStatusAddress(t *testing.T) {
	ns := setup(t)
	service(t, ns, "web")
	applyIngress(t, ours(ns, "ours", fixtures.Rule("s-"+ns+".example.com", fixtures.Prefix("/", "web", 80))))
	applyIngress(t, fixtures.Ingress(ns, "theirs", fixtures.Class("other-class"),
		fixtures.Rule("t-"+ns+".example.com", fixtures.Prefix("/", "web", 80))))
	eventually(t, waitTimeout, "status address on our Ingress", func() error {
		ing, err := w.Kube.NetworkingV1().Ingresses(ns).Get(t.Context(), "ours", metav1.GetOptions{})
		if err != nil {
			return err
		}
		lb := ing.Status.LoadBalancer.Ingress
		if len(lb) != 1 || lb[0].IP != statusAddress {
			return fmt.Errorf("status %+v, want %s", lb, statusAddress)
		}
		return nil
	})
	theirs, err := w.Kube.NetworkingV1().Ingresses(ns).Get(t.Context(), "theirs", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lb := theirs.Status.LoadBalancer.Ingress; len(lb) != 0 {
		t.Fatalf("status written on an Ingress of another class: %+v", lb)
	}
}
