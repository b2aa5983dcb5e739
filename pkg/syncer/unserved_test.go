package syncer

import (
	"reflect"

	"github.com/ingress-sync/ingress-sync/pkg/ingress"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// TestUnservedFromBuilds: the report lists the Ingresses that the applied
// configuration leaves out, entirely or in part, or serves with the
// default certificate, and none that is served without an annotation; a
// Service or Secret that arrives takes its Ingress off the list. Each case
// is a real build, so that a reworded Problem of pkg/model fails here.
func TestUnservedFromBuilds(t *testing.T) {
	h := start(t, Options{})
	baseObjects(h) // the Ingress web is served
	pair, err := certs.Generate(certs.Options{Hosts: []string{"tls.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	garbage := fixtures.TLSSecret("default", "garbage", pair)
	garbage.Data[corev1.TLSCertKey] = []byte("not a certificate")
	h.send(events.OpCreate, garbage)
	rule := func(host, svc string) fixtures.IngressOption {
		return fixtures.Rule(host, fixtures.Prefix("/", svc, 80))
	}
	objs := []struct {
		name string
		opts []fixtures.IngressOption
		want string // "" when served
	}{
		{"annotation-ignored", []fixtures.IngressOption{rule("ignored.example.com", "web"),
			fixtures.Annotation(ingress.AnnotationPrefix+"proxy-read-timeout", "soon")}, ""},
		{"no-service", []fixtures.IngressOption{rule("no-service.example.com", "missing")}, events.UnservedRoutes},
		{"one-path-missing", []fixtures.IngressOption{fixtures.Rule("part.example.com",
			fixtures.Prefix("/", "web", 80), fixtures.Prefix("/x", "missing", 80))}, events.UnservedRoutes},
		{"no-secret", []fixtures.IngressOption{rule("tls.example.com", "web"), fixtures.TLS("tls", "tls.example.com")}, events.UnservedCertificate},
		{"bad-secret", []fixtures.IngressOption{rule("bad.example.com", "web"), fixtures.TLS("garbage", "bad.example.com")}, events.UnservedCertificate},
		{"both", []fixtures.IngressOption{rule("both.example.com", "missing"), fixtures.TLS("nope", "both.example.com")}, events.UnservedRoutes},
		{"z-conflict", []fixtures.IngressOption{rule("a.example.com", "web"), fixtures.Created(fixtures.Epoch.Add(time.Hour))}, events.UnservedRoutes},
		{"acl", []fixtures.IngressOption{rule("acl.example.com", "web"),
			fixtures.Annotation(ingress.AnnotationPrefix+"whitelist-source-range", "not-an-address")}, events.UnservedRoutes},
		{"auth", []fixtures.IngressOption{rule("auth.example.com", "web"),
			fixtures.Annotation(ingress.AnnotationPrefix+"auth-type", "basic"),
			fixtures.Annotation(ingress.AnnotationPrefix+"auth-secret", "missing")}, events.UnservedRoutes},
		{"snippet", []fixtures.IngressOption{rule("snippet.example.com", "web"),
			fixtures.Annotation(ingress.AnnotationPrefix+"configuration-snippet", "return 200;")}, events.UnservedRoutes},
		{"canary", []fixtures.IngressOption{rule("lonely.example.com", "web"),
			fixtures.Annotation(ingress.AnnotationPrefix+"canary", "true")}, events.UnservedRoutes},
	}
	var want []string
	for _, o := range objs {
		h.send(events.OpCreate, fixtures.Ingress("default", o.name, o.opts...))
		if o.want != "" {
			want = append(want, "default/"+o.name+" "+o.want)
		}
	}
	slices.Sort(want)
	h.s.CaughtUp(context.Background())
	h.settle()
	if got := unserved(h.s.Status()); !slices.Equal(got, want) {
		t.Fatalf("unserved %q, want %q\nproblems %+v", got, want, h.s.Status().ProblemList)
	}

	h.send(events.OpCreate, fixtures.Service("default", "missing", 80))
	h.send(events.OpCreate, fixtures.TLSSecret("default", "tls", pair))
	h.settle()
	for _, fixed := range []string{"default/no-service routes", "default/one-path-missing routes", "default/no-secret certificate"} {
		want = slices.DeleteFunc(want, func(s string) bool { return s == fixed })
	}
	want = slices.Replace(want, slices.Index(want, "default/both routes"), slices.Index(want, "default/both routes")+1, "default/both certificate")
	if got := unserved(h.s.Status()); !slices.Equal(got, want) {
		t.Fatalf("after the Service and Secret: unserved %q, want %q", got, want)
	}
}

func unserved(st events.SyncerStatus) []string {
	var out []string
	for _, u := range st.Unserved {
		out = append(out, fmt.Sprintf("%s/%s %s", u.Namespace, u.Name, u.Why))
	}
	return out
}

func TestUnservedIsBounded(t *testing.T) {
	ps := make([]config.Problem, events.MaxReportedProblems+10)
	for i := range ps {
		ps[i] = config.Problem{Kind: "Ingress", Namespace: "ns", Name: fmt.Sprintf("ing-%04d", i), Reason: "host a path /: service ns/x not found; path left out"}
	}
	out := unservedObjects(ps, map[string]bool{"Ingress": true})
	if len(out) != events.MaxReportedProblems || out[0].Name != "ing-0000" {
		t.Fatalf("%d Ingresses listed from %s, want the first %d", len(out), out[0].Name, events.MaxReportedProblems)
	}
}

// TestUnservedNamesAnyRouteKind: the objects of every source are
// reported, by kind (empty for an Ingress, as older syncers wrote), and
// Gateways whose listeners are not served; Problems of the objects routes
// reference are not.
func TestUnservedNamesAnyRouteKind(t *testing.T) {
	left := "host a path /: service ns/x not found; path left out"
	ps := []config.Problem{
		{Kind: "HTTPRoute", Namespace: "ns", Name: "r", Reason: left},
		{Kind: "Ingress", Namespace: "ns", Name: "i", Reason: left},
		{Kind: "ConfigMap", Namespace: "ns", Name: "c", Reason: left},
		{Kind: "Gateway", Namespace: "ns", Name: "g", Reason: "listener port of the fleet 10000: nginx cannot listen on it: taken; its listeners on it are not served"},
	}
	got := unservedObjects(ps, map[string]bool{"Ingress": true, "HTTPRoute": true})
	want := []events.UnservedIngress{
		{Kind: "", Namespace: "ns", Name: "i", Why: events.UnservedRoutes},
		{Kind: "Gateway", Namespace: "ns", Name: "g", Why: events.UnservedRoutes},
		{Kind: "HTTPRoute", Namespace: "ns", Name: "r", Why: events.UnservedRoutes},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("unserved %+v, want %+v", got, want)
	}
	kinds := routeKindsOf([]intent.Source{ingress.NewSource()})
	if !kinds["Ingress"] || len(kinds) != 1 {
		t.Fatalf("route kinds of the Ingress source: %v, want Ingress alone", kinds)
	}
}
