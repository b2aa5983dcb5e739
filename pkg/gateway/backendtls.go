package gateway

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// BackendTLSPolicy (gateway.networking.k8s.io/v1): how our Gateways
// connect to a Service over TLS. A policy targets Services of its own
// namespace (group "", kind Service), the whole Service or, with
// sectionName, the port of that name. Of the policies of one target, the
// oldest takes precedence (then the first by namespace/name); the others
// are Conflicted. A backendRef of an HTTPRoute to a Service port is
// reached over TLS with the policy of its port's name, or else the
// whole Service's (intent.BackendTLS.For, applied by the build, which
// knows the port names):
//
//   - validation.caCertificateRefs: ConfigMaps of the policy's namespace;
//     the ca.crt of each is trusted (the build reads them; the watcher
//     publishes only the ConfigMaps a policy names).
//   - validation.hostname: sent as SNI and verified against the
//     backend's certificate (nginx's proxy_ssl_name, proxy_ssl_verify).
//   - validation.subjectAltNames: nginx verifies one name, the one it also
//     sends as SNI, and sees no URI SAN; a list other than the hostname
//     itself cannot be verified, so the policy is not accepted (Invalid)
//     and its backends answer 503 (BackendTLSPolicySANValidation is not
//     claimed).
//   - validation.wellKnownCACertificates System: the system's CA
//     certificates are trusted (the bundle of the nginx image); other
//     values are not supported (Invalid, 503).
//
// A policy that cannot be applied (a reference of another kind, a
// ConfigMap missing or without a valid ca.crt, the unsupported fields)
// fails closed: its backends answer 503, never in plaintext or unverified.

// policyKind is the Origin kind of BackendTLSPolicies.
const policyKind = string(events.KindBackendTLSPolicy)

// policyTarget is what a policy's targetRef names: a Service and the name
// of one of its ports ("" for the whole Service).
type policyTarget struct {
	namespace, service, section string
}

// policyTargets returns the Service targets of p; targetRefs of other
// kinds are not ours to apply.
func policyTargets(p *gatewayv1.BackendTLSPolicy) []policyTarget {
	var out []policyTarget
	for _, r := range p.Spec.TargetRefs {
		if r.Group != "" || r.Kind != "Service" {
			continue
		}
		t := policyTarget{namespace: p.Namespace, service: string(r.Name)}
		if r.SectionName != nil {
			t.section = string(*r.SectionName)
		}
		out = append(out, t)
	}
	return out
}

// olderPolicy orders policies by precedence: the older first, then by
// namespace/name.
func olderPolicy(a, b *gatewayv1.BackendTLSPolicy) int {
	return cmp.Or(a.CreationTimestamp.Time.Compare(b.CreationTimestamp.Time),
		strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name))
}

// policyWinners returns, by target, the policy that takes precedence.
func policyWinners(policies []*gatewayv1.BackendTLSPolicy) map[policyTarget]*gatewayv1.BackendTLSPolicy {
	out := map[policyTarget]*gatewayv1.BackendTLSPolicy{}
	for _, p := range policies {
		for _, t := range policyTargets(p) {
			if w := out[t]; w == nil || olderPolicy(p, w) < 0 {
				out[t] = p
			}
		}
	}
	return out
}

// policyCheck is what a policy asks, checked without reading its
// ConfigMaps.
type policyCheck struct {
	hostname   string
	configMaps []string
	// badKinds describes the caCertificateRefs of another kind than
	// ConfigMap (ResolvedRefs InvalidKind).
	badKinds []string
	// invalid says why the policy is not accepted whatever its
	// references (Accepted Invalid).
	invalid string
	// system: wellKnownCACertificates System.
	system bool
}

// checkPolicy checks p's validation.
func checkPolicy(p *gatewayv1.BackendTLSPolicy) policyCheck {
	v := &p.Spec.Validation
	var c policyCheck
	for _, r := range v.CACertificateRefs {
		if r.Group != "" || r.Kind != "ConfigMap" {
			c.badKinds = append(c.badKinds, fmt.Sprintf("caCertificateRef %s %s/%s: only ConfigMaps are supported", r.Name, r.Group, r.Kind))
			continue
		}
		c.configMaps = append(c.configMaps, string(r.Name))
	}
	h, err := config.ParseProxySSLName(string(v.Hostname))
	switch {
	case err != nil:
		c.invalid = fmt.Sprintf("validation.hostname %q %v", v.Hostname, err)
	case v.WellKnownCACertificates != nil && *v.WellKnownCACertificates == gatewayv1.WellKnownCACertificatesSystem && len(v.CACertificateRefs) == 0:
		c.system = true
	case v.WellKnownCACertificates != nil && *v.WellKnownCACertificates != "":
		c.invalid = fmt.Sprintf("validation.wellKnownCACertificates %q is not supported: System, or caCertificateRefs", *v.WellKnownCACertificates)
	case !onlyHostnameSAN(v.SubjectAltNames, h):
		c.invalid = "validation.subjectAltNames other than the hostname itself are not supported: nginx verifies one name, the one it sends as SNI"
	}
	c.hostname = h
	return c
}

// onlyHostnameSAN reports whether sans asks nothing but hostname h: none,
// or Hostname entries equal to h.
func onlyHostnameSAN(sans []gatewayv1.SubjectAltName, h string) bool {
	for _, s := range sans {
		if s.Type != gatewayv1.HostnameSubjectAltNameType || !strings.EqualFold(string(s.Hostname), h) {
			return false
		}
	}
	return true
}

// policyIntent is what policy p asks of its backends, for the build.
func policyIntent(p *gatewayv1.BackendTLSPolicy) *intent.BackendTLSPolicy {
	c := checkPolicy(p)
	out := &intent.BackendTLSPolicy{
		Origin:       intent.Origin{Kind: policyKind, Namespace: p.Namespace, Name: p.Name, Generation: p.Generation},
		CAConfigMaps: c.configMaps, SystemCA: c.system, Hostname: c.hostname, Invalid: c.invalid,
	}
	if out.Invalid == "" && len(c.badKinds) > 0 {
		out.Invalid = strings.Join(c.badKinds, "; ")
	}
	return out
}

// backendTLSOf makes the BackendTLS of every Service some policy targets,
// by the Service's key, from the policies kept.
func backendTLSOf(policies map[intent.Key]*gatewayv1.BackendTLSPolicy) map[intent.Key]*intent.BackendTLS {
	list := make([]*gatewayv1.BackendTLSPolicy, 0, len(policies))
	for _, p := range policies {
		list = append(list, p)
	}
	slices.SortFunc(list, olderPolicy)
	out := map[intent.Key]*intent.BackendTLS{}
	made := map[*gatewayv1.BackendTLSPolicy]*intent.BackendTLSPolicy{}
	for t, p := range policyWinners(list) {
		k := intent.Key{Namespace: t.namespace, Name: t.service}
		if out[k] == nil {
			out[k] = &intent.BackendTLS{Policies: map[string]*intent.BackendTLSPolicy{}}
		}
		if made[p] == nil {
			made[p] = policyIntent(p)
		}
		out[k].Policies[t.section] = made[p]
	}
	return out
}

// keepPolicy stores or removes a BackendTLSPolicy and makes the backend
// TLS of the Services again.
func (src *Source) keepPolicy(key intent.Key, obj runtime.Object) error {
	if err := keep(src.policies, key, events.KindBackendTLSPolicy, obj); err != nil {
		return err
	}
	src.backendTLS = backendTLSOf(src.policies)
	return nil
}

// withBackendTLS sets the backend TLS of ref, a Service of namespace ns,
// and names the policies' ConfigMaps among the entry's references.
func (t *route) withBackendTLS(ns string, ref *intent.BackendRef) {
	tls := t.src.backendTLS[intent.Key{Namespace: ns, Name: ref.Service}]
	if tls == nil {
		return
	}
	ref.TLS = tls
	t.e.Settings.BackendTLS = true
	for _, p := range tls.Policies {
		for _, name := range p.CAConfigMaps {
			t.e.ConfigMaps = append(t.e.ConfigMaps, intent.Key{Namespace: ns, Name: name})
		}
	}
}
