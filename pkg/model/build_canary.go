package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"cmp"
	"fmt"
)

// Canary Ingresses, as ingress-nginx v1.15 documents and tests them.
//
// An Ingress with nginx.ingress.kubernetes.io/canary: "true" gets no
// routes, TLS or default backend of its own. Each of its paths adds its
// backend as the Canary of the Location that a main (non-canary) Ingress
// gives the same host, path and path type; the router then picks the
// backend per request (see Canary). A canary path whose host and path no
// main Ingress serves is not served at all: its requests go wherever the
// host's other routes send them, as if the canary did not exist.
//
//   - canary-by-header: a header name. "always" sends the request to the
//     canary, "never" to the main backend; any other value (or none) goes
//     on to the cookie. canary-by-header-value replaces always/never with
//     an exact value (a request with another value goes on to the cookie);
//     canary-by-header-pattern, used only when no value is set, with a
//     regular expression (validated as regex paths are). Both mean nothing
//     without canary-by-header.
//   - canary-by-cookie: a cookie name; "always" and "never" as above, any
//     other value goes on to the weight.
//   - canary-weight: requests sent to the canary at random, out of
//     canary-weight-total (default 100; ingress-nginx takes a total below
//     100 as 100). 0 sends none, the total (or more) every one.
//   - Of a canary Ingress's other annotations only load-balance,
//     upstream-hash-by and the affinity ones apply (to its backend); the
//     others are ignored with a Problem: its paths take the main
//     Ingress's settings.
//   - One canary per Location: when several canary Ingresses name the same
//     host and path, the oldest is used (ingress-nginx uses the first
//     alternative backend merged, in the same order) and the others get a
//     Problem. A canary whose backend is the main's own is ignored.
//   - Unlike ingress-nginx, a canary applies only to Locations of main
//     Ingresses of its own namespace, so that no tenant can divert
//     another's traffic; and it applies to that host and path only
//     (ingress-nginx attaches it to the main's backend, and so to every
//     path routed to that backend).

// canaryRoute is the canary of a location while Build runs.
type canaryRoute struct {
	e   *intent.Entry
	be  *backendState
	out *config.Canary
}

// location returns the Location's Canary (nil for none), once backends
// are named.
func (c *canaryRoute) location() *config.Canary {
	if c == nil {
		return nil
	}
	if c.out == nil {
		spec := c.e.Settings.Canary.Spec
		spec.Backend, spec.Ingress = c.be.name, c.e.Name
		c.out = &spec
	}
	return c.out
}

// buildCanaries merges every canary Ingress, oldest first, into the
// locations of the main Ingresses: its spec.defaultBackend into each of
// the default server's, then its rules' paths into the same host, path and
// path type.
func (b *builder) buildCanaries() {
	for _, e := range b.canaries {
		b.canaryIgnored(e)
		if ref := e.DefaultBackend; ref != nil {
			b.mergeCanaryDefault(e, *ref)
		}
		for i := range e.Rules {
			r := &e.Rules[i]
			if r.Err != nil {
				b.entryProblem(e, "rule host %q %v; rule left out", r.Raw, r.Err)
				continue
			}
			for j := range r.Paths {
				b.mergeCanaryPath(e, r.Host, &r.Paths[j])
			}
		}
	}
}

// mergeCanaryPath merges one path of canary Ingress e.
func (b *builder) mergeCanaryPath(e *intent.Entry, host string, p *intent.Path) {
	where := fmt.Sprintf("host %s path %q (%s)", host, p.Raw, p.TypeName)
	srv := b.servers[host]
	if srv == nil {
		b.entryProblem(e, "%s: no main Ingress serves this host; the canary path is not served", where)
		return
	}
	l, err := srv.canaryTarget(p)
	switch {
	case err != nil:
		b.entryProblem(e, "%s: %v; path left out", where, err)
	case l == nil:
		b.entryProblem(e, "%s: no main Ingress serves this host and path; the canary path is not served", where)
	default:
		b.mergeCanary(e, where, l, p.Backend)
	}
}

// mergeCanaryDefault merges the spec.defaultBackend of canary Ingress e
// into every location of the default server, as ingress-nginx does.
func (b *builder) mergeCanaryDefault(e *intent.Entry, ref intent.BackendRef) {
	srv := b.servers[config.DefaultServerName]
	merged := false
	for i := range srv.locations {
		if l := &srv.locations[i]; l.entry.Key.Namespace == e.Key.Namespace {
			where := fmt.Sprintf("spec.defaultBackend, host %s path %q", config.DefaultServerName, l.path)
			merged = b.mergeCanary(e, where, l, ref) || merged
		}
	}
	if !merged {
		b.entryProblem(e, "spec.defaultBackend: no path of a main Ingress of this namespace without host to add it to; not served")
	}
}

// mergeCanary makes the backend of ref the canary of l, unless l cannot
// take it; it reports whether l has it.
func (b *builder) mergeCanary(e *intent.Entry, where string, l *location, ref intent.BackendRef) bool {
	if l.entry.Origin.Kind != e.Origin.Kind {
		b.entryProblem(e, "%s: served by %s, and a canary applies to the routes of its own kind only; not served", where, l.entry)
		return false
	}
	if l.entry.Key.Namespace != e.Key.Namespace {
		b.entryProblem(e, "%s: served by %s of another namespace, and a canary applies to its own namespace only; not served", where, l.entry)
		return false
	}
	be, err := b.backendFor(e.Key.Namespace, ref)
	if err != nil {
		b.entryProblem(e, "%s: %v; path left out", where, err)
		return false
	}
	switch c := l.canary; {
	case be == l.backend:
		b.entryProblem(e, "%s: the main %s routes to the same backend; the canary is ignored", where, l.entry)
		return false
	case c != nil && c.e == e && c.be == be:
		return true // the same path twice, or the default backend and a rule
	case c != nil && c.e == e:
		b.entryProblem(e, "%s: defined twice with different backends; the first is used", where)
		return false
	case c != nil:
		b.entryProblem(e, "%s: has the canary of %s, which is older and is used (one canary per path); ignored", where, c.e)
		return false
	}
	be.use(e)
	l.canary = &canaryRoute{e: e, be: be}
	return true
}

// canaryTarget returns the location of a main Ingress that a canary path
// p merges into, or nil: the same path and type, a path whose type leaves
// its meaning to the implementation matching a regex location by its text
// first.
func (s *serverState) canaryTarget(p *intent.Path) (*location, error) {
	if p.Impl {
		if l := s.locationOf(pathKey{path: cmp.Or(p.Raw, "/"), pathType: config.PathRegex}); l != nil {
			return l, nil
		}
	}
	if p.Err != nil {
		return nil, p.Err
	}
	return s.locationOf(pathKey{path: p.Path, pathType: p.PathType}), nil
}

// locationOf returns the location of k, or nil.
func (s *serverState) locationOf(k pathKey) *location {
	if s.index != nil && s.index[k] == nil {
		return nil
	}
	for i := range s.locations {
		if l := &s.locations[i]; l.path == k.path && l.pathType == k.pathType && l.match.Key() == k.match {
			return l
		}
	}
	return nil
}

// canaryIgnored reports what of canary Ingress e does not apply (see
// canaryNotes).
func (b *builder) canaryIgnored(e *intent.Entry) {
	for _, n := range e.CanaryNotes {
		b.entryProblem(e, "%s", n)
	}
}
