package gateway

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

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
		ref, ok := t.backend(where, &refs[i])
		out = append(out, intent.WeightedRef{Backend: ref, Weight: w, Invalid: !ok})
	}
	switch {
	case len(out) == 0:
		t.problem("%s: no backendRef with a weight above 0; every request answers 500", where)
		return intent.BackendRef{}, []intent.WeightedRef{{Weight: 1, Invalid: true}}
	}
	return intent.BackendRef{}, out
}
