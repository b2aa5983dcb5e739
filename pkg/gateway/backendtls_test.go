package gateway

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// policy is a BackendTLSPolicy of namespace "app" created at minute age,
// targeting Service svc (section "" for the whole Service), trusting the
// ca.crt of ConfigMap "ca" for hostname.
func policy(name, svc, section, hostname string, age int) *gatewayv1.BackendTLSPolicy {
	p := &gatewayv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: name, Generation: 2,
		CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, 0, age, 0, 0, time.UTC))}}
	ref := gatewayv1.LocalPolicyTargetReferenceWithSectionName{LocalPolicyTargetReference: gatewayv1.LocalPolicyTargetReference{
		Group: "", Kind: "Service", Name: gatewayv1.ObjectName(svc)}}
	if section != "" {
		ref.SectionName = ptr.To(gatewayv1.SectionName(section))
	}
	p.Spec.TargetRefs = []gatewayv1.LocalPolicyTargetReferenceWithSectionName{ref}
	p.Spec.Validation = gatewayv1.BackendTLSPolicyValidation{Hostname: gatewayv1.PreciseHostname(hostname),
		CACertificateRefs: []gatewayv1.LocalObjectReference{{Group: "", Kind: "ConfigMap", Name: "ca"}}}
	return p
}

// tlsSummary is "service: section=hostname [configmaps] invalid" per
// policy of each backend of e's paths that has a BackendTLS.
func tlsSummary(e *intent.Entry) []string {
	var out []string
	for _, h := range e.Rules {
		for _, p := range h.Paths {
			refs := []intent.BackendRef{p.Backend}
			for _, w := range p.Weighted {
				refs = append(refs, w.Backend)
			}
			for _, r := range refs {
				if r.TLS == nil {
					continue
				}
				for section, pol := range r.TLS.Policies {
					s := fmt.Sprintf("%s: %q=%s %s %v", r.Service, section, pol.Origin.Name, pol.Hostname, pol.CAConfigMaps)
					if pol.SystemCA {
						s += " system"
					}
					if pol.Invalid != "" {
						s += " invalid: " + pol.Invalid
					}
					out = append(out, s)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

func TestTranslateBackendTLS(t *testing.T) {
	edge := gw("infra", "edge", "ours", allNamespaces(listener("http", 80, "")))
	objs := []any{class("ours", testController), edge}
	route := httpRoute([]string{"a.example.com"}, rule(nil, backend("web", 443)))
	sans := policy("sans", "web", "", "web.example.com", 1)
	sans.Spec.Validation.SubjectAltNames = []gatewayv1.SubjectAltName{{Type: gatewayv1.URISubjectAltNameType, URI: "spiffe://x/y"}}
	sameSAN := policy("same-san", "web", "", "web.example.com", 1)
	sameSAN.Spec.Validation.SubjectAltNames = []gatewayv1.SubjectAltName{{Type: gatewayv1.HostnameSubjectAltNameType, Hostname: "web.example.com"}}
	system := policy("system", "web", "", "web.example.com", 1)
	system.Spec.Validation.CACertificateRefs = nil
	system.Spec.Validation.WellKnownCACertificates = ptr.To(gatewayv1.WellKnownCACertificatesSystem)
	custom := policy("custom", "web", "", "web.example.com", 1)
	custom.Spec.Validation.CACertificateRefs = nil
	custom.Spec.Validation.WellKnownCACertificates = ptr.To(gatewayv1.WellKnownCACertificatesType("example.com/cas"))
	kind := policy("kind", "web", "", "web.example.com", 1)
	kind.Spec.Validation.CACertificateRefs[0].Kind = "Secret"
	tests := []struct {
		name     string
		policies []*gatewayv1.BackendTLSPolicy
		want     []string
	}{
		{"none", nil, nil},
		{"whole Service", []*gatewayv1.BackendTLSPolicy{policy("p", "web", "", "Web.Example.com", 1)},
			[]string{`web: ""=p web.example.com [ca]`}},
		{"another Service", []*gatewayv1.BackendTLSPolicy{policy("p", "api", "", "web.example.com", 1)}, nil},
		{"oldest takes the target", []*gatewayv1.BackendTLSPolicy{policy("young", "web", "", "young.example.com", 2), policy("old", "web", "", "old.example.com", 1)},
			[]string{`web: ""=old old.example.com [ca]`}},
		{"same age: first by name", []*gatewayv1.BackendTLSPolicy{policy("b", "web", "", "b.example.com", 1), policy("a", "web", "", "a.example.com", 1)},
			[]string{`web: ""=a a.example.com [ca]`}},
		{"section and whole Service both kept", []*gatewayv1.BackendTLSPolicy{policy("port", "web", "https", "port.example.com", 2), policy("whole", "web", "", "whole.example.com", 1)},
			[]string{`web: ""=whole whole.example.com [ca]`, `web: "https"=port port.example.com [ca]`}},
		{"subjectAltNames: the hostname itself", []*gatewayv1.BackendTLSPolicy{sameSAN}, []string{`web: ""=same-san web.example.com [ca]`}},
		{"subjectAltNames: others fail closed", []*gatewayv1.BackendTLSPolicy{sans},
			[]string{`web: ""=sans web.example.com [ca] invalid: validation.subjectAltNames other than the hostname itself are not supported: nginx verifies one name, the one it sends as SNI`}},
		{"wellKnownCACertificates System", []*gatewayv1.BackendTLSPolicy{system}, []string{`web: ""=system web.example.com [] system`}},
		{"other wellKnownCACertificates fail closed", []*gatewayv1.BackendTLSPolicy{custom},
			[]string{`web: ""=custom web.example.com [] invalid: validation.wellKnownCACertificates "example.com/cas" is not supported: System, or caCertificateRefs`}},
		{"caCertificateRef of another kind fails closed", []*gatewayv1.BackendTLSPolicy{kind},
			[]string{`web: ""=kind web.example.com [] invalid: caCertificateRef ca /Secret: only ConfigMaps are supported`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(objs)
			for _, p := range tc.policies {
				in = append(in, p)
			}
			e := translatedWithPolicies(t, route, in...)
			if got := tlsSummary(e); !slices.Equal(got, tc.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if len(tc.want) > 0 != e.Settings.BackendTLS {
				t.Errorf("Settings.BackendTLS = %v", e.Settings.BackendTLS)
			}
			wantCM := 0
			if len(tc.want) > 0 && !strings.Contains(tc.want[0], "[]") {
				wantCM = 1
			}
			if len(e.ConfigMaps) != wantCM {
				t.Errorf("ConfigMaps = %v, want %d", e.ConfigMaps, wantCM)
			}
		})
	}
}

// translatedWithPolicies is translated, with the BackendTLSPolicies of
// objs kept first.
func translatedWithPolicies(t *testing.T, r *gatewayv1.HTTPRoute, objs ...any) *intent.Entry {
	t.Helper()
	var rest []any
	src := NewSource(testController)
	for _, o := range objs {
		p, ok := o.(*gatewayv1.BackendTLSPolicy)
		if !ok {
			rest = append(rest, o)
			continue
		}
		if _, err := src.Keep(events.KindBackendTLSPolicy, intent.Key{Namespace: p.Namespace, Name: p.Name}, p); err != nil {
			t.Fatal(err)
		}
	}
	keepAll(t, src, rest...)
	for _, o := range rest {
		if g, ok := o.(*gatewayv1.Gateway); ok {
			observe(t, src, gatewayService(g))
		}
	}
	e, err := src.Translate(events.KindHTTPRoute, intent.Key{Namespace: r.Namespace, Name: r.Name}, r)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestBackendTLSFor(t *testing.T) {
	whole, port := &intent.BackendTLSPolicy{Hostname: "whole"}, &intent.BackendTLSPolicy{Hostname: "port"}
	tls := &intent.BackendTLS{Policies: map[string]*intent.BackendTLSPolicy{"": whole, "https": port}}
	for _, tc := range []struct {
		name, port string
		tls        *intent.BackendTLS
		want       *intent.BackendTLSPolicy
	}{
		{"none", "https", nil, nil},
		{"the port's", "https", tls, port},
		{"the whole Service's", "http", tls, whole},
		{"unnamed port", "", tls, whole},
		{"only a port's", "http", &intent.BackendTLS{Policies: map[string]*intent.BackendTLSPolicy{"https": port}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.tls.For(tc.port); got != tc.want {
				t.Errorf("For(%q) = %v, want %v", tc.port, got, tc.want)
			}
		})
	}
}

func TestPolicyAncestors(t *testing.T) {
	ours, theirs := class("ours", testController), class("theirs", "example.com/other")
	edge := gw("infra", "edge", "ours", allNamespaces(listener("http", 80, "")))
	other := gw("infra", "other", "theirs", allNamespaces(listener("http", 80, "")))
	route := httpRoute(nil, rule(nil, backend("web", 443)))
	route.Spec.ParentRefs = append(route.Spec.ParentRefs, gatewayv1.ParentReference{Name: "other", Namespace: ptr.To[gatewayv1.Namespace]("infra")})
	pair := testPair(t)
	good := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "ca"}, Data: map[string]string{"ca.crt": string(pair.CertPEM)}}
	empty := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "ca"}}
	junk := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "app", Name: "ca"}, Data: map[string]string{"ca.crt": "junk"}}
	kind := policy("p", "web", "", "web.example.com", 1)
	kind.Spec.Validation.CACertificateRefs[0].Kind = "Secret"
	twoRefs := policy("p", "web", "", "web.example.com", 1)
	twoRefs.Spec.Validation.CACertificateRefs = append(twoRefs.Spec.Validation.CACertificateRefs, gatewayv1.LocalObjectReference{Kind: "ConfigMap", Name: "gone"})
	sans := policy("p", "web", "", "web.example.com", 1)
	sans.Spec.Validation.SubjectAltNames = []gatewayv1.SubjectAltName{{Type: gatewayv1.URISubjectAltNameType, URI: "spiffe://x/y"}}
	system := policy("p", "web", "", "web.example.com", 1)
	system.Spec.Validation.CACertificateRefs = nil
	system.Spec.Validation.WellKnownCACertificates = ptr.To(gatewayv1.WellKnownCACertificatesSystem)
	const ok = "Accepted=True/Accepted ResolvedRefs=True/ResolvedRefs"
	tests := []struct {
		name     string
		policies []*gatewayv1.BackendTLSPolicy
		cm       *corev1.ConfigMap
		route    *gatewayv1.HTTPRoute
		want     string
	}{
		{"valid", []*gatewayv1.BackendTLSPolicy{policy("p", "web", "", "web.example.com", 1)}, good, route, "infra/edge: " + ok},
		{"no route to its Service", []*gatewayv1.BackendTLSPolicy{policy("p", "api", "", "web.example.com", 1)}, good, route, ""},
		{"ConfigMap missing", []*gatewayv1.BackendTLSPolicy{policy("p", "web", "", "web.example.com", 1)}, nil, route,
			"infra/edge: Accepted=False/NoValidCACertificate ResolvedRefs=False/InvalidCACertificateRef"},
		{"no ca.crt", []*gatewayv1.BackendTLSPolicy{policy("p", "web", "", "web.example.com", 1)}, empty, route,
			"infra/edge: Accepted=False/NoValidCACertificate ResolvedRefs=False/InvalidCACertificateRef"},
		{"malformed ca.crt", []*gatewayv1.BackendTLSPolicy{policy("p", "web", "", "web.example.com", 1)}, junk, route,
			"infra/edge: Accepted=False/NoValidCACertificate ResolvedRefs=False/InvalidCACertificateRef"},
		{"another kind", []*gatewayv1.BackendTLSPolicy{kind}, good, route,
			"infra/edge: Accepted=False/NoValidCACertificate ResolvedRefs=False/InvalidKind"},
		{"one of two refs resolves", []*gatewayv1.BackendTLSPolicy{twoRefs}, good, route,
			"infra/edge: Accepted=True/Accepted ResolvedRefs=False/InvalidCACertificateRef"},
		{"conflicted", []*gatewayv1.BackendTLSPolicy{policy("p", "web", "", "web.example.com", 2), policy("older", "web", "", "web.example.com", 1)}, good, route,
			"infra/edge: Accepted=False/Conflicted ResolvedRefs=True/ResolvedRefs"},
		{"not conflicted with a section's", []*gatewayv1.BackendTLSPolicy{policy("p", "web", "", "web.example.com", 2), policy("older", "web", "https", "web.example.com", 1)}, good, route,
			"infra/edge: " + ok},
		{"wellKnownCACertificates System", []*gatewayv1.BackendTLSPolicy{system}, nil, route, "infra/edge: " + ok},
		{"subjectAltNames", []*gatewayv1.BackendTLSPolicy{sans}, good, route,
			"infra/edge: Accepted=False/Invalid ResolvedRefs=True/ResolvedRefs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := world(ours, theirs, edge, other, tc.route)
			w.Policies = tc.policies
			w.ConfigMap = func(ns, name string) *corev1.ConfigMap {
				if tc.cm != nil && tc.cm.Namespace == ns && tc.cm.Name == name {
					return tc.cm
				}
				return nil
			}
			var got []string
			for _, a := range w.PolicyAncestors(tc.policies[0]) {
				got = append(got, fmt.Sprintf("%s/%s: %s", *a.AncestorRef.Namespace, a.AncestorRef.Name, conds(a.Conditions)))
				if a.ControllerName != testController || a.Conditions[0].ObservedGeneration != 2 {
					t.Errorf("ancestor %+v", a)
				}
			}
			if g := strings.Join(got, "; "); g != tc.want {
				t.Errorf("got %q\nwant %q", g, tc.want)
			}
		})
	}
}

func TestMergePolicyAncestors(t *testing.T) {
	ref := func(name string) gatewayv1.ParentReference {
		return gatewayv1.ParentReference{Namespace: ptr.To[gatewayv1.Namespace]("infra"), Name: gatewayv1.ObjectName(name)}
	}
	then, now := metav1.NewTime(time.Unix(100, 0)), metav1.NewTime(time.Unix(200, 0))
	c := metav1.Condition{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted", LastTransitionTime: then}
	existing := []gatewayv1.PolicyAncestorStatus{
		{AncestorRef: ref("theirs"), ControllerName: "example.com/other", Conditions: []metav1.Condition{c}},
		{AncestorRef: ref("gone"), ControllerName: testController, Conditions: []metav1.Condition{c}},
		{AncestorRef: ref("edge"), ControllerName: testController, Conditions: []metav1.Condition{c}},
	}
	desired := []gatewayv1.PolicyAncestorStatus{
		{AncestorRef: ref("edge"), ControllerName: testController, Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted"}}},
		{AncestorRef: ref("new"), ControllerName: testController, Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, Reason: "Accepted"}}},
	}
	got := MergePolicyAncestors(existing, desired, testController, now)
	var names []string
	for _, a := range got {
		names = append(names, fmt.Sprintf("%s@%d", a.AncestorRef.Name, a.Conditions[0].LastTransitionTime.Unix()))
	}
	if want := "theirs@100 edge@100 new@200"; strings.Join(names, " ") != want {
		t.Errorf("got %v, want %s", names, want)
	}
}
