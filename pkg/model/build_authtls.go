package model

import (
	"fmt"
	"slices"
)

// clientAuthOf returns the ClientAuth of server s (nil when none of its
// Ingresses requests one that can be applied): the oldest requesting
// Ingress's, as ingress-nginx. An Ingress whose auth-tls annotations
// cannot be applied does not take part: its own routes answer 503 (see
// clientAuthClosed), those of the host's other Ingresses keep the host's
// verification.
func (b *builder) clientAuthOf(s *serverState) *ClientAuth {
	var winner *ClientAuth
	var from *ingressEntry
	var seen []*ingressEntry
	for i := range s.locations {
		e := s.locations[i].ingress
		if !e.ann.clientAuth.requested || slices.Contains(seen, e) {
			continue
		}
		seen = append(seen, e)
		if ca := b.clientAuth(e); ca != nil && (winner == nil || compareAge(e, from) < 0) {
			winner, from = ca, e
		}
	}
	for _, e := range seen {
		if ca := b.clientAuth(e); ca != nil && e != from && !clientAuthEqual(ca, winner) {
			b.ingressProblem(e, "host %s: client certificate authentication is that of Ingress %s, which is older; this Ingress's auth-tls annotations are ignored on it", s.hostname, from.name)
		}
	}
	return winner
}

// clientAuthClosed reports whether e's routes answer 503: it requests
// client certificate authentication that cannot be applied.
func (b *builder) clientAuthClosed(e *ingressEntry) bool {
	return e.ann.clientAuth.requested && b.clientAuth(e) == nil
}

// clientAuthEqual compares what two Ingresses ask of a host.
func clientAuthEqual(x, y *ClientAuth) bool {
	return x.Secret == y.Secret && x.CA == y.CA && x.Verify == y.Verify && x.Depth == y.Depth &&
		x.ErrorPage == y.ErrorPage && x.PassCertificate == y.PassCertificate && x.MatchCN == y.MatchCN &&
		slices.Equal(x.Revoked, y.Revoked)
}

// clientAuth resolves e's auth-tls annotations once per Build: nil when
// they cannot be applied (a Problem of e says why).
func (b *builder) clientAuth(e *ingressEntry) *ClientAuth {
	if ca, ok := b.clientAuths[e]; ok {
		return ca
	}
	ca, reason := b.resolveClientAuth(e)
	if reason != "" {
		b.ingressProblem(e, "%s; the Ingress's routes answer 503", reason)
	}
	if b.clientAuths == nil {
		b.clientAuths = map[*ingressEntry]*ClientAuth{}
	}
	b.clientAuths[e] = ca
	return ca
}

func (b *builder) resolveClientAuth(e *ingressEntry) (*ClientAuth, string) {
	in := &e.ann.clientAuth
	if in.err != "" {
		return nil, in.err
	}
	entry, k, reason := b.annotationSecret(e, "auth-tls-secret", in.secret)
	if reason != "" {
		return nil, reason
	}
	data, ok := entry.obj.Data["ca.crt"]
	if !ok {
		return nil, fmt.Sprintf("annotation %sauth-tls-secret: Secret %s has no key \"ca.crt\"", AnnotationPrefix, k)
	}
	pemCA, cas, err := ParseClientCA(data)
	if err != nil {
		return nil, fmt.Sprintf("annotation %sauth-tls-secret: Secret %s: %v", AnnotationPrefix, k, err)
	}
	ca := &ClientAuth{Ingress: e.name, Secret: k.String(), CA: pemCA, Verify: in.verify, Depth: max(in.depth, 1),
		ErrorPage: in.errorPage, PassCertificate: in.passCert, MatchCN: in.matchCN}
	if ca.Verify == "" {
		ca.Verify = VerifyOn
	}
	if crl, ok := entry.obj.Data["ca.crl"]; ok {
		if ca.Revoked, err = ParseClientCRL(crl, cas); err != nil {
			return nil, fmt.Sprintf("annotation %sauth-tls-secret: Secret %s: %v", AnnotationPrefix, k, err)
		}
	}
	return ca, ""
}

// clientAuth encodes a Server's ClientAuth for its checksum; nil writes
// nothing (so that the checksums of Servers without one stay as they
// were): the Server's next field is a length whose first byte is 0, the
// tag's first byte is its length.
func (w *canonicalWriter) clientAuth(c *ClientAuth) {
	if c == nil {
		return
	}
	w.str("clientAuth")
	w.str(c.Ingress)
	w.str(c.Secret)
	w.str(c.CA)
	w.strs(c.Revoked)
	w.str(c.Verify)
	w.uint(uint64(c.Depth))
	w.str(c.ErrorPage)
	w.bool(c.PassCertificate)
	w.str(c.MatchCN)
}

// clientAuthClosed encodes LocationSettings.ClientAuthUnavailable; false
// writes nothing (the canary that follows starts with a 0 or 1 byte).
func (w *canonicalWriter) clientAuthClosed(closed bool) {
	if closed {
		w.str("clientAuthUnavailable")
	}
}
