package admission

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/ingress"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	admissionv1 "k8s.io/api/admission/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

// BenchmarkServeHTTP is one review of a typical Ingress with a few
// annotations, decoded, translated, built alone and answered.
func BenchmarkServeHTTP(b *testing.B) {
	ing := newIngress("shop.example.com", "/api/(v[12])/.*", map[string]string{prefix + "use-regex": "true",
		prefix + "proxy-read-timeout": "120", prefix + "proxy-body-size": "8m", prefix + "whitelist-source-range": "10.0.0.0/8"})
	h := NewHandler(Options{Logger: quiet})
	body := reviewOf(b, "CREATE", ing)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body)))
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}

// BenchmarkReview10k reviews an Ingress with 10,000 Ingresses in the
// webhook's Cache (informers on a fake clientset, the host index of the
// watcher's webhook), and reports the p99 of the reviews besides ns/op:
//   - hosts: 1,000 hosts of 10 Ingresses each; the Ingress reviewed shares
//     a host and one path with one of them (a conflict) or not (allowed);
//   - default-server: the 10,000 Ingresses have no host, 100 of them set
//     use-regex, so each review builds beside those 100 and the one with
//     the same path.
func BenchmarkReview10k(b *testing.B) {
	for _, sc := range []struct {
		name    string
		host    func(i int) string
		regex   func(i int) bool
		review  *networkingv1.Ingress
		allowed bool
	}{
		{name: "hosts/conflict", host: func(i int) string { return fmt.Sprintf("h%d.example.com", i%1000) }, regex: func(int) bool { return false },
			review: named(newIngress("h7.example.com", "/p7", nil), "bench", "new", 0)},
		{name: "hosts/allowed", host: func(i int) string { return fmt.Sprintf("h%d.example.com", i%1000) }, regex: func(int) bool { return false },
			review: named(newIngress("h7.example.com", "/other", nil), "bench", "new", 0), allowed: true},
		{name: "default-server/conflict", host: func(int) string { return "" }, regex: func(i int) bool { return i%100 == 1 },
			review: named(newIngress("", "/p7", nil), "bench", "new", 0)},
	} {
		b.Run(sc.name, func(b *testing.B) {
			c := benchCache(b, sc.host, sc.regex)
			classes := intent.Classes{Controller: ingress.DefaultControllerClass, Class: ingress.DefaultIngressClass}
			h := NewHandler(Options{Logger: quiet, Classes: classes, IngressClasses: c.IngressClasses, Neighbours: c.Neighbours})
			req := &admissionv1.AdmissionRequest{UID: "u", Kind: ingressGVK, Operation: admissionv1.Create,
				Namespace: "bench", Name: "new", Object: runtime.RawExtension{Raw: mustJSON(b, sc.review)}}
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				resp := h.Review(req)
				took = append(took, time.Since(start))
				if resp.Allowed != sc.allowed {
					b.Fatalf("allowed = %v (%+v), want %v", resp.Allowed, resp.Result, sc.allowed)
				}
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}

// benchCache is a started Cache holding 10,000 Ingresses of class nginx in
// namespace bench, Ingress i on host(i) with the path /p<i>.
func benchCache(b *testing.B, host func(int) string, regex func(int) bool) *Cache {
	b.Helper()
	objs := make([]runtime.Object, 0, 10000)
	for i := range 10000 {
		var ann map[string]string
		if regex(i) {
			ann = map[string]string{prefix + "use-regex": "true"}
		}
		ing := named(newIngress(host(i), fmt.Sprintf("/p%d", i), ann), "bench", fmt.Sprintf("ing-%d", i), int64(1000+i))
		objs = append(objs, ing)
	}
	c, err := NewCache(fake.NewClientset(objs...), "")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(func() { cancel(); c.Shutdown() })
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	return c
}
