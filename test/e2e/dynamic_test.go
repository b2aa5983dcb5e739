package e2e

import (
	"crypto/x509"
	"fmt"
	"slices"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/internal/echo"
	"github.com/ingress-sync/ingress-sync/internal/fixtures"
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
	before := reloads(t)

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
	if after := reloads(t); !slices.Equal(before, after) {
		t.Fatalf("reloads went from %v to %v; endpoint changes must not reload", before, after)
	}
	if got := b3.Requests(); got == 0 {
		t.Fatal("web-3 answered nothing")
	}
}

// TestIngressChangeReloadsOncePerBurst: a burst of Ingress changes is one
// reload on each syncer, and both end on the same checksum.
func TestIngressChangeReloadsOncePerBurst(t *testing.T) {
	ns := setup(t)
	service(t, ns, "web")
	applyIngress(t, ours(ns, "burst", fixtures.Rule(ns+".example.com", fixtures.Prefix("/", "web", 80))))
	converged(t)
	before := reloads(t)
	// The burst: five updates back to back, each on the resourceVersion the
	// previous one returned (one API call each, well within the holdoff).
	api := w.Kube.NetworkingV1().Ingresses(ns)
	cur, err := api.Get(t.Context(), "burst", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"/a", "/b", "/c", "/d", "/e"}
	for i := range paths {
		next := clean(ours(ns, "burst", fixtures.Rule(ns+".example.com", pathsUpTo(paths[:i+1])...)))
		next.ResourceVersion = cur.ResourceVersion
		if cur, err = api.Update(t.Context(), next, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	converged(t)
	after := reloads(t)
	for i := range after {
		if after[i] != before[i]+1 {
			t.Fatalf("syncer-%d reloaded %d times for one burst, want 1", i, after[i]-before[i])
		}
	}
	routes(t, nil, map[string]string{"http://" + ns + ".example.com/e": "web"})
}

func pathsUpTo(paths []string) []networkingv1.HTTPIngressPath {
	out := make([]networkingv1.HTTPIngressPath, 0, len(paths))
	for _, p := range paths {
		out = append(out, fixtures.Exact(p, "web", 80))
	}
	return out
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
			want := fmt.Sprintf("https://%s:%d/x", h, w.Syncers[i].HTTPSPort)
			if r.Status != 308 || r.Header.Get("Location") != want {
				return fmt.Errorf("status %d location %q, want 308 to %s", r.Status, r.Header.Get("Location"), want)
			}
			return nil
		})
	}
	converged(t)
	before := reloads(t)

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
	if after := reloads(t); !slices.Equal(before, after) {
		t.Fatalf("reloads went from %v to %v; a certificate rotation must not reload", before, after)
	}
}

func leaf(t *testing.T, ca *certs.Pair, host string) *certs.Pair {
	t.Helper()
	p, err := certs.Generate(certs.Options{Hosts: []string{host}, Parent: ca.Cert, ParentKey: ca.Key})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
