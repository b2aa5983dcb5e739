package watch_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// TestIngressStatus: --publish-status-address lands on the Ingresses we
// serve (once a syncer serves them) and on no other; it is removed when an
// Ingress leaves our class, and our own status writes publish nothing.
func TestIngressStatus(t *testing.T) {
	e := newEnv(t)
	ctx, c, ns := t.Context(), e.client, e.ns
	ours, theirs := "ours-"+ns, "theirs-"+ns
	createClass(t, e, ours, e.controller())
	createClass(t, e, theirs, "example.com/another-controller")
	cfg := e.config("watcher-a")
	cfg.PublishStatusAddress = []string{"198.18.0.10", "lb.example.com"}
	w := start(t, cfg)
	runSyncer(t, e, "syncer-a")
	want := []string{"198.18.0.10", "lb.example.com"}

	e.create(t, service(ns, "web"))
	e.create(t, newIngress(ns, "other", theirs, "web"))
	e.create(t, newIngress(ns, "served", ours, "web"))
	waitStatus(t, e, "served", want)
	// One status worker handles Ingresses in the order they changed: once
	// an Ingress created after "other" has its status, "other" was handled.
	e.create(t, newIngress(ns, "served-later", ours, "web"))
	waitStatus(t, e, "served-later", want)
	if got := statusOf(t, e, "other"); len(got) > 0 {
		t.Errorf("Ingress of another class got status %v", got)
	}

	servedSubject := e.subject(events.KindIngress, "served")
	eventually(t, "our status write dropped as a no-op", func() bool {
		return w.metric(t, "ingress_sync_watcher_noop_updates_dropped_total", "kind", "Ingress") >= 1
	})
	if msgs := on(e.messages(t), servedSubject); len(msgs) != 1 {
		t.Errorf("messages on %s: %v, want only the create", servedSubject, msgs)
	}

	ing, err := c.NetworkingV1().Ingresses(ns).Get(ctx, "served", getOpts)
	if err != nil {
		t.Fatal(err)
	}
	ing.Spec.IngressClassName = &theirs
	if _, err := c.NetworkingV1().Ingresses(ns).Update(ctx, ing, updateOpts); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, e, "served", nil)
	e.waitMessage(t, servedSubject, events.OpUpdate)
}

// TestPublishServiceStatus: with --publish-service the status follows the
// Service: its external IPs, then its load-balancer addresses.
func TestPublishServiceStatus(t *testing.T) {
	e := newEnv(t)
	ctx, c, ns := t.Context(), e.client, e.ns
	ours := "ours-" + ns
	createClass(t, e, ours, e.controller())
	lb := service(ns, "ingress-sync")
	lb.Spec.Type = corev1.ServiceTypeLoadBalancer
	lb.Spec.ExternalIPs = []string{"198.18.0.20"}
	e.create(t, lb)
	cfg := e.config("watcher-a")
	cfg.PublishService = ns + "/ingress-sync"
	start(t, cfg)
	runSyncer(t, e, "syncer-a")

	e.create(t, service(ns, "web"))
	e.create(t, newIngress(ns, "web", ours, "web"))
	waitStatus(t, e, "web", []string{"198.18.0.20"})

	svc, err := c.CoreV1().Services(ns).Get(ctx, "ingress-sync", getOpts)
	if err != nil {
		t.Fatal(err)
	}
	svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "198.18.0.30"}, {Hostname: "lb.example.net"}}
	if _, err := c.CoreV1().Services(ns).UpdateStatus(ctx, svc, updateOpts); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, e, "web", []string{"198.18.0.30", "lb.example.net"})
}

func createClass(t *testing.T, e *env, name, controller string) {
	t.Helper()
	e.create(t, ingressClass(name, controller))
	t.Cleanup(func() { _ = e.client.NetworkingV1().IngressClasses().Delete(context.Background(), name, deleteOpts) })
}

// statusOf is the sorted list of IPs and host names in an Ingress's status.
func statusOf(t *testing.T, e *env, name string) []string {
	t.Helper()
	ing, err := e.client.NetworkingV1().Ingresses(e.ns).Get(t.Context(), name, getOpts)
	if err != nil {
		t.Fatal(err)
	}
	return addresses(ing.Status.LoadBalancer.Ingress)
}

func addresses(lbs []networkingv1.IngressLoadBalancerIngress) []string {
	var out []string
	for _, lb := range lbs {
		out = append(out, lb.IP+lb.Hostname)
	}
	slices.Sort(out)
	return out
}

func waitStatus(t *testing.T, e *env, name string, want []string) {
	t.Helper()
	eventually(t, fmt.Sprintf("status of Ingress %s = %v", name, want), func() bool {
		return slices.Equal(statusOf(t, e, name), want)
	})
}
