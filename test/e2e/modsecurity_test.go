package e2e

import (
	"net/url"
	"testing"

	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// TestBlockedRequest: an Ingress with ModSecurity, the OWASP Core Rule
// Set and a modsecurity-snippet turning blocking on answers 403 to a
// reflected XSS attempt and serves a plain request; an Ingress without
// ModSecurity serves the same hostile request to its backend untouched;
// through both syncers.
func TestBlockedRequest(t *testing.T) {
	ns := setup(t)
	service(t, ns, "web")
	waf, open := "waf."+ns+".example.com", "open."+ns+".example.com"
	applyIngress(t, ours(ns, "waf",
		fixtures.Annotation("nginx.ingress.kubernetes.io/enable-modsecurity", "true"),
		fixtures.Annotation("nginx.ingress.kubernetes.io/enable-owasp-core-rules", "true"),
		fixtures.Annotation("nginx.ingress.kubernetes.io/modsecurity-snippet", "SecRuleEngine On"),
		fixtures.Rule(waf, fixtures.Prefix("/", "web", 80))))
	applyIngress(t, ours(ns, "open", fixtures.Rule(open, fixtures.Prefix("/", "web", 80))))
	xss := "?q=" + url.QueryEscape("<script>alert(1)</script>")
	// The route may be served before its ModSecurity profile is: a new
	// profile reloads nginx after the route table is pushed. answers
	// waits for each answer in turn.
	answers(t, []answer{
		{url: "http://" + waf + "/search" + xss, status: 403},
		{url: "http://" + waf + "/search?q=hello", status: 200, backend: "web", path: "/search?q=hello"},
		{url: "http://" + open + "/search" + xss, status: 200, backend: "web", path: "/search" + xss},
	})
	converged(t)
}
