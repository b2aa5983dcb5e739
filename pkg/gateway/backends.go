package gateway

import (
	"fmt"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// share500 ends the Problem of a backendRef that cannot be served.
const share500 = "its share of the requests answers 500"

// backends returns the backends of a rule that take requests (weight
// above 0, 1 by default), each with its weight, those that cannot be
// served marked Invalid (their share answers 500, as the specification
// says; the build does the same for a Service that does not exist, and
// routes a single backend that resolves as a plain one). A rule without
// any (none listed, or all of weight 0) answers 500 to every request.
func (t *route) backends(where string, refs []gatewayv1.HTTPBackendRef) (intent.BackendRef, []intent.WeightedRef) {
	var out []intent.WeightedRef
	for i := range refs {
		w := weight(&refs[i])
		if w <= 0 {
			continue
		}
		ref, filter, ok := t.backend(where, &refs[i])
		out = append(out, intent.WeightedRef{Backend: ref, Weight: w, Invalid: !ok, RequestHeaders: filter})
	}
	switch {
	case len(out) == 0:
		t.problem("%s: no backendRef with a weight above 0; every request answers 500", where)
		return intent.BackendRef{}, []intent.WeightedRef{{Weight: 1, Invalid: true}}
	}
	return intent.BackendRef{}, out
}

// backendFilters returns what the filters of backendRef ref do to the
// requests sent to it: a RequestHeaderModifier, once (nil for none). Any
// other filter, or one given twice, is an error: the reference cannot be
// served as the route asks.
func backendFilters(ref *gatewayv1.HTTPBackendRef) (*config.HeaderFilter, error) {
	var out *config.HeaderFilter
	seen := false
	for i := range ref.Filters {
		f := &ref.Filters[i]
		if f.Type != gatewayv1.HTTPRouteFilterRequestHeaderModifier {
			return nil, fmt.Errorf("backendRef %s: filter %s %w", ref.Name, f.Type, errFilterNotServed)
		}
		if seen {
			return nil, fmt.Errorf("backendRef %s: filter %s %w", ref.Name, f.Type, errFilterTwice)
		}
		seen = true
		h, err := headerFilter(f.RequestHeaderModifier)
		if err != nil {
			return nil, fmt.Errorf("backendRef %s: filter %s: %w", ref.Name, f.Type, err)
		}
		out = h
	}
	return out, nil
}
