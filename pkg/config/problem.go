package config

import (
	"slices"
	"strings"
)

// Unserved is what a Problem of an Ingress leaves unserved of it.
type Unserved int

const (
	// ServedAsIs: the Problem leaves out an annotation or a setting; the
	// Ingress's routes and certificates are served.
	ServedAsIs Unserved = iota
	// RoutesUnserved: a rule or path left out (invalid, its Service or
	// port missing, or lost to an older Ingress), routes that answer 503
	// until a Secret or an annotation is fixed, or an Ingress not served
	// at all (snippets, a canary without its main Ingress).
	RoutesUnserved
	// CertificateUnserved: a TLS host served the default certificate (its
	// Secret missing or not valid), or left out.
	CertificateUnserved
)

// Unserved says what p leaves unserved of the route object it names (an
// Ingress, or an object of another source; callers keep the Problems of
// route objects). The marks are the words of the builder's Problem
// reasons that say so, next to which they are written; the syncer's
// TestUnservedFromBuilds pins them against real builds.
func (p Problem) Unserved() Unserved {
	has := func(marks ...string) bool {
		return slices.ContainsFunc(marks, func(m string) bool { return strings.Contains(p.Reason, m) })
	}
	switch {
	case has("; rule left out", "; path left out", "; match left out", "routes answer 503", "not served", "): conflicts with "):
		return RoutesUnserved
	case has("the default certificate is used"), strings.HasPrefix(p.Reason, "tls host ") && strings.HasSuffix(p.Reason, "; left out"):
		return CertificateUnserved
	}
	return ServedAsIs
}
