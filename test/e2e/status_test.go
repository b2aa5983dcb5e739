package e2e

import (
	"bufio"
	"context"
	"crypto/x509"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// TestStatusWaitsForAStoppedSyncer: with syncer-1 stopped (SIGSTOP), a new
// TLS Ingress is served by syncer-0 but gets no status address; once
// syncer-1 runs again and applies it, the address appears, and a request
// sent through each syncer right then is answered by the Ingress's
// backend, with the Ingress's certificate.
func TestStatusWaitsForAStoppedSyncer(t *testing.T) {
	ns := setup(t)
	service(t, ns, "web")
	h := "gated-" + ns + ".example.com"
	ca, err := certs.Generate(certs.Options{CommonName: "e2e CA", IsCA: true})
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	cert := leaf(t, ca, h)
	applySecret(t, fixtures.TLSSecret(ns, "tls", cert))
	converged(t)

	stopped := w.Syncers[1]
	resume := pause(t, stopped)
	applyIngress(t, ours(ns, "gated", fixtures.TLS("tls", h), fixtures.Rule(h, fixtures.Prefix("/", "web", 80))))
	url := "https://" + h + "/"
	eventually(t, waitTimeout, "syncer-0 serves the Ingress", func() error { return served(t.Context(), 0, roots, url, cert) })
	if lb := statusOf(t, ns, "gated"); len(lb) > 0 {
		t.Fatalf("status %v written while %s has not applied the Ingress", lb, stopped.Name)
	}
	eventually(t, waitTimeout, "the watcher holds the address", func() error { return watcherWaits(1) })
	if lb := statusOf(t, ns, "gated"); len(lb) > 0 {
		t.Fatalf("status %v written while %s has not applied the Ingress", lb, stopped.Name)
	}

	resume()
	waitForStatus(t, ns, "gated")
	for i := range w.Syncers {
		if err := served(t.Context(), i, roots, url, cert); err != nil {
			t.Errorf("right after the status appeared: %v", err)
		}
	}
}

// TestStatusOnceTheServiceExists: an Ingress whose Service does not exist
// gets no address while both syncers report it not served; once the
// Service is created, the address appears, and a request sent through
// each syncer right then reaches the backend.
func TestStatusOnceTheServiceExists(t *testing.T) {
	ns := setup(t)
	h := "late-" + ns + ".example.com"
	applyIngress(t, ours(ns, "late", fixtures.Rule(h, fixtures.Prefix("/", "late", 80))))
	for _, s := range w.Syncers {
		eventually(t, waitTimeout, s.Name+" reports the Ingress not served", func() error {
			st, _ := w.Status(s.Name)
			if !slices.Contains(st.Unserved, events.UnservedIngress{Namespace: ns, Name: "late", Why: events.UnservedRoutes}) {
				return fmt.Errorf("unserved %+v", st.Unserved)
			}
			return nil
		})
	}
	if lb := statusOf(t, ns, "late"); len(lb) > 0 {
		t.Fatalf("status %v written on an Ingress without its Service", lb)
	}

	// The endpoints first, so that the route has them once the Service
	// makes it served.
	b := backend(t, "late")
	setEndpoints(t, ns, "late", b)
	createService(t, ns, "late")
	waitForStatus(t, ns, "late")
	for i := range w.Syncers {
		if err := reach(t.Context(), i, nil, "http://"+h+"/", hit{backend: "late"}); err != nil {
			t.Errorf("right after the status appeared: %v", err)
		}
	}
}

// served checks that url, through syncer i, is answered by the backend web
// with cert.
func served(ctx context.Context, i int, roots *x509.CertPool, url string, cert *certs.Pair) error {
	r, err := echo.Get(ctx, w.Syncers[i].Client(roots), url)
	switch {
	case err != nil:
		return fmt.Errorf("syncer-%d %s: %w", i, url, err)
	case r.Status != http.StatusOK || r.Reply.Backend != "web":
		return fmt.Errorf("syncer-%d %s: status %d from %q, want 200 from web", i, url, r.Status, r.Reply.Backend)
	case r.TLS == nil || r.TLS.PeerCertificates[0].SerialNumber.Cmp(cert.Cert.SerialNumber) != 0:
		return fmt.Errorf("syncer-%d %s: not the Ingress's certificate", i, url)
	}
	return nil
}

func statusOf(t *testing.T, ns, name string) []string {
	t.Helper()
	ing, err := w.Kube.NetworkingV1().Ingresses(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, lb := range ing.Status.LoadBalancer.Ingress {
		out = append(out, lb.IP+lb.Hostname)
	}
	return out
}

// waitForStatus polls the Ingress closely until its status address
// appears, so that what follows runs right after.
func waitForStatus(t *testing.T, ns, name string) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !slices.Equal(statusOf(t, ns, name), []string{statusAddress}) {
		if time.Now().After(deadline) {
			t.Fatalf("no status address on %s within %s", name, waitTimeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// watcherWaits checks that the watcher holds the address of at least n
// Ingresses (its ingress_sync_watcher_status_waiting_ingresses gauge).
func watcherWaits(n int) error {
	resp, err := http.Get(w.Watcher.MetricsURL())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	const name = "ingress_sync_watcher_status_waiting_ingresses "
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name); ok {
			got, err := strconv.ParseFloat(v, 64)
			if err != nil || got < float64(n) {
				return fmt.Errorf("%s%s, want >= %d", name, v, n)
			}
			return nil
		}
	}
	return fmt.Errorf("no %s in the watcher's metrics", strings.TrimSpace(name))
}
