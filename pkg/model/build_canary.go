package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	networkingv1 "k8s.io/api/networking/v1"

	"cmp"
	"errors"
	"fmt"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
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

// Limits of canary annotation values.
const (
	defaultCanaryWeightTotal = 100
	maxCanaryWeight          = 1_000_000_000
	maxCanaryHeaderLen       = 256
)

// canaryInput is what the canary annotations of one Ingress say.
type canaryInput struct {
	enabled bool
	// set lists the other canary annotations accepted, in sorted order.
	set []string
	// spec holds the values; Backend and Ingress are set per Location.
	spec config.Canary
}

// applyCanary parses one canary* annotation into a.canary. Only
// canary-by-header-pattern may carry '$' and '\' (see
// validateHeaderPattern); the others go through checkForbidden.
func (a *ingressAnnotations) applyCanary(name, v string) error {
	if a.canary == nil {
		a.canary = &canaryInput{spec: config.Canary{WeightTotal: defaultCanaryWeightTotal}}
	}
	c := &a.canary.spec
	var err error
	if name == "canary-by-header-pattern" {
		p := strings.TrimSpace(v)
		if err = validateHeaderPattern(p); err == nil {
			c.HeaderPattern = p
		}
		return a.canary.note(name, err)
	}
	if err = checkForbidden(v, false); err != nil {
		return err
	}
	switch name {
	case "canary":
		a.canary.enabled, err = strconv.ParseBool(v)
		if err != nil {
			return errors.New("must be true or false")
		}
		return nil
	case "canary-weight":
		c.Weight, err = parseIntRange(v, 0, maxCanaryWeight)
	case "canary-weight-total":
		c.WeightTotal, err = parseCanaryWeightTotal(v)
	case "canary-by-header":
		c.Header, err = parseHeaderName(strings.TrimSpace(v))
	case "canary-by-header-value":
		c.HeaderValue, err = parseHeaderValue(strings.TrimSpace(v))
	case "canary-by-cookie":
		c.Cookie, err = parseCookieName(strings.TrimSpace(v))
	default:
		return errUnsupported
	}
	return a.canary.note(name, err)
}

// note records that name was accepted, and returns err.
func (c *canaryInput) note(name string, err error) error {
	if err == nil {
		c.set = append(c.set, AnnotationPrefix+name)
	}
	return err
}

// finishCanary combines the canary annotations once all are parsed: they
// mean nothing without canary=true (the Ingress is then a main one, as in
// ingress-nginx), nor a header value or pattern without a header, nor a
// pattern beside a value.
func (a *ingressAnnotations) finishCanary() {
	in := a.canary
	if in == nil {
		return
	}
	if !in.enabled {
		a.canary = nil
		if len(in.set) > 0 {
			what := "annotation "
			if len(in.set) > 1 {
				what = "annotations "
			}
			a.problems = append(a.problems, fmt.Sprintf("%s%s: %scanary is not \"true\"; ignored, the Ingress is not a canary",
				what, strings.Join(in.set, ", "), AnnotationPrefix))
		}
		return
	}
	c := &in.spec
	if c.Header == "" && (c.HeaderValue != "" || c.HeaderPattern != "") {
		a.problems = append(a.problems, fmt.Sprintf("annotations %scanary-by-header-value and -pattern mean nothing without %scanary-by-header; ignored",
			AnnotationPrefix, AnnotationPrefix))
		c.HeaderValue, c.HeaderPattern = "", ""
	}
	if c.HeaderValue != "" && c.HeaderPattern != "" {
		a.problems = append(a.problems, fmt.Sprintf("annotation %scanary-by-header-pattern: ignored, %scanary-by-header-value is set and wins",
			AnnotationPrefix, AnnotationPrefix))
		c.HeaderPattern = ""
	}
	c.Weight = min(c.Weight, c.WeightTotal)
}

// parseCanaryWeightTotal accepts a whole number from 100 up: ingress-nginx's
// router takes a smaller total as 100, so one is refused (and 100 used).
func parseCanaryWeightTotal(v string) (int, error) {
	n, err := parseIntRange(v, 0, maxCanaryWeight)
	if err != nil {
		return defaultCanaryWeightTotal, err
	}
	if n < defaultCanaryWeightTotal {
		return defaultCanaryWeightTotal, errors.New("below 100, which ingress-nginx takes as 100 (100 is used)")
	}
	return n, nil
}

// parseHeaderName accepts a request header name of letters, digits, '-'
// and '_' (nginx drops headers with other characters), at most 256.
func parseHeaderName(v string) (string, error) {
	if v == "" || len(v) > maxCanaryHeaderLen {
		return "", fmt.Errorf("must be 1 to %d characters", maxCanaryHeaderLen)
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !isAlnum(c) && c != '-' && c != '_' {
			return "", errors.New("may only contain letters, digits, '-' and '_'")
		}
	}
	return v, nil
}

// parseHeaderValue accepts a non-empty value (checkForbidden has run).
func parseHeaderValue(v string) (string, error) {
	if v == "" {
		return "", errors.New("must not be empty")
	}
	return v, nil
}

// validateHeaderPattern checks canary-by-header-pattern: valid RE2 syntax,
// and within what nginx's PCRE takes with the same meaning, by the checks
// of regex paths (validateRegexPath, run on the pattern behind a "/": a
// literal first character changes nothing of what they look at).
func validateHeaderPattern(p string) error {
	if p == "" {
		return errors.New("must not be empty")
	}
	if _, err := syntax.Parse(p, syntax.Perl); err != nil {
		return fmt.Errorf("is not a valid regular expression: %w", err)
	}
	return validateRegexPath("/" + p)
}

// canaryRoute is the canary of a location while Build runs.
type canaryRoute struct {
	e   *ingressEntry
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
		spec := c.e.ann.canary.spec
		spec.Backend, spec.Ingress = c.be.name, c.e.name
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
		if ref := e.defaultBackend; ref != nil {
			b.mergeCanaryDefault(e, *ref)
		}
		for i := range e.rules {
			r := &e.rules[i]
			if r.err != nil {
				b.ingressProblem(e, "rule host %q %v; rule left out", r.raw, r.err)
				continue
			}
			for j := range r.paths {
				b.mergeCanaryPath(e, r.host, &r.paths[j])
			}
		}
	}
}

// mergeCanaryPath merges one path of canary Ingress e.
func (b *builder) mergeCanaryPath(e *ingressEntry, host string, p *pathIntent) {
	where := fmt.Sprintf("host %s path %q (%s)", host, p.raw, p.typeName)
	srv := b.servers[host]
	if srv == nil {
		b.ingressProblem(e, "%s: no main Ingress serves this host; the canary path is not served", where)
		return
	}
	l, err := srv.canaryTarget(p)
	switch {
	case err != nil:
		b.ingressProblem(e, "%s: %v; path left out", where, err)
	case l == nil:
		b.ingressProblem(e, "%s: no main Ingress serves this host and path; the canary path is not served", where)
	default:
		b.mergeCanary(e, where, l, p.backend)
	}
}

// mergeCanaryDefault merges the spec.defaultBackend of canary Ingress e
// into every location of the default server, as ingress-nginx does.
func (b *builder) mergeCanaryDefault(e *ingressEntry, ref backendRef) {
	srv := b.servers[config.DefaultServerName]
	merged := false
	for i := range srv.locations {
		if l := &srv.locations[i]; l.ingress.key.Namespace == e.key.Namespace {
			where := fmt.Sprintf("spec.defaultBackend, host %s path %q", config.DefaultServerName, l.path)
			merged = b.mergeCanary(e, where, l, ref) || merged
		}
	}
	if !merged {
		b.ingressProblem(e, "spec.defaultBackend: no path of a main Ingress of this namespace without host to add it to; not served")
	}
}

// mergeCanary makes the backend of ref the canary of l, unless l cannot
// take it; it reports whether l has it.
func (b *builder) mergeCanary(e *ingressEntry, where string, l *location, ref backendRef) bool {
	if l.ingress.key.Namespace != e.key.Namespace {
		b.ingressProblem(e, "%s: served by Ingress %s of another namespace, and a canary applies to its own namespace only; not served", where, l.ingress.name)
		return false
	}
	be, err := b.backendFor(e.key.Namespace, ref)
	if err != nil {
		b.ingressProblem(e, "%s: %v; path left out", where, err)
		return false
	}
	switch c := l.canary; {
	case be == l.backend:
		b.ingressProblem(e, "%s: the main Ingress %s routes to the same backend; the canary is ignored", where, l.ingress.name)
		return false
	case c != nil && c.e == e && c.be == be:
		return true // the same path twice, or the default backend and a rule
	case c != nil && c.e == e:
		b.ingressProblem(e, "%s: defined twice with different backends; the first is used", where)
		return false
	case c != nil:
		b.ingressProblem(e, "%s: has the canary of Ingress %s, which is older and is used (one canary per path); ignored", where, c.e.name)
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
func (s *serverState) canaryTarget(p *pathIntent) (*location, error) {
	if p.impl {
		if l := s.locationOf(pathKey{cmp.Or(p.raw, "/"), config.PathRegex}); l != nil {
			return l, nil
		}
	}
	if p.err != nil {
		return nil, p.err
	}
	return s.locationOf(pathKey{p.path, p.pathType}), nil
}

// locationOf returns the location of k, or nil.
func (s *serverState) locationOf(k pathKey) *location {
	if s.index != nil && s.index[k] == nil {
		return nil
	}
	for i := range s.locations {
		if l := &s.locations[i]; l.path == k.path && l.pathType == k.pathType {
			return l
		}
	}
	return nil
}

// canaryKeeps reports whether an annotation applies on a canary Ingress:
// the canary ones, and those of its backend.
func canaryKeeps(name string) bool {
	return strings.HasPrefix(name, "canary") || strings.HasPrefix(name, "affinity") ||
		strings.HasPrefix(name, "session-cookie-") || strings.HasPrefix(name, "upstream-hash-by") || name == "load-balance"
}

// canaryIgnored reports what of canary Ingress e does not apply (see
// canaryNotes).
func (b *builder) canaryIgnored(e *ingressEntry) {
	for _, n := range e.canaryNotes {
		b.ingressProblem(e, "%s", n)
	}
}

// canaryNotes says what of canary Ingress ing does not apply: its TLS and
// the annotations of its paths (the main Ingress's apply).
func canaryNotes(ing *networkingv1.Ingress) []string {
	var out []string
	if len(ing.Spec.TLS) > 0 {
		out = append(out, "spec.tls: ignored on a canary Ingress (TLS is the main Ingress's)")
	}
	var ignored []string
	for k := range ing.Annotations {
		if name, ok := strings.CutPrefix(k, AnnotationPrefix); ok && !canaryKeeps(name) && !strings.HasSuffix(name, "-snippet") {
			ignored = append(ignored, k)
		}
	}
	if len(ignored) > 0 {
		slices.Sort(ignored)
		out = append(out, fmt.Sprintf("annotations %s: ignored on a canary Ingress, whose paths take the main Ingress's settings (only load-balance, upstream-hash-by and affinity apply, to its backend)",
			strings.Join(ignored, ", ")))
	}
	return out
}
