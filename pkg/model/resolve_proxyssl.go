package model

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// resolveUpstreamTLS resolves the proxy-ssl-* annotations of every served
// Ingress, oldest first, so that the oldest keep their profiles when there
// are more than the bound.
func (b *builder) resolveUpstreamTLS() *upstreamTLSState {
	st := &upstreamTLSState{profiles: maps.Clone(b.gwProfiles)} // the Gateway routes' first
	limit := b.maxProfiles()
	for _, e := range b.entries {
		in := &e.Settings.ProxySSL
		if !in.Requested {
			continue
		}
		if st.byIngress == nil {
			st.byIngress, st.hasCA = map[*intent.Entry]*config.ProxySSL{}, map[*intent.Entry]bool{}
			if st.profiles == nil {
				st.profiles = map[string]*config.UpstreamTLS{}
			}
		}
		p := resolveRef(b, e, refUse[*config.UpstreamTLS]{
			objectRef: objectRef{refSecret, "proxy-ssl-secret", in.Secret},
			invalid:   in.Err,
			parse: func(_ *builder, _ *intent.Entry, o refObject) (*config.UpstreamTLS, string) {
				p, reason := proxySSLProfile(in, o)
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
		st.byIngress[e] = &config.ProxySSL{Profile: p.Name, Name: in.Name}
		st.hasCA[e] = p.CA != nil
	}
	return st
}

// profile makes the profile of the proxy-ssl-secret o, or says why it
// cannot.
func proxySSLProfile(in *intent.ProxySSLSettings, o refObject) (*config.UpstreamTLS, string) {
	p := &config.UpstreamTLS{VerifyDepth: max(in.Depth, 1), Protocols: in.Protocols, Ciphers: in.Ciphers, ServerName: in.ServerName}
	if p.Protocols == "" {
		p.Protocols = intent.DefaultProxySSLProtocols
	}
	if p.Ciphers == "" {
		p.Ciphers = intent.DefaultProxySSLCiphers
	}
	data := o.secret.Data
	var err error
	if ca, has := data["ca.crt"]; has {
		if p.CA, err = intent.ParseCAPEM(ca); err != nil {
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
	case in.Verify && p.CA == nil:
		return nil, fmt.Sprintf("%sproxy-ssl-verify=on: Secret %s has no ca.crt", o.settingPrefix, o.key)
	case p.CA == nil && p.Cert == nil:
		return nil, o.reason(" has neither ca.crt nor tls.crt and tls.key")
	}
	p.Verify = in.Verify
	if p.Verify || p.ServerName {
		p.PeerName = in.Name
	}
	p.Name = p.ProfileName()
	return p, ""
}

// finishUpstreamTLS sets the ProxySSL of every location and
// cfg.UpstreamTLS, sorted by Name.
func (b *builder) finishUpstreamTLS(cfg *config.Configuration) {
	st := b.resolveUpstreamTLS()
	if st.profiles == nil {
		return
	}
	byName := make(map[string]*intent.Entry, len(st.byIngress))
	for e := range st.byIngress {
		byName[e.Name] = e
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
			if p != nil && l.Kind == "" { // an Ingress's (a Gateway route's are set)
				l.Settings.ProxySSL = p
			}
			if p := l.Settings.ProxySSL; p != nil {
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
func (b *builder) hostUpstreamTLS(st *upstreamTLSState, byName map[string]*intent.Entry, srv *config.Server) map[string]*config.ProxySSL {
	if b.global.ProxySSLLocationOnly {
		return nil
	}
	var oldest map[string]*intent.Entry
	for j := range srv.Locations {
		e := byName[srv.Locations[j].Ingress]
		if e == nil || !st.hasCA[e] {
			continue
		}
		if o := oldest[e.Key.Namespace]; o == nil || compareAge(e, o) < 0 {
			if oldest == nil {
				oldest = map[string]*intent.Entry{}
			}
			oldest[e.Key.Namespace] = e
		}
	}
	out := make(map[string]*config.ProxySSL, len(oldest))
	for ns, e := range oldest {
		out[ns] = st.byIngress[e]
	}
	return out
}

// ParseClientCA parses a ca.crt: PEM blocks, each a CERTIFICATE that
// crypto/x509 parses (other block types and text between blocks are
// ignored, as OpenSSL reads them); at least one, at most maxClientCAs. It
// returns the certificates re-encoded as PEM.
func ParseClientCA(data []byte) (string, []*x509.Certificate, error) {
	if len(data) > intent.MaxClientCABytes {
		return "", nil, fmt.Errorf("ca.crt is larger than %d bytes", intent.MaxClientCABytes)
	}
	var out bytes.Buffer
	var cas []*x509.Certificate
	for rest := data; ; {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return "", nil, fmt.Errorf("ca.crt certificate %d: %w", len(cas)+1, err)
		}
		if len(cas) == intent.MaxClientCAs {
			return "", nil, fmt.Errorf("ca.crt has more than %d certificates", intent.MaxClientCAs)
		}
		cas = append(cas, c)
		_ = pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	if len(cas) == 0 {
		return "", nil, errors.New("ca.crt has no PEM certificate")
	}
	return out.String(), cas, nil
}

// ParseClientCRL parses a ca.crl: PEM "X509 CRL" blocks, each signed by
// one of cas. It returns the revoked serial numbers in upper-case hex, two
// digits a byte (nginx's $ssl_client_serial), sorted and unique.
func ParseClientCRL(data []byte, cas []*x509.Certificate) ([]string, error) {
	if len(data) > intent.MaxClientCABytes*4 {
		return nil, fmt.Errorf("ca.crl is larger than %d bytes", intent.MaxClientCABytes*4)
	}
	var serials []string
	n := 0
	for rest := data; ; {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		if blk.Type != "X509 CRL" {
			continue
		}
		n++
		crl, err := x509.ParseRevocationList(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("ca.crl list %d: %w", n, err)
		}
		if !slices.ContainsFunc(cas, func(ca *x509.Certificate) bool { return crl.CheckSignatureFrom(ca) == nil }) {
			return nil, fmt.Errorf("ca.crl list %d is not signed by a certificate of ca.crt", n)
		}
		for _, e := range crl.RevokedCertificateEntries {
			if e.SerialNumber == nil || e.SerialNumber.Sign() < 0 || len(serials) == intent.MaxRevoked {
				return nil, fmt.Errorf("ca.crl list %d: a negative serial number or more than %d", n, intent.MaxRevoked)
			}
			serials = append(serials, serialHex(e.SerialNumber.Bytes()))
		}
	}
	if n == 0 {
		return nil, errors.New("ca.crl has no PEM X509 CRL")
	}
	slices.Sort(serials)
	return slices.Compact(serials), nil
}

// DefaultMaxUpstreamTLSProfiles bounds Configuration.UpstreamTLS when
// Options.MaxUpstreamTLSProfiles is 0.
const DefaultMaxUpstreamTLSProfiles = 16

// parseClientPair checks tls.crt and tls.key as a key pair and returns
// them re-encoded (the chain's certificates, the key's one block).
func parseClientPair(certPEM, keyPEM []byte) (cert, key []byte, err error) {
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return nil, nil, err
	}
	cert, err = intent.ParseCAPEM(certPEM)
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
	byIngress map[*intent.Entry]*config.ProxySSL
	// hasCA: the Ingress's profile has a CA (it may be a host's default).
	hasCA    map[*intent.Entry]bool
	profiles map[string]*config.UpstreamTLS
}

// serialHex writes a serial number as nginx's $ssl_client_serial does.
func serialHex(b []byte) string {
	if len(b) == 0 {
		return "00"
	}
	return fmt.Sprintf("%X", b)
}
