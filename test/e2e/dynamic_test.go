package e2e

import (
	"context"
	"crypto/x509"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// TestScaleEndpointsWithoutReload: endpoints scale up and down under a
// concurrent request loop: traffic moves, nothing fails, nothing reloads.
func TestScaleEndpointsWithoutReload(t *testing.T) {
	ns := setup(t)
	b1 := service(t, ns, "web")
	b2, b3 := backend(t, "web-2"), backend(t, "web-3")
	applyIngress(t, ours(ns, "scale", fixtures.Rule(ns+".example.com", fixtures.Prefix("/", "web", 80))))
	url := "http://" + ns + ".example.com/"
	routes(t, nil, map[string]string{url: "web"})
	converged(t)
	before := snapshot(t)

	l := startLoop(t, url, "web", "web-2", "web-3")
	setEndpoints(t, ns, "web", b1, b2, b3)
	eventually(t, waitTimeout, "traffic reaches new endpoints", func() error {
		if !l.saw("web-2") || !l.saw("web-3") {
			return fmt.Errorf("not yet seen web-2 and web-3")
		}
		return nil
	})
	setEndpoints(t, ns, "web", b3)
	converged(t)
	time.Sleep(300 * time.Millisecond) // let the loop run on the scaled-down set
	l.finish(t)
	before.unchanged(t, "an endpoint change")
	if got := b3.Requests(); got == 0 {
		t.Fatal("web-3 answered nothing")
	}
}

// TestIngressChangesNeverReload: a burst of Ingress changes is served by
// both syncers without any reload, and both end on the same checksum.
func TestIngressChangesNeverReload(t *testing.T) {
	ns := setup(t)
	service(t, ns, "web")
	service(t, ns, "api")
	h := ns + ".example.com"
	applyIngress(t, ours(ns, "burst", fixtures.Rule(h, pathsUpTo(nil)...)))
	routes(t, nil, map[string]string{"http://" + h + "/a": "web"})
	converged(t)
	// The watcher's status write comes once the syncers serve the
	// Ingress: after it, nothing but the burst writes the Ingress.
	waitForStatus(t, ns, "burst")
	before := snapshot(t)
	// The burst: five updates back to back, each on the resourceVersion the
	// previous one returned (one API call each).
	api := w.Kube.NetworkingV1().Ingresses(ns)
	cur, err := api.Get(t.Context(), "burst", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"/a", "/b", "/c", "/d", "/e"}
	for i := range paths {
		next := clean(ours(ns, "burst", fixtures.Rule(h, pathsUpTo(paths[:i+1])...)))
		next.ResourceVersion = cur.ResourceVersion
		if cur, err = api.Update(t.Context(), next, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{"http://" + h + "/": "web", "http://" + h + "/f": "web"}
	for _, p := range paths {
		want["http://"+h+p] = "api"
	}
	routes(t, nil, want)
	converged(t)
	before.unchanged(t, "an Ingress change")
}

// pathsUpTo is a catch-all Prefix to web and an Exact route to api for
// each of paths.
func pathsUpTo(paths []string) []networkingv1.HTTPIngressPath {
	out := []networkingv1.HTTPIngressPath{fixtures.Prefix("/", "web", 80)}
	for _, p := range paths {
		out = append(out, fixtures.Exact(p, "api", 80))
	}
	return out
}

// TestHostChurnNeverReloads: one burst that adds 20 hosts and removes 10
// is served by both syncers with no reload and the same nginx workers.
func TestHostChurnNeverReloads(t *testing.T) {
	ns := setup(t)
	service(t, ns, "web")
	name := func(i int) string { return fmt.Sprintf("h%d", i) }
	url := func(i int) string { return fmt.Sprintf("http://h%d-%s.example.com/", i, ns) }
	addHost := func(i int) {
		applyIngress(t, ours(ns, name(i), fixtures.Rule(fmt.Sprintf("h%d-%s.example.com", i, ns), fixtures.Prefix("/", "web", 80))))
	}
	want := map[string]string{}
	for i := range 10 {
		addHost(i)
		want[url(i)] = "web"
	}
	routes(t, nil, want)
	converged(t)
	before := snapshot(t)

	for i := 10; i < 30; i++ {
		addHost(i)
		want[url(i)] = "web"
	}
	for i := range 10 {
		if err := w.Kube.NetworkingV1().Ingresses(ns).Delete(t.Context(), name(i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		want[url(i)] = ""
	}
	routes(t, nil, want)
	converged(t)
	before.unchanged(t, "adding and removing hosts")
}

// TestGlobalSettingReloadsOncePerBurst: a burst of controller ConfigMap
// changes (global settings, in nginx.conf) is one confirmed reload on each
// syncer, which keeps serving every route; removing the ConfigMap is one
// more, back to the original nginx.conf.
func TestGlobalSettingReloadsOncePerBurst(t *testing.T) {
	ns := setup(t)
	service(t, ns, "web")
	url := "http://" + ns + ".example.com/"
	applyIngress(t, ours(ns, "global", fixtures.Rule(ns+".example.com", fixtures.Prefix("/", "web", 80))))
	routes(t, nil, map[string]string{url: "web"})
	converged(t)
	original := runsConf(t, "")
	before := snapshot(t)

	api := w.Kube.CoreV1().ConfigMaps(configMapNamespace)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: configMapNamespace, Name: configMapName}}
	t.Cleanup(func() {
		err := api.Delete(context.Background(), configMapName, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete ConfigMap: %v", err)
		}
	})
	// The burst: a create and four updates back to back, one API call each.
	var err error
	for i, v := range []string{"61", "62", "63", "64", "65"} {
		cm.Data = map[string]string{"client-body-timeout": v} // an nginx directive
		if i == 0 {
			cm, err = api.Create(t.Context(), cm, metav1.CreateOptions{})
		} else {
			cm, err = api.Update(t.Context(), cm, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Fatalf("write ConfigMap: %v", err)
		}
	}
	runsConf(t, "client_body_timeout 65s;")
	converged(t)
	reloadedOnce(t, before)
	routes(t, nil, map[string]string{url: "web"})

	before = snapshot(t)
	if err := api.Delete(t.Context(), configMapName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if back := runsConf(t, "client_body_timeout 60s;"); !slices.Equal(back, original) {
		t.Fatalf("without the ConfigMap nginx runs %v, want the original %v", back, original)
	}
	converged(t)
	reloadedOnce(t, before)
	routes(t, nil, map[string]string{url: "web"})
}

// runsConf waits until the nginx.conf of every syncer holds line and its
// workers report running it, and returns the checksums they report.
func runsConf(t *testing.T, line string) []string {
	t.Helper()
	sums := make([]string, len(w.Syncers))
	for i, s := range w.Syncers {
		eventually(t, waitTimeout, s.Name+" runs an nginx.conf with "+line, func() error {
			text, sum, err := s.NginxConf()
			if err != nil {
				return err
			}
			if !strings.Contains(text, line) {
				return fmt.Errorf("nginx.conf has no %q", line)
			}
			v, err := s.NginxVersion(t.Context())
			if err == nil && v.Checksum != sum {
				err = fmt.Errorf("a worker runs %s, nginx.conf is %s", v.Checksum, sum)
			}
			sums[i] = sum
			return err
		})
	}
	return sums
}

// reloadedOnce fails the test unless every syncer counted exactly one
// reload since p and runs new nginx workers.
func reloadedOnce(t *testing.T, p plane) {
	t.Helper()
	now := reloads(t)
	for i, s := range w.Syncers {
		if now[i] != p.reloads[i]+1 {
			t.Errorf("%s: reloads went from %d to %d for one burst, want one more", s.Name, p.reloads[i], now[i])
		}
		np, err := s.Nginx()
		if err != nil {
			t.Fatal(err)
		}
		if np.Master != p.procs[i].Master || slices.Equal(np.Children, p.procs[i].Children) {
			t.Errorf("%s: nginx went from %+v to %+v, want the same master with new workers", s.Name, p.procs[i], np)
		}
	}
}

// TestTLSAndSecretRotation: SNI serves the Secret's certificate, verified
// against its CA; HTTP redirects to HTTPS; a rotation applies without reload.
func TestTLSAndSecretRotation(t *testing.T) {
	ns := setup(t)
	service(t, ns, "web")
	h := "secure-" + ns + ".example.com"
	ca, err := certs.Generate(certs.Options{CommonName: "e2e CA", IsCA: true})
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	leaf1 := leaf(t, ca, h)
	applySecret(t, fixtures.TLSSecret(ns, "tls", leaf1))
	applyIngress(t, ours(ns, "secure", fixtures.TLS("tls", h), fixtures.Rule(h, fixtures.Prefix("/", "web", 80))))
	routes(t, roots, map[string]string{"https://" + h + "/": "web"})
	for i := range w.Syncers {
		eventually(t, waitTimeout, "redirect", func() error {
			r, err := echo.Get(t.Context(), w.Syncers[i].Client(nil), "http://"+h+"/x")
			if err != nil {
				return err
			}
			// As ingress-nginx: no port (nginx's is behind a load balancer).
			want := fmt.Sprintf("https://%s/x", h)
			if r.Status != 308 || r.Header.Get("Location") != want {
				return fmt.Errorf("status %d location %q, want 308 to %s", r.Status, r.Header.Get("Location"), want)
			}
			return nil
		})
	}
	converged(t)
	before := snapshot(t)

	leaf2 := leaf(t, ca, h)
	applySecret(t, fixtures.TLSSecret(ns, "tls", leaf2))
	for i := range w.Syncers {
		eventually(t, waitTimeout, "rotated certificate served", func() error {
			r, err := echo.Get(t.Context(), w.Syncers[i].Client(roots), "https://"+h+"/")
			if err != nil {
				return err
			}
			if got := r.TLS.PeerCertificates[0].SerialNumber; got.Cmp(leaf2.Cert.SerialNumber) != 0 {
				return fmt.Errorf("syncer-%d serves serial %v, want %v", i, got, leaf2.Cert.SerialNumber)
			}
			return nil
		})
	}
	converged(t)
	before.unchanged(t, "a certificate rotation")
}

func leaf(t *testing.T, ca *certs.Pair, host string) *certs.Pair {
	t.Helper()
	p, err := certs.Generate(certs.Options{Hosts: []string{host}, Parent: ca.Cert, ParentKey: ca.Key})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
