package watch_test

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// TestOnlyReferencedAuthSecretsArePublished: an Opaque Secret reaches the
// stream only while an Ingress of its namespace names it in auth-secret
// (whatever --publish-all-tls-secrets says), with all its data; one
// nobody names, or that another namespace's form names, never does.
func TestOnlyReferencedAuthSecretsArePublished(t *testing.T) {
	e := newEnv(t)
	ctx, c, ns := t.Context(), e.client, e.ns
	cfg := e.config("watcher-a") // PublishAllTLSSecrets: true
	e.create(t, opaqueSecret(ns, "lonely"))
	e.create(t, opaqueSecret(ns, "used"))
	e.create(t, opaqueSecret(ns, "cross"))
	start(t, cfg)

	ing := newIngress(ns, "web", "other", "svc")
	ing.Annotations = map[string]string{ingress.AnnotationPrefix + "auth-type": "basic", ingress.AnnotationPrefix + "auth-secret": "used"}
	e.create(t, ing)
	other := newIngress(ns, "other", "other", "svc")
	other.Annotations = map[string]string{ingress.AnnotationPrefix + "auth-secret": "elsewhere/cross"}
	e.create(t, other)
	m := e.waitMessage(t, e.subject(events.KindSecret, "used"), events.OpCreate)
	if s := m.Event.Object.(*corev1.Secret); string(s.Data["password"]) != "never published" {
		t.Errorf("published auth Secret lost its data: %v", s.Data)
	}
	e.waitMessage(t, e.subject(events.KindIngress, "other"), events.OpCreate)

	// The reference goes: the Secret's delete is published.
	cur, err := c.NetworkingV1().Ingresses(ns).Get(ctx, "web", getOpts)
	if err != nil {
		t.Fatal(err)
	}
	cur.Annotations = nil
	if _, err := c.NetworkingV1().Ingresses(ns).Update(ctx, cur, updateOpts); err != nil {
		t.Fatal(err)
	}
	e.waitMessage(t, e.subject(events.KindSecret, "used"), events.OpDelete)
	for _, name := range []string{"lonely", "cross"} {
		if msgs := on(e.messages(t), e.subject(events.KindSecret, name)); len(msgs) > 0 {
			t.Fatalf("an auth Secret no Ingress names was published: %v", msgs)
		}
	}
}

// TestSecretsNamedByTLSAnnotationsArePublished: auth-tls-secret (a client
// CA, usually an Opaque Secret) and proxy-ssl-secret (backend TLS, often a
// kubernetes.io/tls one) publish the Secret they name while an Ingress
// names it, even with --publish-all-tls-secrets=false; another TLS Secret
// stays unpublished.
func TestSecretsNamedByTLSAnnotationsArePublished(t *testing.T) {
	e := newEnv(t)
	ctx, c, ns := t.Context(), e.client, e.ns
	cfg := e.config("watcher-a")
	cfg.PublishAllTLSSecrets = false
	e.create(t, opaqueSecret(ns, "client-ca"))
	e.create(t, tlsSecret(ns, "backend-tls"))
	e.create(t, tlsSecret(ns, "lonely"))
	start(t, cfg)

	ing := newIngress(ns, "web", "other", "svc")
	ing.Annotations = map[string]string{
		ingress.AnnotationPrefix + "auth-tls-secret":  ns + "/client-ca",
		ingress.AnnotationPrefix + "proxy-ssl-secret": "backend-tls",
	}
	e.create(t, ing)
	e.waitMessage(t, e.subject(events.KindSecret, "client-ca"), events.OpCreate)
	e.waitMessage(t, e.subject(events.KindSecret, "backend-tls"), events.OpCreate)

	cur, err := c.NetworkingV1().Ingresses(ns).Get(ctx, "web", getOpts)
	if err != nil {
		t.Fatal(err)
	}
	delete(cur.Annotations, ingress.AnnotationPrefix+"proxy-ssl-secret")
	if _, err := c.NetworkingV1().Ingresses(ns).Update(ctx, cur, updateOpts); err != nil {
		t.Fatal(err)
	}
	e.waitMessage(t, e.subject(events.KindSecret, "backend-tls"), events.OpDelete)
	for _, m := range on(e.messages(t), e.subject(events.KindSecret, "client-ca")) {
		if m.Event.Op == events.OpDelete {
			t.Fatalf("the Secret auth-tls-secret still names was deleted: %v", m)
		}
	}
	if msgs := on(e.messages(t), e.subject(events.KindSecret, "lonely")); len(msgs) > 0 {
		t.Fatalf("a Secret no Ingress names was published: %v", msgs)
	}
}
