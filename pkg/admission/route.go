package admission

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/gateway"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	admissionv1 "k8s.io/api/admission/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// ErrNotRoute: the request names an HTTPRoute but does not hold one.
var ErrNotRoute = errors.New("not a gateway.networking.k8s.io/v1 HTTPRoute")

// CheckRoute says what of HTTPRoute r the syncers would leave unserved
// (refused) or serve with a Problem (warned), from r alone: the Problems
// of its rules as the Gateway API translator words them
// (gateway.CheckRoute), each refused when config.Problem.Unserved says it
// leaves something unserved (a rule or match left out), otherwise warned
// (a backendRef whose share answers 500, as the specification says and
// the route's status reports). Attachment, Services and ReferenceGrants
// are the status's business, not the webhook's. It is pure.
func CheckRoute(r *gatewayv1.HTTPRoute) Verdict {
	e := &intent.Entry{Origin: intent.Origin{Kind: string(events.KindHTTPRoute), Namespace: r.Namespace, Name: r.Name}}
	var v Verdict
	for _, p := range gateway.CheckRoute(r) {
		v.problem(e, p)
	}
	return v
}

// isRoute reports whether req is about an HTTPRoute (any version, any
// operation).
func isRoute(req *admissionv1.AdmissionRequest) bool {
	return req.Kind.Group == gatewayv1.GroupName && req.Kind.Kind == "HTTPRoute"
}

// reviewRoute answers a request about an HTTPRoute: one of ours, created
// or updated, is checked (CheckRoute).
func (h *Handler) reviewRoute(req *admissionv1.AdmissionRequest, resp *admissionv1.AdmissionResponse) *admissionv1.AdmissionResponse {
	r, skip, err := routeOf(req)
	if err != nil {
		h.log.Warn("admission request not an HTTPRoute", "uid", req.UID, "kind", req.Kind.String(), "err", err)
		return deny(resp, http.StatusBadRequest, err.Error())
	}
	if skip || (h.opts.RouteOurs != nil && !h.opts.RouteOurs(r)) {
		return resp
	}
	return h.answer(req, resp, "HTTPRoute", CheckRoute(r))
}

// routeOf decodes the HTTPRoute of a CREATE or UPDATE; skip is true for
// any other operation or subresource.
func routeOf(req *admissionv1.AdmissionRequest) (*gatewayv1.HTTPRoute, bool, error) {
	if req.SubResource != "" || (req.Operation != admissionv1.Create && req.Operation != admissionv1.Update) {
		return nil, true, nil
	}
	if req.Kind.Version != "v1" {
		return nil, false, fmt.Errorf("%w: version %q", ErrNotRoute, req.Kind.Version)
	}
	var r gatewayv1.HTTPRoute
	if err := json.Unmarshal(req.Object.Raw, &r); err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrNotRoute, err)
	}
	if r.Namespace == "" {
		r.Namespace = req.Namespace
	}
	if r.Name == "" {
		r.Name = req.Name
	}
	return &r, false, nil
}
