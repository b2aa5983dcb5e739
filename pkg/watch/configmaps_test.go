package watch_test

import (
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// TestOnlyReferencedConfigMapsArePublished: besides the ConfigMaps named by
// flags, a ConfigMap reaches the stream only while an Ingress's
// custom-headers or the controller ConfigMap's proxy-set-headers or
// add-headers names it; losing the last reference publishes its delete,
// and a ConfigMap nothing names (or one of another namespace that an
// Ingress names) is never published.
func TestOnlyReferencedConfigMapsArePublished(t *testing.T) {
	e := newEnv(t)
	ctx, c, ns := t.Context(), e.client, e.ns
	cfg := e.config("watcher-a")
	e.create(t, configMap(ns, "lonely", map[string]string{"X-A": "1"}))
	e.create(t, configMap(ns, "custom", map[string]string{"X-Custom": "42"}))
	e.create(t, configMap(ns, "req", map[string]string{"X-Req": "1"}))
	e.create(t, configMap(ns, "ingress-sync", map[string]string{"proxy-set-headers": ns + "/req"}))
	start(t, cfg)

	// The controller ConfigMap's reference publishes req.
	e.waitMessage(t, e.subject(events.KindConfigMap, "ingress-sync"), events.OpCreate)
	e.waitMessage(t, e.subject(events.KindConfigMap, "req"), events.OpCreate)

	// An Ingress's custom-headers publishes custom; one naming a ConfigMap
	// of another namespace publishes nothing.
	ing := newIngress(ns, "web", "other", "svc")
	ing.Annotations = map[string]string{"nginx.ingress.kubernetes.io/custom-headers": ns + "/custom"}
	e.create(t, ing)
	other := newIngress(ns, "other", "other", "svc")
	other.Annotations = map[string]string{"nginx.ingress.kubernetes.io/custom-headers": "kube-system/lonely"}
	e.create(t, other)
	e.waitMessage(t, e.subject(events.KindConfigMap, "custom"), events.OpCreate)
	e.waitMessage(t, e.subject(events.KindIngress, "other"), events.OpCreate)

	// A change of a referenced ConfigMap is published.
	cm, err := c.CoreV1().ConfigMaps(ns).Get(ctx, "custom", getOpts)
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["X-Custom"] = "43"
	if _, err := c.CoreV1().ConfigMaps(ns).Update(ctx, cm, updateOpts); err != nil {
		t.Fatal(err)
	}
	e.waitMessage(t, e.subject(events.KindConfigMap, "custom"), events.OpUpdate)

	// The references go: the deletes are published.
	cur, err := c.NetworkingV1().Ingresses(ns).Get(ctx, "web", getOpts)
	if err != nil {
		t.Fatal(err)
	}
	cur.Annotations = nil
	if _, err := c.NetworkingV1().Ingresses(ns).Update(ctx, cur, updateOpts); err != nil {
		t.Fatal(err)
	}
	e.waitMessage(t, e.subject(events.KindConfigMap, "custom"), events.OpDelete)
	ctrl, err := c.CoreV1().ConfigMaps(ns).Get(ctx, "ingress-sync", getOpts)
	if err != nil {
		t.Fatal(err)
	}
	ctrl.Data = map[string]string{"add-headers": ns + "/custom"}
	if _, err := c.CoreV1().ConfigMaps(ns).Update(ctx, ctrl, updateOpts); err != nil {
		t.Fatal(err)
	}
	e.waitMessage(t, e.subject(events.KindConfigMap, "req"), events.OpDelete)
	// add-headers now names custom: it is published again.
	eventually(t, "custom published again", func() bool {
		msgs := on(e.messages(t), e.subject(events.KindConfigMap, "custom"))
		return len(msgs) > 0 && msgs[len(msgs)-1].Event.Op == events.OpCreate
	})
	if msgs := on(e.messages(t), e.subject(events.KindConfigMap, "lonely")); len(msgs) > 0 {
		t.Fatalf("a ConfigMap nothing names was published: %v", msgs)
	}

}

// TestAuthProxySetHeadersConfigMapIsPublished: an Ingress's
// auth-proxy-set-headers ("name" in its namespace) publishes that
// ConfigMap while it names it; one of another namespace is not published.
func TestAuthProxySetHeadersConfigMapIsPublished(t *testing.T) {
	e := newEnv(t)
	ctx, c, ns := t.Context(), e.client, e.ns
	e.create(t, configMap(ns, "auth-headers", map[string]string{"X-Auth-Extra": "1"}))
	e.create(t, configMap(ns, "lonely", map[string]string{"X-A": "1"}))
	start(t, e.config("watcher-a"))

	ing := newIngress(ns, "web", "other", "svc")
	ing.Annotations = map[string]string{"nginx.ingress.kubernetes.io/auth-proxy-set-headers": "auth-headers"}
	e.create(t, ing)
	other := newIngress(ns, "other", "other", "svc")
	other.Annotations = map[string]string{"nginx.ingress.kubernetes.io/auth-proxy-set-headers": "kube-system/lonely"}
	e.create(t, other)
	e.waitMessage(t, e.subject(events.KindConfigMap, "auth-headers"), events.OpCreate)
	e.waitMessage(t, e.subject(events.KindIngress, "other"), events.OpCreate)

	cur, err := c.NetworkingV1().Ingresses(ns).Get(ctx, "web", getOpts)
	if err != nil {
		t.Fatal(err)
	}
	cur.Annotations = nil
	if _, err := c.NetworkingV1().Ingresses(ns).Update(ctx, cur, updateOpts); err != nil {
		t.Fatal(err)
	}
	e.waitMessage(t, e.subject(events.KindConfigMap, "auth-headers"), events.OpDelete)
	if msgs := on(e.messages(t), e.subject(events.KindConfigMap, "lonely")); len(msgs) > 0 {
		t.Fatalf("a ConfigMap of another namespace's reference was published: %v", msgs)
	}
}
