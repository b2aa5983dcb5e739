package replay

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// universe makes random events over a small set of objects that reference
// each other in every way Build reads: Ingresses (classes, hosts, paths,
// ports by number and name, TLS, default backends, balancing annotations),
// Services (ports, ExternalName), EndpointSlices (endpoints, ports, and the
// Service label, which may move), Secrets, ConfigMaps and IngressClasses.
type universe struct {
	rnd     *rand.Rand
	secret  *corev1.Secret
	present map[string]bool
}

var (
	namespaces = []string{"a", "b"}
	services   = []string{"svc0", "svc1", "svc2"}
	hosts      = []string{"x.example.com", "y.example.com", "", "shop.example.com"}
	testAddrs  = []string{"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"}
)

func (u *universe) pick(list []string) string { return list[u.rnd.IntN(len(list))] }

// event returns a random event: an upsert (create or update) or a delete.
func (u *universe) event() events.Event {
	obj := u.object()
	m := obj.(metav1.Object)
	kind := events.KindOf(obj)
	key := fmt.Sprintf("%s/%s/%s", kind, m.GetNamespace(), m.GetName())
	op := events.OpUpdate
	switch {
	case u.present[key] && u.rnd.IntN(6) == 0:
		op = events.OpDelete
		delete(u.present, key)
	case !u.present[key]:
		op = events.OpCreate
		u.present[key] = true
	}
	return events.Event{Op: op, Kind: kind, Namespace: m.GetNamespace(), Name: m.GetName(), Object: obj}
}

func (u *universe) object() runtime.Object {
	ns := u.pick(namespaces)
	switch n := u.rnd.IntN(20); {
	case n < 9:
		return u.slice(ns)
	case n < 12:
		return u.service(ns)
	case n < 16:
		return u.ingress(ns)
	case n < 17:
		s := u.secret.DeepCopy()
		s.Namespace, s.Name = ns, u.pick([]string{"tls0", "tls1"})
		if u.rnd.IntN(4) == 0 {
			s.Type = corev1.SecretTypeOpaque
		}
		if u.rnd.IntN(2) == 0 { // an htpasswd for auth-secret (SHA1 of "a" or "b")
			s.Data["auth"] = []byte("foo:" + u.pick([]string{"{SHA}hvfkN/qlp/zhXR3cuerq6jd2Z7g=", "{SHA}6dcd4ce23d88e2ee9568ba546c007c63d9131c1b"}) + "\n")
		}
		return s
	case n < 18:
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: u.pick([]string{"ingress-sync", "other"})},
			Data: map[string]string{"ssl-redirect": u.pick([]string{"true", "false"}), "proxy-read-timeout": u.pick([]string{"30", "60"}),
				"X-Test": u.pick([]string{"a", "b"})}} // a header of custom-headers and auth-proxy-set-headers
		return cm
	}
	return fixtures.IngressClass(u.pick([]string{"nginx", "other"}), u.pick([]string{testController, "example.com/other"}), u.rnd.IntN(3) == 0)
}

func (u *universe) slice(ns string) runtime.Object {
	var addrs []string
	for _, a := range testAddrs {
		if u.rnd.IntN(2) == 0 {
			addrs = append(addrs, a)
		}
	}
	s := fixtures.EndpointSlice(ns, fmt.Sprintf("slice%d", u.rnd.IntN(4)), u.pick(services), int32(8080+u.rnd.IntN(2)), addrs...)
	if u.rnd.IntN(5) == 0 {
		name := "http-81"
		s.Ports[0].Name = &name
	}
	if u.rnd.IntN(8) == 0 {
		ready := false
		for i := range s.Endpoints {
			s.Endpoints[i].Conditions.Ready = &ready
		}
	}
	return s
}

func (u *universe) service(ns string) runtime.Object {
	svc := fixtures.Service(ns, u.pick(services), 80, 81)
	if u.rnd.IntN(3) == 0 {
		svc.Spec.Ports = svc.Spec.Ports[:1]
	}
	if u.rnd.IntN(10) == 0 {
		svc.Spec.Type = corev1.ServiceTypeExternalName
	}
	return svc
}

func (u *universe) ingress(ns string) runtime.Object {
	path := func() networkingv1.HTTPIngressPath {
		p := fixtures.Prefix(u.pick([]string{"/", "/api"}), u.pick(services), int32(80+u.rnd.IntN(2)))
		if u.rnd.IntN(4) == 0 {
			p.Backend = *fixtures.NamedBackend(p.Backend.Service.Name, u.pick([]string{"http", "http-81"}))
		}
		return p
	}
	opts := []fixtures.IngressOption{fixtures.Rule(u.pick(hosts), path(), path()), fixtures.Created(fixtures.Epoch.Add(
		time.Duration(u.rnd.IntN(3)) * time.Minute)), fixtures.Class(u.pick([]string{"nginx", "other", ""}))}
	if u.rnd.IntN(3) == 0 {
		opts = append(opts, fixtures.TLS(u.pick([]string{"tls0", "tls1", ""}), u.pick(hosts[:2])))
	}
	if u.rnd.IntN(4) == 0 {
		opts = append(opts, fixtures.DefaultBackend(u.pick(services), 80))
	}
	if u.rnd.IntN(3) == 0 {
		opts = append(opts, fixtures.Annotation(ingress.AnnotationPrefix+"load-balance", u.pick([]string{"ewma", "round_robin"})))
	}
	// The annotations that name a Secret or a ConfigMap.
	if u.rnd.IntN(4) == 0 {
		opts = append(opts, fixtures.Annotation(ingress.AnnotationPrefix+"auth-type", "basic"),
			fixtures.Annotation(ingress.AnnotationPrefix+"auth-secret", u.pick([]string{"tls0", "tls1"})))
	}
	if u.rnd.IntN(4) == 0 {
		opts = append(opts, fixtures.Annotation(ingress.AnnotationPrefix+"auth-tls-secret", u.pick([]string{"tls0", "tls1"})))
	}
	if u.rnd.IntN(4) == 0 {
		opts = append(opts, fixtures.Annotation(ingress.AnnotationPrefix+"proxy-ssl-secret", u.pick([]string{"tls0", "tls1"})))
	}
	if u.rnd.IntN(4) == 0 {
		opts = append(opts, fixtures.Annotation(ingress.AnnotationPrefix+"custom-headers", "other"))
	}
	if u.rnd.IntN(4) == 0 {
		opts = append(opts, fixtures.Annotation(ingress.AnnotationPrefix+"auth-url", "http://127.0.0.1:1/auth"),
			fixtures.Annotation(ingress.AnnotationPrefix+"auth-proxy-set-headers", "other"))
	}
	return fixtures.Ingress(ns, fmt.Sprintf("ing%d", u.rnd.IntN(3)), opts...)
}

// TestEngineMatchesFullBuild: after every step of thousands of random
// events, the engine's Configuration (with its shortcuts: skipped events,
// endpoints patched in) has the checksum of a full Build.
func TestEngineMatchesFullBuild(t *testing.T) {
	opts := testModelOptions()
	opts.ConfigMap, opts.DefaultBackendService, opts.DefaultSSLCertificate = "a/ingress-sync", "a/svc0", "a/tls0"
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			u := &universe{rnd: rand.New(rand.NewPCG(seed, 42)), secret: tlsSecret(t, "a", "tls0"), present: map[string]bool{}}
			e := newEngine(testBuilder(opts)())
			e.verify = true
			kinds := map[string]int{}
			for i := range 1500 {
				ev := u.event()
				ev.Sequence = uint64(i + 1)
				_, _, changed, err := e.step(ev)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if e.verifyErr != nil {
					t.Fatal(e.verifyErr)
				}
				if changed {
					kinds[string(ev.Kind)]++
				}
			}
			if kinds[string(events.KindEndpointSlice)] == 0 || kinds[string(events.KindIngress)] == 0 {
				t.Errorf("changes by kind %v: the random events did not exercise the endpoint path", kinds)
			}
		})
	}
}
