package intent

import "github.com/ingress-sync/ingress-sync/pkg/config"

// ModSecurityInput is what the ModSecurity annotations of one route
// object say: enable-modsecurity (Enable, nil when absent),
// enable-owasp-core-rules (CRS), modsecurity-transaction-id
// (TransactionID) and the directives of modsecurity-snippet that its
// parser accepted (Snippet, Engine "" when the snippet sets no
// SecRuleEngine). Invalid: an annotation could not be applied, so a route
// that runs ModSecurity answers 503 rather than run without its rules.
type ModSecurityInput struct {
	Enable        *bool
	CRS           bool
	TransactionID string
	Snippet       config.ModSecurity
	Invalid       bool
}

// ResolveModSecurity returns the ModSecurity of a route, as ingress-nginx
// combines the annotations with the ConfigMap's keys g: off (nil) unless
// the ConfigMap or enable-modsecurity turns it on, and enable-modsecurity
// "false" turns the ConfigMap's off; the engine is DetectionOnly (the
// default of ingress-nginx's modsecurity.conf) unless the snippet says
// otherwise; the Core Rule Set when either the ConfigMap or the
// annotation asks for it.
func ResolveModSecurity(in *ModSecurityInput, g *config.GlobalModSecurity) *config.ModSecurity {
	on := g.Enable
	if in != nil && in.Enable != nil {
		on = *in.Enable
	}
	if !on {
		return nil
	}
	m := &config.ModSecurity{Engine: "DetectionOnly", CRS: g.CRS}
	if in == nil {
		return m
	}
	s := &in.Snippet
	if s.Engine != "" {
		m.Engine = s.Engine
	}
	m.CRS = m.CRS || in.CRS
	m.RemoveByID, m.RemoveByTag = s.RemoveByID, s.RemoveByTag
	m.RequestBodyLimit, m.RequestBodyAccess = s.RequestBodyLimit, s.RequestBodyAccess
	if in.TransactionID != "" {
		m.TransactionID = in.TransactionID
	}
	m.Unavailable = in.Invalid
	return m
}
