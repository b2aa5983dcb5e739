package watch_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/model"
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

	ing := ingress(ns, "web", "other", "svc")
	ing.Annotations = map[string]string{model.AnnotationPrefix + "auth-type": "basic", model.AnnotationPrefix + "auth-secret": "used"}
	e.create(t, ing)
	other := ingress(ns, "other", "other", "svc")
	other.Annotations = map[string]string{model.AnnotationPrefix + "auth-secret": "elsewhere/cross"}
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
