package e2e

import (
	"fmt"
	"net/http"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// answer is what one request through every syncer must get.
type answer struct {
	url     string
	header  []string // request header pairs
	status  int
	backend string // for 200
	path    string // what the backend saw, path and query
	headers map[string]string
}

// answers waits until every request gets its answer through every syncer.
func answers(t *testing.T, want []answer) {
	t.Helper()
	answersWith(t, func(i int) *http.Client { return w.Syncers[i].Client(nil) }, want)
}

// answersWith is answers through the client of syncer i that client
// returns (a Gateway listener's port: clientOn).
func answersWith(t *testing.T, client func(i int) *http.Client, want []answer) {
	t.Helper()
	for i := range w.Syncers {
		for _, a := range want {
			eventually(t, waitTimeout, a.url, func() error {
				r, err := echo.Get(t.Context(), client(i), a.url, a.header...)
				if err != nil {
					return err
				}
				if r.Status != a.status || r.Reply.Backend != a.backend || a.path != "" && r.Reply.URI() != a.path {
					return fmt.Errorf("syncer-%d %s: %d from %q, path %q; want %d from %q, %q",
						i, a.url, r.Status, r.Reply.Backend, r.Reply.URI(), a.status, a.backend, a.path)
				}
				for k, v := range a.headers {
					got := r.Header.Get(k)
					if r.Status == 200 && k == "X-Forwarded-Prefix" {
						got = r.Reply.Headers.Get(k) // a request header the backend saw
					}
					if got != v {
						return fmt.Errorf("syncer-%d %s: %s %q, want %q", i, a.url, k, got, v)
					}
				}
				return nil
			})
		}
	}
}

// TestMigratedAnnotations applies Ingresses written for ingress-nginx
// (regex rewrite, CORS, a canary by header, redirects, app-root) on the
// whole system: they
// behave as ingress-nginx documents, and none of them reloads nginx.
func TestMigratedAnnotations(t *testing.T) {
	ns := setup(t)
	service(t, ns, "api")
	service(t, ns, "api-v2")
	service(t, ns, "web")
	converged(t)
	before := snapshot(t)
	a := func(k, v string) fixtures.IngressOption {
		return fixtures.Annotation("nginx.ingress.kubernetes.io/"+k, v)
	}
	applyIngress(t, ours(ns, "gateway", a("use-regex", "true"), a("rewrite-target", "/$2"), a("x-forwarded-prefix", "/api"),
		a("enable-cors", "true"), a("cors-allow-origin", "https://*.shop.example.com"),
		fixtures.Rule("gw.example.com", fixtures.Path(networkingv1.PathTypeImplementationSpecific, "/api(/|$)(.*)", "api", 80))))
	applyIngress(t, ours(ns, "gateway-canary", a("canary", "true"), a("canary-by-header", "X-Canary"),
		fixtures.Rule("gw.example.com", fixtures.Path(networkingv1.PathTypeImplementationSpecific, "/api(/|$)(.*)", "api-v2", 80))))
	applyIngress(t, ours(ns, "site", fixtures.Rule("gw.example.com", fixtures.Prefix("/", "web", 80))))
	applyIngress(t, ours(ns, "moved", a("permanent-redirect", "https://new.example.com/"),
		fixtures.Rule("old.example.com", fixtures.Prefix("/", "web", 80))))
	applyIngress(t, ours(ns, "app", a("app-root", "/app"), fixtures.Rule("app.example.com", fixtures.Prefix("/", "web", 80))))
	origin := "https://eu.shop.example.com"
	answers(t, []answer{
		{url: "http://gw.example.com/api/users/7?q=1", status: 200, backend: "api", path: "/users/7?q=1",
			headers: map[string]string{"X-Forwarded-Prefix": "/api", "Access-Control-Allow-Origin": ""}},
		{url: "http://gw.example.com/api/users", header: []string{"Origin", origin}, status: 200, backend: "api", path: "/users",
			headers: map[string]string{"Access-Control-Allow-Origin": origin, "Access-Control-Allow-Credentials": "true"}},
		{url: "http://gw.example.com/api/users", header: []string{"X-Canary", "always"}, status: 200, backend: "api-v2", path: "/users"},
		{url: "http://gw.example.com/api/users", header: []string{"X-Canary", "never"}, status: 200, backend: "api", path: "/users"},
		{url: "http://gw.example.com/index.html", status: 200, backend: "web", path: "/index.html"},
		{url: "http://old.example.com/any/path", status: 301, headers: map[string]string{"Location": "https://new.example.com/"}},
		{url: "http://app.example.com/", status: 302, headers: map[string]string{"Location": "http://app.example.com/app"}},
		{url: "http://app.example.com/app", status: 200, backend: "web", path: "/app"},
	})
	converged(t)
	before.unchanged(t, "Ingresses with ingress-nginx annotations")
}
