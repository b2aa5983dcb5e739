package watch_test

import (
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// TestNoopUpdatesAreDropped: an EndpointSlice update that changes neither
// endpoints nor ports, and an Ingress update of its status only, publish
// nothing; real changes still do, and the Ingress keeps its status.
func TestNoopUpdatesAreDropped(t *testing.T) {
	e := newEnv(t)
	w := start(t, e.config("watcher-a"))
	ctx, c, ns := t.Context(), e.client, e.ns
	e.create(t, service(ns, "web"))
	e.create(t, endpointSlice(ns, "web-1", "web", "198.18.0.1"))
	e.create(t, newIngress(ns, "web", "nginx", "web"))
	sliceSubject, ingSubject := e.subject(events.KindEndpointSlice, "web-1"), e.subject(events.KindIngress, "web")
	e.waitMessage(t, sliceSubject, events.OpCreate)
	e.waitMessage(t, ingSubject, events.OpCreate)

	t.Run("EndpointSlice labels and annotations", func(t *testing.T) {
		s, err := c.DiscoveryV1().EndpointSlices(ns).Get(ctx, "web-1", getOpts)
		if err != nil {
			t.Fatal(err)
		}
		s.Labels["team"] = "blue"
		s.Annotations = map[string]string{"note": "nothing that routes"}
		if _, err := c.DiscoveryV1().EndpointSlices(ns).Update(ctx, s, updateOpts); err != nil {
			t.Fatal(err)
		}
		eventually(t, "a dropped EndpointSlice update", func() bool {
			return w.metric(t, "ingress_sync_watcher_noop_updates_dropped_total", "kind", "EndpointSlice") >= 1
		})
		if msgs := on(e.messages(t), sliceSubject); len(msgs) != 1 {
			t.Errorf("messages on %s: %v, want only the create", sliceSubject, msgs)
		}
		s, err = c.DiscoveryV1().EndpointSlices(ns).Get(ctx, "web-1", getOpts)
		if err != nil {
			t.Fatal(err)
		}
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{"198.18.0.2"}})
		if _, err := c.DiscoveryV1().EndpointSlices(ns).Update(ctx, s, updateOpts); err != nil {
			t.Fatal(err)
		}
		if m := e.waitMessage(t, sliceSubject, events.OpUpdate); len(m.Event.Object.(*discoveryv1.EndpointSlice).Endpoints) != 2 {
			t.Errorf("update %s does not carry the new endpoint", m)
		}
	})

	t.Run("Ingress status only", func(t *testing.T) {
		ing, err := c.NetworkingV1().Ingresses(ns).Get(ctx, "web", getOpts)
		if err != nil {
			t.Fatal(err)
		}
		ing.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "198.18.0.99"}}
		if _, err := c.NetworkingV1().Ingresses(ns).UpdateStatus(ctx, ing, updateOpts); err != nil {
			t.Fatal(err)
		}
		eventually(t, "a dropped Ingress update", func() bool {
			return w.metric(t, "ingress_sync_watcher_noop_updates_dropped_total", "kind", "Ingress") >= 1
		})
		if msgs := on(e.messages(t), ingSubject); len(msgs) != 1 {
			t.Errorf("messages on %s: %v, want only the create", ingSubject, msgs)
		}
		ing, err = c.NetworkingV1().Ingresses(ns).Get(ctx, "web", getOpts)
		if err != nil {
			t.Fatal(err)
		}
		ing.Annotations = map[string]string{"nginx.ingress.kubernetes.io/ssl-redirect": "false"}
		if _, err := c.NetworkingV1().Ingresses(ns).Update(ctx, ing, updateOpts); err != nil {
			t.Fatal(err)
		}
		m := e.waitMessage(t, ingSubject, events.OpUpdate)
		if got := m.Event.Object.(*networkingv1.Ingress).Status.LoadBalancer.Ingress; len(got) != 1 || got[0].IP != "198.18.0.99" {
			t.Errorf("published Ingress lost its status: %v", got)
		}
	})
}

// TestSecretOfOtherTypeIsNeverPublished: only kubernetes.io/tls Secrets are
// published, whatever happens to the others: one that exists when the
// watcher starts, is changed, then deleted.
func TestSecretOfOtherTypeIsNeverPublished(t *testing.T) {
	e := newEnv(t)
	ctx, c, ns := t.Context(), e.client, e.ns
	e.create(t, opaqueSecret(ns, "opaque"))
	start(t, e.config("watcher-a"))
	// One worker publishes keys in the order they were queued: once a TLS
	// Secret changed after the opaque one is in the stream, anything about
	// the opaque one would be too.
	barrier := func(name string) {
		e.create(t, tlsSecret(ns, name))
		e.waitMessage(t, e.subject(events.KindSecret, name), events.OpCreate)
		if msgs := on(e.messages(t), e.subject(events.KindSecret, "opaque")); len(msgs) > 0 {
			t.Fatalf("an Opaque Secret was published: %v", msgs)
		}
	}
	barrier("tls-1")
	s, err := c.CoreV1().Secrets(ns).Get(ctx, "opaque", getOpts)
	if err != nil {
		t.Fatal(err)
	}
	s.Data["password"] = []byte("changed")
	if _, err := c.CoreV1().Secrets(ns).Update(ctx, s, updateOpts); err != nil {
		t.Fatal(err)
	}
	barrier("tls-2")
	if err := c.CoreV1().Secrets(ns).Delete(ctx, "opaque", deleteOpts); err != nil {
		t.Fatal(err)
	}
	barrier("tls-3")
}
