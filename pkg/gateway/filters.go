package gateway

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// Why a filter is not served.
var (
	errFilterTwice      = errors.New("is given twice")
	errFilterNotServed  = errors.New("is not served yet")
	errFilterEmpty      = errors.New("has no settings for its type")
	errRedirectRewrite  = errors.New("RequestRedirect and URLRewrite cannot be on one rule")
	errRedirectScheme   = errors.New("scheme must be http or https")
	errRedirectCode     = errors.New("statusCode must be 301, 302, 303, 307 or 308")
	errPathModifierType = errors.New("path type must be ReplaceFullPath or ReplacePrefixMatch")
	errHeaderName       = errors.New("header name is not a token")
	errPrefixOnly       = errors.New("is not a PathPrefix match, and a filter replaces the matched prefix")
)

// filters returns what the filters of rule do, validated; nil for none.
// A filter this step does not serve, or one that is not valid, leaves the
// rule out (false), never served otherwise than it says.
func (t *route) filters(where string, rule *gatewayv1.HTTPRouteRule) (*config.Filters, bool) {
	if len(rule.Filters) == 0 {
		return nil, true
	}
	out := &config.Filters{}
	seen := map[gatewayv1.HTTPRouteFilterType]bool{}
	for i := range rule.Filters {
		f := &rule.Filters[i]
		if f.Type == gatewayv1.HTTPRouteFilterRequestMirror && routeKind(t.r) == events.KindGRPCRoute {
			// The mirror copies requests over HTTP/1.1 (lua/mirror.lua):
			// not a gRPC call.
			t.problem("%s: filter %s %v for a GRPCRoute; rule left out", where, f.Type, errFilterNotServed)
			return nil, false
		}
		if f.Type == gatewayv1.HTTPRouteFilterRequestMirror {
			continue // mirrors (mirror.go), which a rule may have several of
		}
		err := errFilterTwice
		if !seen[f.Type] {
			seen[f.Type] = true
			err = applyFilter(out, f)
		}
		if err != nil {
			t.problem("%s: filter %s %v; rule left out", where, f.Type, err)
			return nil, false
		}
	}
	if out.Redirect != nil && (out.RewriteHost != "" || out.RewritePath != nil) {
		t.problem("%s: %v; rule left out", where, errRedirectRewrite)
		return nil, false
	}
	return out, true
}

// applyFilter adds filter f to out.
func applyFilter(out *config.Filters, f *gatewayv1.HTTPRouteFilter) error {
	var err error
	switch f.Type {
	case gatewayv1.HTTPRouteFilterRequestHeaderModifier:
		out.RequestHeaders, err = headerFilter(f.RequestHeaderModifier)
	case gatewayv1.HTTPRouteFilterResponseHeaderModifier:
		out.ResponseHeaders, err = headerFilter(f.ResponseHeaderModifier)
	case gatewayv1.HTTPRouteFilterRequestRedirect:
		out.Redirect, err = redirect(f.RequestRedirect)
	case gatewayv1.HTTPRouteFilterURLRewrite:
		err = rewrite(out, f.URLRewrite)
	case gatewayv1.HTTPRouteFilterCORS:
		out.CORS, err = routeCORS(f.CORS)
	default:
		err = errFilterNotServed
	}
	return err
}

// headerFilter validates a header modifier: token names (the first of
// equal names ignoring case counts), printable values.
func headerFilter(m *gatewayv1.HTTPHeaderFilter) (*config.HeaderFilter, error) {
	if m == nil {
		return nil, errFilterEmpty
	}
	out := &config.HeaderFilter{}
	var err error
	if out.Set, err = headerList(m.Set); err != nil {
		return nil, err
	}
	if out.Add, err = headerList(m.Add); err != nil {
		return nil, err
	}
	for _, n := range m.Remove {
		if !intent.ValidHeaderName(n) {
			return nil, fmt.Errorf("remove %q: %w", n, errHeaderName)
		}
		if !slices.ContainsFunc(out.Remove, func(x string) bool { return strings.EqualFold(x, n) }) {
			out.Remove = append(out.Remove, n)
		}
	}
	slices.Sort(out.Remove)
	if len(out.Set) == 0 && len(out.Add) == 0 && len(out.Remove) == 0 {
		return nil, nil
	}
	return out, nil
}

// headerList validates the headers of a set or add list, sorted by name.
func headerList(hs []gatewayv1.HTTPHeader) ([]config.Header, error) {
	var out []config.Header
	for _, h := range hs {
		name := string(h.Name)
		if !intent.ValidHeaderName(name) {
			return nil, fmt.Errorf("header %q: %w", name, errHeaderName)
		}
		if err := intent.CheckHeaderValue(h.Value); err != nil {
			return nil, fmt.Errorf("header %q: %w", name, err)
		}
		if !slices.ContainsFunc(out, func(x config.Header) bool { return strings.EqualFold(x.Name, name) }) {
			out = append(out, config.Header{Name: name, Value: h.Value})
		}
	}
	slices.SortFunc(out, func(a, b config.Header) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// redirect validates a RequestRedirect: its code (302 by default).
func redirect(r *gatewayv1.HTTPRequestRedirectFilter) (*config.RouteRedirect, error) {
	if r == nil {
		return nil, errFilterEmpty
	}
	out := &config.RouteRedirect{Code: 302}
	if r.StatusCode != nil {
		out.Code = *r.StatusCode
	}
	switch out.Code {
	case 301, 302, 303, 307, 308:
	default:
		return nil, errRedirectCode
	}
	if r.Scheme != nil {
		if out.Scheme = *r.Scheme; out.Scheme != "http" && out.Scheme != "https" {
			return nil, errRedirectScheme
		}
	}
	if r.Port != nil {
		out.Port = int(*r.Port)
	}
	var err error
	if r.Hostname != nil {
		if out.Hostname, err = hostname(string(*r.Hostname)); err != nil {
			return nil, err
		}
	}
	if out.Path, err = pathModifier(r.Path); err != nil {
		return nil, err
	}
	return out, nil
}

// rewrite validates a URLRewrite into out.
func rewrite(out *config.Filters, r *gatewayv1.HTTPURLRewriteFilter) error {
	if r == nil {
		return errFilterEmpty
	}
	var err error
	if r.Hostname != nil {
		if out.RewriteHost, err = hostname(string(*r.Hostname)); err != nil {
			return err
		}
	}
	out.RewritePath, err = pathModifier(r.Path)
	return err
}

// hostname validates the hostname of a redirect or rewrite: an exact
// DNS name.
func hostname(h string) (string, error) {
	if strings.HasPrefix(h, "*") {
		return "", fmt.Errorf("hostname %q: must not be a wildcard", h)
	}
	if err := intent.ValidHost(h); err != nil {
		return "", fmt.Errorf("hostname %q %w", h, err)
	}
	return h, nil
}

// pathModifier validates a path modifier; nil for none.
func pathModifier(m *gatewayv1.HTTPPathModifier) (*config.PathModifier, error) {
	if m == nil {
		return nil, nil
	}
	var out config.PathModifier
	switch {
	case m.Type == gatewayv1.FullPathHTTPPathModifier && m.ReplaceFullPath != nil:
		out = config.PathModifier{Type: config.PathModifierFull, Value: *m.ReplaceFullPath}
	case m.Type == gatewayv1.PrefixMatchHTTPPathModifier && m.ReplacePrefixMatch != nil:
		out = config.PathModifier{Type: config.PathModifierPrefix, Value: *m.ReplacePrefixMatch}
	default:
		return nil, errPathModifierType
	}
	if err := intent.ValidatePath(out.Value); err != nil {
		return nil, fmt.Errorf("path %q %w", out.Value, err)
	}
	return &out, nil
}

// replacesPrefix reports whether f replaces the matched prefix of a
// path, which only a PathPrefix match has.
func replacesPrefix(f *config.Filters) bool {
	if f == nil {
		return false
	}
	prefix := func(m *config.PathModifier) bool { return m != nil && m.Type == config.PathModifierPrefix }
	return prefix(f.RewritePath) || f.Redirect != nil && prefix(f.Redirect.Path)
}

// redirectsFrom returns paths as a listener of port listener serves them:
// a redirect that gives neither a scheme nor a port goes to the
// listener's port, as the specification says (the data plane leaves a
// scheme's well-known port out). paths itself when none does.
func redirectsFrom(paths []intent.Path, listener int) []intent.Path {
	var out []intent.Path
	for i := range paths {
		f := paths[i].Filters
		if f == nil || f.Redirect == nil || f.Redirect.Scheme != "" || f.Redirect.Port != 0 {
			continue
		}
		if out == nil {
			out = slices.Clone(paths)
		}
		fc, rc := *f, *f.Redirect
		rc.Port = listener
		fc.Redirect = &rc
		out[i].Filters = &fc
	}
	if out == nil {
		return paths
	}
	return out
}
