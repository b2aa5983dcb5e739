package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Backend TLS (proxy-ssl-secret, proxy-ssl-verify, proxy-ssl-verify-depth,
// proxy-ssl-name, proxy-ssl-server-name, proxy-ssl-protocols,
// proxy-ssl-ciphers; the ConfigMap's proxy-ssl-location-only), as
// ingress-nginx's proxyssl annotation parser and nginx's proxy_ssl_*:
//
//   - proxy-ssl-secret "namespace/name" (or "name"), in the Ingress's
//     namespace: ca.crt verifies the backend's certificate, tls.crt and
//     tls.key (both or neither) are the client certificate presented to it.
//   - proxy-ssl-verify on or off (default off); proxy-ssl-verify-depth 1 to
//     100 (default 1; 0 is 1, as ingress-nginx); proxy-ssl-server-name on or
//     off (default off): SNI.
//   - proxy-ssl-name a DNS name: the name verified and sent as SNI
//     (default "upstream_balancer", nginx's $proxy_host in ingress-nginx).
//   - proxy-ssl-protocols TLSv1.2 and/or TLSv1.3 (default TLSv1.2), the
//     versions ingress-nginx v1.15 accepts.
//   - proxy-ssl-ciphers an OpenSSL cipher list made only of the names and
//     keywords of opensslCiphers, separated by ':' and prefixed by '!', '-'
//     or '+', joined by '+' (default DEFAULT).
//
// nginx's proxy_ssl_trusted_certificate, _verify, _verify_depth,
// _protocols, _ciphers and _server_name take no variables: each distinct
// set of them, with the CA and client certificate (files the syncer
// writes, named by content), is a profile (Configuration.UpstreamTLS) with
// fixed locations in nginx.conf; a new profile reloads nginx, a route
// moving between existing profiles does not. proxy_ssl_name takes a
// variable and is the route's (ProxySSL.Name); with proxy-ssl-verify or
// proxy-ssl-server-name on, the name is part of the profile too
// (UpstreamTLS.PeerName), so that each name has its own kept-alive
// connections.
//
// Fail closed: an invalid value, proxy-ssl-verify on without a Secret, a
// missing Secret, one without ca.crt when verify is on, an unparsable
// certificate or key, or more profiles than Options.MaxUpstreamTLSProfiles
// give the Ingress's locations a ProxySSL with Unavailable set (503) and a
// Problem; never a connection without the verification asked for.
//
// Without proxy-ssl-location-only (ingress-nginx's default), the locations
// of a host whose Ingress sets no proxy-ssl-secret take the profile of the
// oldest Ingress of that host and namespace with one whose Secret has a
// ca.crt, as ingress-nginx's server-level proxy_ssl_* directives (which
// also apply across namespaces and to the host's default backend).

// DefaultMaxUpstreamTLSProfiles bounds Configuration.UpstreamTLS when
// Options.MaxUpstreamTLSProfiles is 0.
const DefaultMaxUpstreamTLSProfiles = 16

// proxySSLInput collects the proxy-ssl-* annotations of one Ingress.
type proxySSLInput struct {
	secret, name, protocols, ciphers string
	verify, serverName               bool
	depth                            int
	// requested: proxy-ssl-secret is set, proxy-ssl-verify is on or a
	// value is invalid; err says why they cannot be applied.
	requested bool
	err       string
	// others lists the annotations other than the Secret that were set.
	others []string
}

const (
	defaultProxySSLProtocols = "TLSv1.2"
	defaultProxySSLCiphers   = "DEFAULT"
	defaultProxySSLName      = "upstream_balancer"
	maxProxySSLVerifyDepth   = 100
)

// applyProxySSL parses one proxy-ssl-* annotation; ok is false for others.
func (a *ingressAnnotations) applyProxySSL(name, v string) bool {
	in := &a.proxySSL
	var err error
	switch name {
	case "proxy-ssl-secret":
		in.requested = true
		if !validSecretRef(v) {
			err = errors.New(`must be "namespace/name" or "name"`)
		} else {
			in.secret = v
		}
	case "proxy-ssl-verify":
		in.verify, err = parseOnOff(v)
		in.requested = in.requested || in.verify
	case "proxy-ssl-server-name":
		in.serverName, err = parseOnOff(v)
	case "proxy-ssl-verify-depth":
		in.depth, err = ParseProxySSLVerifyDepth(v)
	case "proxy-ssl-name":
		in.name, err = config.ParseProxySSLName(v)
	case "proxy-ssl-protocols":
		in.protocols, err = config.ParseProxySSLProtocols(v)
	case "proxy-ssl-ciphers":
		in.ciphers, err = config.ParseProxySSLCiphers(v)
	default:
		return false
	}
	if name != "proxy-ssl-secret" {
		in.others = append(in.others, name)
	}
	if err != nil {
		in.requested = true
		if in.err == "" {
			in.err = fmt.Sprintf("annotation %s%s=%s: %v", AnnotationPrefix, name, quoteValue(v), err)
		}
	}
	return true
}

// finishProxySSL checks what the proxy-ssl-* annotations ask as a whole.
func (a *ingressAnnotations) finishProxySSL() {
	in := &a.proxySSL
	switch {
	case in.err != "":
	case in.verify && in.secret == "":
		in.err = "annotation " + AnnotationPrefix + "proxy-ssl-verify=on without proxy-ssl-secret (no CA to verify with)"
	case in.secret == "" && len(in.others) > 0:
		a.problems = append(a.problems, fmt.Sprintf("annotations %s%s need %sproxy-ssl-secret; ignored", AnnotationPrefix,
			strings.Join(in.others, ", "+AnnotationPrefix), AnnotationPrefix))
	}
}

// ParseProxySSLVerifyDepth parses proxy-ssl-verify-depth: 0 to 100, 0
// meaning the default 1.
func ParseProxySSLVerifyDepth(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > maxProxySSLVerifyDepth || !allDigits(v) {
		return 0, fmt.Errorf("must be a number from 1 to %d", maxProxySSLVerifyDepth)
	}
	return max(n, 1), nil
}

// ParseCAPEM returns the certificates of a ca.crt, re-encoded as PEM
// (other blocks and text dropped); at least one must parse, none may fail.
func ParseCAPEM(data []byte) ([]byte, error) {
	var out []byte
	for len(data) > 0 {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return nil, fmt.Errorf("a certificate does not parse: %w", err)
		}
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: b.Bytes})...)
	}
	if out == nil {
		return nil, errors.New("holds no PEM certificate")
	}
	return out, nil
}

// parseClientPair checks tls.crt and tls.key as a key pair and returns
// them re-encoded (the chain's certificates, the key's one block).
func parseClientPair(certPEM, keyPEM []byte) (cert, key []byte, err error) {
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return nil, nil, err
	}
	cert, err = ParseCAPEM(certPEM)
	if err != nil {
		return nil, nil, err
	}
	for rest := keyPEM; len(rest) > 0; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type == "PRIVATE KEY" || strings.HasSuffix(b.Type, " PRIVATE KEY") {
			return cert, pem.EncodeToMemory(&pem.Block{Type: b.Type, Bytes: b.Bytes}), nil
		}
	}
	return nil, nil, errors.New("tls.key holds no private key")
}

// upstreamTLSState is the backend TLS of one Build.
type upstreamTLSState struct {
	byIngress map[*ingressEntry]*config.ProxySSL
	// hasCA: the Ingress's profile has a CA (it may be a host's default).
	hasCA    map[*ingressEntry]bool
	profiles map[string]*config.UpstreamTLS
}

// resolveUpstreamTLS resolves the proxy-ssl-* annotations of every served
// Ingress, oldest first, so that the oldest keep their profiles when there
// are more than the bound.
func (b *builder) resolveUpstreamTLS() *upstreamTLSState {
	st := &upstreamTLSState{}
	limit := b.opts.MaxUpstreamTLSProfiles
	if limit <= 0 {
		limit = DefaultMaxUpstreamTLSProfiles
	}
	for _, e := range b.ingresses {
		in := &e.ann.proxySSL
		if !in.requested {
			continue
		}
		if st.byIngress == nil {
			st.byIngress, st.hasCA, st.profiles = map[*ingressEntry]*config.ProxySSL{}, map[*ingressEntry]bool{}, map[string]*config.UpstreamTLS{}
		}
		p := resolveRef(b, e, refUse[*config.UpstreamTLS]{
			objectRef: objectRef{refSecret, "proxy-ssl-secret", in.secret},
			invalid:   in.err,
			parse: func(_ *builder, _ *ingressEntry, o refObject) (*config.UpstreamTLS, string) {
				p, reason := in.profile(o)
				if p != nil && st.profiles[p.Name] == nil && len(st.profiles) >= limit {
					return nil, fmt.Sprintf("more than %d distinct backend TLS profiles (the syncer's --max-upstream-tls-profiles)", limit)
				}
				return p, reason
			},
		})
		if p == nil {
			st.byIngress[e] = &config.ProxySSL{Unavailable: true}
			continue
		}
		if st.profiles[p.Name] == nil {
			st.profiles[p.Name] = p
		}
		st.byIngress[e] = &config.ProxySSL{Profile: p.Name, Name: in.name}
		st.hasCA[e] = p.CA != nil
	}
	return st
}

// profile makes the profile of the proxy-ssl-secret o, or says why it
// cannot.
func (in *proxySSLInput) profile(o refObject) (*config.UpstreamTLS, string) {
	p := &config.UpstreamTLS{VerifyDepth: max(in.depth, 1), Protocols: in.protocols, Ciphers: in.ciphers, ServerName: in.serverName}
	if p.Protocols == "" {
		p.Protocols = defaultProxySSLProtocols
	}
	if p.Ciphers == "" {
		p.Ciphers = defaultProxySSLCiphers
	}
	data := o.secret.Data
	var err error
	if ca, has := data["ca.crt"]; has {
		if p.CA, err = ParseCAPEM(ca); err != nil {
			return nil, o.reason(": ca.crt %v", err)
		}
	}
	crt, hasCrt := data["tls.crt"]
	key, hasKey := data["tls.key"]
	switch {
	case hasCrt != hasKey:
		return nil, o.reason(" has only one of tls.crt and tls.key")
	case hasCrt:
		if p.Cert, p.Key, err = parseClientPair(crt, key); err != nil {
			return nil, o.reason(": tls.crt and tls.key: %v", err)
		}
	}
	switch {
	case in.verify && p.CA == nil:
		return nil, fmt.Sprintf("annotation %sproxy-ssl-verify=on: Secret %s has no ca.crt", AnnotationPrefix, o.key)
	case p.CA == nil && p.Cert == nil:
		return nil, o.reason(" has neither ca.crt nor tls.crt and tls.key")
	}
	p.Verify = in.verify
	if p.Verify || p.ServerName {
		p.PeerName = in.name
	}
	p.Name = p.ProfileName()
	return p, ""
}

// finishUpstreamTLS sets the ProxySSL of every location and
// cfg.UpstreamTLS, sorted by Name.
func (b *builder) finishUpstreamTLS(cfg *config.Configuration) {
	st := b.resolveUpstreamTLS()
	if st.byIngress == nil {
		return
	}
	byName := make(map[string]*ingressEntry, len(st.byIngress))
	for e := range st.byIngress {
		byName[e.name] = e
	}
	used := map[string]bool{}
	for i := range cfg.Servers {
		srv := &cfg.Servers[i]
		host := b.hostUpstreamTLS(st, byName, srv)
		for j := range srv.Locations {
			l := &srv.Locations[j]
			ns, _, _ := strings.Cut(l.Ingress, "/")
			p := host[ns]
			if e := byName[l.Ingress]; e != nil {
				p = st.byIngress[e]
			}
			if p != nil {
				l.Settings.ProxySSL = p
				used[p.Profile] = true
			}
		}
	}
	for name, p := range st.profiles {
		if used[name] {
			cfg.UpstreamTLS = append(cfg.UpstreamTLS, *p)
		}
	}
	slices.SortFunc(cfg.UpstreamTLS, func(x, y config.UpstreamTLS) int { return strings.Compare(x.Name, y.Name) })
}

// hostUpstreamTLS returns, by namespace, the profile srv's other
// locations of that namespace take (none with proxy-ssl-location-only):
// the oldest of its Ingresses of the namespace whose profile has a CA. Not
// across namespaces (ingress-nginx: any Ingress of the host, and its
// default backend): one namespace's client certificate never
// authenticates another's routes.
func (b *builder) hostUpstreamTLS(st *upstreamTLSState, byName map[string]*ingressEntry, srv *config.Server) map[string]*config.ProxySSL {
	if b.global.ProxySSLLocationOnly {
		return nil
	}
	var oldest map[string]*ingressEntry
	for j := range srv.Locations {
		e := byName[srv.Locations[j].Ingress]
		if e == nil || !st.hasCA[e] {
			continue
		}
		if o := oldest[e.key.Namespace]; o == nil || compareAge(e, o) < 0 {
			if oldest == nil {
				oldest = map[string]*ingressEntry{}
			}
			oldest[e.key.Namespace] = e
		}
	}
	out := make(map[string]*config.ProxySSL, len(oldest))
	for ns, e := range oldest {
		out[ns] = st.byIngress[e]
	}
	return out
}
