package model

import (
	"fmt"
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// The Gateway API's BackendTLSPolicies (intent.BackendTLS, set by the
// translator on the backend references they apply to) become backend TLS
// profiles (config.UpstreamTLS) like the proxy-ssl-* annotations', within
// the same bound (Options.MaxUpstreamTLSProfiles), the Gateway routes'
// first. A location whose backends take a policy is proxied over HTTPS
// with the policy's profile: the CA of its ConfigMaps (or the system's
// CAs, SystemCA), the certificate
// verified for its hostname, which is also sent as SNI (PeerName, so each
// hostname keeps its own kept-alive connections). It fails closed,
// answering 503 with a Problem, when the policy cannot be applied (a
// ConfigMap missing or without a valid ca.crt, what the translator found
// invalid), when there are more profiles than the bound, and when its
// backends do not all take the same policy (the data plane holds one
// profile per location): never in plaintext, never unverified.

// policyVerifyDepth is the chain depth a policy's profile verifies:
// OpenSSL's default, since the CA of a policy may sign through
// intermediates.
const policyVerifyDepth = intent.MaxProxySSLVerifyDepth

// unavailableTLS is the ProxySSL of a location that answers 503.
var unavailableTLS = config.ProxySSL{Unavailable: true}

// backendTLSFor returns the backend TLS of a location of path p of e on
// host: nil when none of its backends takes a policy.
func (b *builder) backendTLSFor(e *intent.Entry, host string, p *intent.Path, be *backendState, ws []weightedBackend) *config.ProxySSL {
	if !e.Settings.BackendTLS {
		return nil
	}
	var pols []*intent.BackendTLSPolicy
	add := func(ref intent.BackendRef, be *backendState) {
		if be != nil {
			pols = append(pols, ref.TLS.For(be.portName))
		}
	}
	switch {
	case len(ws) > 0:
		for i := range ws {
			add(p.Weighted[i].Backend, ws[i].be)
		}
	case len(p.Weighted) == 1:
		add(p.Weighted[0].Backend, be)
	default:
		add(p.Backend, be)
	}
	if len(pols) == 0 || pols[0] == nil && allSame(pols) {
		return nil
	}
	if !allSame(pols) {
		b.entryProblem(e, "host %s path %s: its backends do not all take the same BackendTLSPolicy, which one location cannot serve; it answers 503", host, p.Path)
		return &unavailableTLS
	}
	return b.policyTLS(pols[0])
}

// allSame reports whether every policy of pols is the first.
func allSame(pols []*intent.BackendTLSPolicy) bool {
	for _, p := range pols[1:] {
		if p != pols[0] {
			return false
		}
	}
	return true
}

// policyTLS returns the ProxySSL of the locations that take policy pol,
// resolved once per Build (its Problem reported once, on the policy).
func (b *builder) policyTLS(pol *intent.BackendTLSPolicy) *config.ProxySSL {
	if out, ok := b.gwTLS[pol]; ok {
		return out
	}
	if b.gwTLS == nil {
		b.gwTLS, b.gwProfiles = map[*intent.BackendTLSPolicy]*config.ProxySSL{}, map[string]*config.UpstreamTLS{}
	}
	out := &unavailableTLS
	p, reason := b.policyProfile(pol)
	switch {
	case reason != "":
	case b.gwProfiles[p.Name] == nil && len(b.gwProfiles) >= b.maxProfiles():
		reason = fmt.Sprintf("more than %d distinct backend TLS profiles (the syncer's --max-upstream-tls-profiles)", b.maxProfiles())
	default:
		b.gwProfiles[p.Name] = p
		out = &config.ProxySSL{Profile: p.Name, Name: p.PeerName}
	}
	if reason != "" {
		b.problem(pol.Origin.Kind, pol.Origin.Namespace, pol.Origin.Name, "%s; the backends it targets answer 503", reason)
	}
	b.gwTLS[pol] = out
	return out
}

// maxProfiles is the bound on backend TLS profiles.
func (b *builder) maxProfiles() int {
	if b.opts.MaxUpstreamTLSProfiles > 0 {
		return b.opts.MaxUpstreamTLSProfiles
	}
	return DefaultMaxUpstreamTLSProfiles
}

// policyProfile makes the profile of pol, or says why it cannot.
func (b *builder) policyProfile(pol *intent.BackendTLSPolicy) (*config.UpstreamTLS, string) {
	if pol.Invalid != "" {
		return nil, pol.Invalid
	}
	if len(pol.CAConfigMaps) == 0 && !pol.SystemCA {
		return nil, "no caCertificateRefs"
	}
	var ca []byte
	for _, name := range pol.CAConfigMaps {
		pem, err := b.policyCA(intent.Key{Namespace: pol.Origin.Namespace, Name: name})
		if err != "" {
			return nil, err
		}
		ca = append(ca, pem...)
	}
	p := &config.UpstreamTLS{CA: ca, SystemCA: pol.SystemCA && ca == nil, Verify: true, VerifyDepth: policyVerifyDepth, ServerName: true, PeerName: pol.Hostname,
		Protocols: intent.DefaultProxySSLProtocols + " TLSv1.3", Ciphers: intent.DefaultProxySSLCiphers}
	p.Name = p.ProfileName()
	return p, ""
}

// policyCA returns the certificates of the ca.crt of ConfigMap k, or why
// it cannot.
func (b *builder) policyCA(k intent.Key) ([]byte, string) {
	cm := b.s.configMaps[k]
	if cm == nil {
		return nil, fmt.Sprintf("caCertificateRef ConfigMap %s not found", k)
	}
	data, ok := cm.obj.Data["ca.crt"]
	if !ok {
		return nil, fmt.Sprintf("caCertificateRef ConfigMap %s has no ca.crt", k)
	}
	pem, err := intent.ParseCAPEM([]byte(data))
	if err != nil {
		return nil, fmt.Sprintf("caCertificateRef ConfigMap %s: ca.crt %s", k, strings.TrimSpace(err.Error()))
	}
	return pem, ""
}
