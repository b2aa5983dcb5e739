package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"slices"
)

// clientAuthOf returns the ClientAuth of server s (nil when none of its
// Ingresses requests one that can be applied): the oldest requesting
// Ingress's, as ingress-nginx. An Ingress whose auth-tls annotations
// cannot be applied does not take part: its own routes answer 503 (see
// clientAuthClosed), those of the host's other Ingresses keep the host's
// verification.
func (b *builder) clientAuthOf(s *serverState) *config.ClientAuth {
	var winner *config.ClientAuth
	var from *intent.Entry
	var seen []*intent.Entry
	for i := range s.locations {
		e := s.locations[i].entry
		if !e.Settings.ClientAuth.Requested || slices.Contains(seen, e) {
			continue
		}
		seen = append(seen, e)
		if ca := b.clientAuth(e); ca != nil && (winner == nil || compareAge(e, from) < 0) {
			winner, from = ca, e
		}
	}
	for _, e := range seen {
		if ca := b.clientAuth(e); ca != nil && e != from && !clientAuthEqual(ca, winner) {
			b.entryProblem(e, "host %s: client certificate authentication is that of %s, which is older; this Ingress's auth-tls annotations are ignored on it", s.hostname, from)
		}
	}
	return winner
}

// clientAuthClosed reports whether e's routes answer 503: it requests
// client certificate authentication that cannot be applied.
func (b *builder) clientAuthClosed(e *intent.Entry) bool {
	return e.Settings.ClientAuth.Requested && b.clientAuth(e) == nil
}

// clientAuthEqual compares what two Ingresses ask of a host.
func clientAuthEqual(x, y *config.ClientAuth) bool {
	return x.Secret == y.Secret && x.CA == y.CA && x.Verify == y.Verify && x.Depth == y.Depth &&
		x.ErrorPage == y.ErrorPage && x.PassCertificate == y.PassCertificate && x.MatchCN == y.MatchCN &&
		slices.Equal(x.Revoked, y.Revoked)
}

// clientAuth resolves e's auth-tls annotations once per Build (see
// resolveRef): nil when they cannot be applied (a Problem of e says why).
func (b *builder) clientAuth(e *intent.Entry) *config.ClientAuth {
	in := &e.Settings.ClientAuth
	return resolveRef(b, e, refUse[*config.ClientAuth]{
		objectRef: objectRef{refSecret, "auth-tls-secret", in.Secret},
		invalid:   in.Err,
		parse:     (*builder).clientAuthFrom,
	})
}

// clientAuthFrom makes e's ClientAuth of its auth-tls-secret o, or says
// why it cannot.
func (b *builder) clientAuthFrom(e *intent.Entry, o refObject) (*config.ClientAuth, string) {
	in := &e.Settings.ClientAuth
	data, ok := o.secret.Data["ca.crt"]
	if !ok {
		return nil, o.reason(` has no key "ca.crt"`)
	}
	pemCA, cas, err := ParseClientCA(data)
	if err != nil {
		return nil, o.reason(": %v", err)
	}
	ca := &config.ClientAuth{Ingress: e.Name, Secret: o.key.String(), CA: pemCA, Verify: in.Verify, Depth: max(in.Depth, 1),
		ErrorPage: in.ErrorPage, PassCertificate: in.PassCert, MatchCN: in.MatchCN}
	if ca.Verify == "" {
		ca.Verify = intent.VerifyOn
	}
	if crl, ok := o.secret.Data["ca.crl"]; ok {
		if ca.Revoked, err = ParseClientCRL(crl, cas); err != nil {
			return nil, o.reason(": %v", err)
		}
	}
	return ca, ""
}
