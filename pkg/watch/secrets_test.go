package watch_test

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// TestOnlyReferencedSecretsArePublished: by default a TLS Secret reaches the
// stream only while an Ingress names it in spec.tls (or it is the default
// certificate): its first reference publishes it, losing the last one
// publishes its delete, and a Secret nobody names is never published.
func TestOnlyReferencedSecretsArePublished(t *testing.T) {
	e := newEnv(t)
	ctx, c, ns := t.Context(), e.client, e.ns
	cfg := e.config("watcher-a")
	cfg.PublishAllTLSSecrets = false
	cfg.DefaultSSLCertificate = ns + "/default-cert"
	e.create(t, tlsSecret(ns, "lonely"))
	e.create(t, tlsSecret(ns, "used"))
	e.create(t, tlsSecret(ns, "default-cert"))
	start(t, cfg)

	// The default certificate is published without any reference.
	e.waitMessage(t, e.subject(events.KindSecret, "default-cert"), events.OpCreate)
	ing := newIngress(ns, "web", "other", "svc")
	ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"web.example.com"}, SecretName: "used"}}
	e.create(t, ing)
	e.waitMessage(t, e.subject(events.KindSecret, "used"), events.OpCreate)
	e.waitMessage(t, e.subject(events.KindIngress, "web"), events.OpCreate)

	// The reference goes: the Secret's delete is published.
	cur, err := c.NetworkingV1().Ingresses(ns).Get(ctx, "web", getOpts)
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.TLS = nil
	if _, err := c.NetworkingV1().Ingresses(ns).Update(ctx, cur, updateOpts); err != nil {
		t.Fatal(err)
	}
	e.waitMessage(t, e.subject(events.KindSecret, "used"), events.OpDelete)
	if msgs := on(e.messages(t), e.subject(events.KindSecret, "lonely")); len(msgs) > 0 {
		t.Fatalf("a Secret no Ingress names was published: %v", msgs)
	}
}
