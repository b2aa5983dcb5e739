package gateway

import (
	"errors"
	"fmt"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// Why a RequestMirror is not served.
var (
	errMirrorNoPort   = errors.New("has no port")
	errMirrorFraction = errors.New("must copy 0 to 100 percent: percent 0 to 100, or a fraction with 0 <= numerator <= denominator and 1 <= denominator <= 1000000, not both")
	errMirrorTooMany  = fmt.Errorf("a rule has at most %d", config.MaxMirrors)
)

// mirrors returns the RequestMirror filters of rule in order: each copies
// the rule's requests, body included, to a Service port (of the route's
// namespace, or of another that grants it), for every request or the
// percent or fraction given. One that cannot be served is left out with a
// Problem (and ResolvedRefs says why, see routeRefs); the rule is served as
// it would be without it: a mirror never changes the answer of a request.
func (t *route) mirrors(where string, rule *gatewayv1.HTTPRouteRule) []intent.MirrorRef {
	var out []intent.MirrorRef
	for _, f := range rule.Filters {
		if f.Type != gatewayv1.HTTPRouteFilterRequestMirror {
			continue
		}
		m, err := t.mirror(f.RequestMirror)
		if err == nil && len(out) == config.MaxMirrors {
			err = errMirrorTooMany
		}
		if err != nil {
			t.problem("%s: filter RequestMirror %v; mirror left out", where, err)
			continue
		}
		out = append(out, m)
	}
	return out
}

// mirror validates one RequestMirror filter.
func (t *route) mirror(f *gatewayv1.HTTPRequestMirrorFilter) (intent.MirrorRef, error) {
	if f == nil {
		return intent.MirrorRef{}, errFilterEmpty
	}
	ref := &f.BackendRef
	ns, err := backendService(routeKind(t.r), t.r.Namespace, ref, t.src.grantList())
	if err != nil {
		return intent.MirrorRef{}, err
	}
	if ref.Port == nil {
		return intent.MirrorRef{}, fmt.Errorf("backendRef %s %w", ref.Name, errMirrorNoPort)
	}
	num, den, err := mirrorShare(f)
	if err != nil {
		return intent.MirrorRef{}, err
	}
	t.e.Services = append(t.e.Services, intent.Key{Namespace: ns, Name: string(ref.Name)})
	out := intent.MirrorRef{Backend: intent.BackendRef{Service: string(ref.Name), PortNumber: int32(*ref.Port)},
		Spec: config.Mirror{Body: true, Numerator: num, Denominator: den}}
	if ns != t.r.Namespace {
		out.Backend.Namespace = ns
	}
	return out, nil
}

// mirrorShare returns the share of requests a mirror copies: percent of
// 100, the fraction (denominator 100 by default), or every request.
func mirrorShare(f *gatewayv1.HTTPRequestMirrorFilter) (int, int, error) {
	num, den := 1, 1
	switch {
	case f.Percent != nil && f.Fraction != nil:
		return 0, 0, errMirrorFraction
	case f.Percent != nil:
		num, den = int(*f.Percent), 100
	case f.Fraction != nil:
		num, den = int(f.Fraction.Numerator), 100
		if f.Fraction.Denominator != nil {
			den = int(*f.Fraction.Denominator)
		}
	}
	if den < 1 || den > config.MaxMirrorDenominator || num < 0 || num > den {
		return 0, 0, errMirrorFraction
	}
	return num, den, nil
}

// mirrorRefs returns the backendRefs of rule's RequestMirror filters.
func mirrorRefs(rule *gatewayv1.HTTPRouteRule) []*gatewayv1.BackendObjectReference {
	var out []*gatewayv1.BackendObjectReference
	for i := range rule.Filters {
		if f := &rule.Filters[i]; f.Type == gatewayv1.HTTPRouteFilterRequestMirror && f.RequestMirror != nil {
			out = append(out, &f.RequestMirror.BackendRef)
		}
	}
	return out
}
