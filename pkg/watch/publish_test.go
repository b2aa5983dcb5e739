package watch_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/test/testkit/freeport"
)

// kindCase creates, updates and deletes one object of one kind.
type kindCase struct {
	kind                   events.Kind
	name                   string
	create, update, delete func(ctx context.Context) error
}

var (
	createOpts = metav1.CreateOptions{}
	updateOpts = metav1.UpdateOptions{}
	getOpts    = metav1.GetOptions{}
	deleteOpts = metav1.DeleteOptions{}
)

// everyKind has one case per published kind, each on a fresh object.
func everyKind(t *testing.T, e *env) []kindCase {
	c, ns := e.client, e.ns
	class := "class-" + ns
	t.Cleanup(func() { _ = c.NetworkingV1().IngressClasses().Delete(context.Background(), class, deleteOpts) })
	return []kindCase{
		{kind: events.KindService, name: "web",
			create: func(ctx context.Context) error {
				_, err := c.CoreV1().Services(ns).Create(ctx, service(ns, "web"), createOpts)
				return err
			},
			update: func(ctx context.Context) error {
				s, err := c.CoreV1().Services(ns).Get(ctx, "web", getOpts)
				if err == nil {
					s.Spec.Ports[0].Port = 8080
					_, err = c.CoreV1().Services(ns).Update(ctx, s, updateOpts)
				}
				return err
			},
			delete: func(ctx context.Context) error { return c.CoreV1().Services(ns).Delete(ctx, "web", deleteOpts) }},
		{kind: events.KindEndpointSlice, name: "web-1",
			create: func(ctx context.Context) error {
				_, err := c.DiscoveryV1().EndpointSlices(ns).Create(ctx, endpointSlice(ns, "web-1", "web", "198.18.0.1"), createOpts)
				return err
			},
			update: func(ctx context.Context) error {
				s, err := c.DiscoveryV1().EndpointSlices(ns).Get(ctx, "web-1", getOpts)
				if err == nil {
					s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{"198.18.0.2"}})
					_, err = c.DiscoveryV1().EndpointSlices(ns).Update(ctx, s, updateOpts)
				}
				return err
			},
			delete: func(ctx context.Context) error {
				return c.DiscoveryV1().EndpointSlices(ns).Delete(ctx, "web-1", deleteOpts)
			}},
		{kind: events.KindSecret, name: "tls",
			create: func(ctx context.Context) error {
				_, err := c.CoreV1().Secrets(ns).Create(ctx, tlsSecret(ns, "tls"), createOpts)
				return err
			},
			update: func(ctx context.Context) error {
				s, err := c.CoreV1().Secrets(ns).Get(ctx, "tls", getOpts)
				if err == nil {
					s.Data[corev1.TLSCertKey] = []byte("renewed")
					_, err = c.CoreV1().Secrets(ns).Update(ctx, s, updateOpts)
				}
				return err
			},
			delete: func(ctx context.Context) error { return c.CoreV1().Secrets(ns).Delete(ctx, "tls", deleteOpts) }},
		{kind: events.KindConfigMap, name: "ingress-sync",
			create: func(ctx context.Context) error {
				_, err := c.CoreV1().ConfigMaps(ns).Create(ctx, configMap(ns, "ingress-sync", map[string]string{"proxy-body-size": "1m"}), createOpts)
				return err
			},
			update: func(ctx context.Context) error {
				m, err := c.CoreV1().ConfigMaps(ns).Get(ctx, "ingress-sync", getOpts)
				if err == nil {
					m.Data["proxy-body-size"] = "8m"
					_, err = c.CoreV1().ConfigMaps(ns).Update(ctx, m, updateOpts)
				}
				return err
			},
			delete: func(ctx context.Context) error {
				return c.CoreV1().ConfigMaps(ns).Delete(ctx, "ingress-sync", deleteOpts)
			}},
		{kind: events.KindIngressClass, name: class,
			create: func(ctx context.Context) error {
				_, err := c.NetworkingV1().IngressClasses().Create(ctx, ingressClass(class, e.controller()), createOpts)
				return err
			},
			update: func(ctx context.Context) error {
				ic, err := c.NetworkingV1().IngressClasses().Get(ctx, class, getOpts)
				if err == nil {
					ic.Annotations = map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}
					_, err = c.NetworkingV1().IngressClasses().Update(ctx, ic, updateOpts)
				}
				return err
			},
			delete: func(ctx context.Context) error {
				return c.NetworkingV1().IngressClasses().Delete(ctx, class, deleteOpts)
			}},
		{kind: events.KindIngress, name: "web",
			create: func(ctx context.Context) error {
				_, err := c.NetworkingV1().Ingresses(ns).Create(ctx, newIngress(ns, "web", class, "web"), createOpts)
				return err
			},
			update: func(ctx context.Context) error {
				i, err := c.NetworkingV1().Ingresses(ns).Get(ctx, "web", getOpts)
				if err == nil {
					i.Spec.Rules[0].Host = "www.example.com"
					_, err = c.NetworkingV1().Ingresses(ns).Update(ctx, i, updateOpts)
				}
				return err
			},
			delete: func(ctx context.Context) error { return c.NetworkingV1().Ingresses(ns).Delete(ctx, "web", deleteOpts) }},
	}
}

// TestPublishesEveryKind creates, updates and deletes one object of each
// kind and reads each change back from the stream.
func TestPublishesEveryKind(t *testing.T) {
	e := newEnv(t)
	cfg := e.config("watcher-a")
	cfg.MetricsAddr = freeAddr(t)
	w := start(t, cfg)
	for _, kc := range everyKind(t, e) {
		t.Run(string(kc.kind), func(t *testing.T) {
			subject := e.subject(kc.kind, kc.name)
			ctx := t.Context()
			if err := kc.create(ctx); err != nil {
				t.Fatalf("create: %v", err)
			}
			created := e.waitMessage(t, subject, events.OpCreate)
			checkMessage(t, created, kc, events.OpCreate, w.id)
			if err := kc.update(ctx); err != nil {
				t.Fatalf("update: %v", err)
			}
			updated := e.waitMessage(t, subject, events.OpUpdate)
			checkMessage(t, updated, kc, events.OpUpdate, w.id)
			if updated.Event.UID != created.Event.UID || updated.Event.ResourceVersion == created.Event.ResourceVersion {
				t.Errorf("update %s does not follow create %s", updated, created)
			}
			if err := kc.delete(ctx); err != nil {
				t.Fatalf("delete: %v", err)
			}
			deleted := e.waitMessage(t, subject, events.OpDelete)
			checkMessage(t, deleted, kc, events.OpDelete, w.id)
			if deleted.Event.UID != created.Event.UID {
				t.Errorf("delete %s has another UID than create %s", deleted, created)
			}
			if got := len(on(e.messages(t), subject)); got != 3 {
				t.Errorf("%d messages on %s, want create, update, delete", got, subject)
			}
			for _, op := range []events.Op{events.OpCreate, events.OpUpdate, events.OpDelete} {
				if n := w.metric(t, "ingress_sync_watcher_events_published_total", "kind", string(kc.kind), "op", string(op)); n < 1 {
					t.Errorf("events_published_total{kind=%s,op=%s} = %v", kc.kind, op, n)
				}
			}
		})
	}
	t.Run("probes", func(t *testing.T) { checkProbes(t, cfg.MetricsAddr) })
}

// checkMessage checks the headers and envelope of a message.
func checkMessage(t *testing.T, m message, kc kindCase, op events.Op, watcherID string) {
	t.Helper()
	ev := m.Event
	if ev.Op != op || ev.Kind != kc.kind || ev.Name != kc.name || ev.WatcherID != watcherID ||
		ev.SchemaVersion != events.SchemaVersion || ev.UID == "" || ev.ResourceVersion == "" || ev.ObservedAt.IsZero() {
		t.Errorf("envelope %+v", ev)
	}
	wantHeaders := map[string]string{
		events.HeaderOp: string(op), events.HeaderKind: string(kc.kind), events.HeaderName: kc.name,
		events.HeaderNamespace: ev.Namespace, events.HeaderUID: ev.UID, events.HeaderResourceVersion: ev.ResourceVersion,
		events.HeaderContentType: events.ContentType, "Nats-Msg-Id": events.MsgID(ev),
	}
	for k, want := range wantHeaders {
		if got := m.Header.Get(k); got != want {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	// Every message carries the object, a delete its last state.
	if ev.Object == nil || events.KindOf(ev.Object) != kc.kind {
		t.Fatalf("%s carries %T, want a %s", m, ev.Object, kc.kind)
	}
	if s, ok := ev.Object.(*corev1.Secret); ok {
		if _, extra := s.Data["extra"]; extra || len(s.Data[corev1.TLSPrivateKeyKey]) == 0 {
			t.Errorf("secret not trimmed to its TLS keys: %v", keys(s.Data))
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// checkProbes checks /healthz, /readyz and /metrics of a running leader.
func checkProbes(t *testing.T, addr string) {
	for path, want := range map[string]string{
		"/healthz": "ok",
		"/readyz":  "ok",
		"/metrics": "ingress_sync_watcher_leader 1",
	} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("GET %s = %d, body without %q:\n%.2000s", path, resp.StatusCode, want, body)
		}
	}
}

// freeAddr is a free 127.0.0.1 address for a server the test starts, that
// no other process takes meanwhile (freeport).
func freeAddr(t *testing.T) string {
	ports, err := freeport.Ports(1)
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
}
