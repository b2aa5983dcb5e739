package admission

import (
	"encoding/json"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

var routeGVK = metav1.GroupVersionKind{Group: gatewayv1.GroupName, Version: "v1", Kind: "HTTPRoute"}

// routeReviewOf is the AdmissionReview the API server sends for op on r.
func routeReviewOf(t testing.TB, op admissionv1.Operation, r *gatewayv1.HTTPRoute) []byte {
	t.Helper()
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "uid-1", Kind: routeGVK, Operation: op,
			Resource:  metav1.GroupVersionResource{Group: gatewayv1.GroupName, Version: "v1", Resource: "httproutes"},
			Namespace: r.Namespace, Name: r.Name, Object: runtime.RawExtension{Raw: raw}},
	}
	b, err := json.Marshal(review)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newRoute is HTTPRoute shop/r on Gateway shop/gw with one rule: match
// (none: every path) to Service web:80, and the filters given.
func newRoute(match *gatewayv1.HTTPRouteMatch, backendKind string, filters ...gatewayv1.HTTPRouteFilter) *gatewayv1.HTTPRoute {
	port := gatewayv1.PortNumber(80)
	ref := gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
		Name: "web", Port: &port}}}
	if backendKind != "" {
		ref.Kind = (*gatewayv1.Kind)(&backendKind)
	}
	rule := gatewayv1.HTTPRouteRule{BackendRefs: []gatewayv1.HTTPBackendRef{ref}, Filters: filters}
	if match != nil {
		rule.Matches = []gatewayv1.HTTPRouteMatch{*match}
	}
	r := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "r"},
		Spec: gatewayv1.HTTPRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{
			ParentRefs: []gatewayv1.ParentReference{{Name: "gw"}}}, Rules: []gatewayv1.HTTPRouteRule{rule}}}
	return r
}

// TestReviewRoute: an HTTPRoute of ours whose rule or match the translator
// leaves out is refused with its reason; a backendRef whose share answers
// 500 (as the specification says, and the status reports) is a warning;
// a route that attaches to no Gateway of ours, a DELETE and a status
// update are not checked.
func TestReviewRoute(t *testing.T) {
	regex := gatewayv1.PathMatchRegularExpression
	badPath := &gatewayv1.HTTPRouteMatch{Path: &gatewayv1.HTTPPathMatch{Type: &regex, Value: new("/(unclosed")}}
	headerRegex := gatewayv1.HeaderMatchRegularExpression
	badHeader := &gatewayv1.HTTPRouteMatch{Headers: []gatewayv1.HTTPHeaderMatch{{Type: &headerRegex, Name: "x-a", Value: "(("}}}
	badRedirect := gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestRedirect,
		RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{StatusCode: new(418)}}
	ours := func(*gatewayv1.HTTPRoute) bool { return true }
	notOurs := func(*gatewayv1.HTTPRoute) bool { return false }
	tests := []struct {
		name    string
		ours    func(*gatewayv1.HTTPRoute) bool
		op      admissionv1.Operation
		sub     string
		route   *gatewayv1.HTTPRoute
		allowed bool
		message string // in the refusal, or in a warning
	}{
		{name: "valid", ours: ours, op: admissionv1.Create, route: newRoute(nil, ""), allowed: true},
		{name: "regex path that does not compile", ours: ours, op: admissionv1.Create, route: newRoute(badPath, ""),
			message: `HTTPRoute shop/r: rule 0 match 0: path "/(unclosed"`},
		{name: "header regex on update", ours: ours, op: admissionv1.Update, route: newRoute(badHeader, ""),
			message: `header "x-a"`},
		{name: "redirect status code", ours: ours, op: admissionv1.Create, route: newRoute(nil, "", badRedirect),
			message: "statusCode must be 301, 302, 303, 307 or 308; rule left out"},
		{name: "backend of another kind is a warning", ours: ours, op: admissionv1.Create, route: newRoute(nil, "Bucket"),
			allowed: true, message: "its share of the requests answers 500"},
		{name: "every route without a lookup", op: admissionv1.Create, route: newRoute(badPath, ""), message: "match left out"},
		{name: "not ours", ours: notOurs, op: admissionv1.Create, route: newRoute(badPath, ""), allowed: true},
		{name: "delete", ours: ours, op: admissionv1.Delete, route: newRoute(badPath, ""), allowed: true},
		{name: "status", ours: ours, op: admissionv1.Update, sub: "status", route: newRoute(badPath, ""), allowed: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := routeReviewOf(t, tc.op, tc.route)
			if tc.sub != "" {
				body = []byte(strings.Replace(string(body), `"operation"`, `"subResource":"`+tc.sub+`","operation"`, 1))
			}
			resp := post(t, NewHandler(Options{RouteOurs: tc.ours}), body)
			if resp.Allowed != tc.allowed {
				t.Fatalf("allowed %v, want %v (%+v)", resp.Allowed, tc.allowed, resp.Result)
			}
			got := strings.Join(resp.Warnings, "\n")
			if !resp.Allowed {
				got = resp.Result.Message
				if resp.Result.Code != 422 {
					t.Errorf("code %d, want 422", resp.Result.Code)
				}
			}
			if !strings.Contains(got, tc.message) {
				t.Errorf("answer %q, want it to contain %q", got, tc.message)
			}
		})
	}
}

// TestReviewRouteNotDecoded: an HTTPRoute request that holds no HTTPRoute
// of v1 is answered 400, not allowed unchecked.
func TestReviewRouteNotDecoded(t *testing.T) {
	h := NewHandler(Options{})
	req := &admissionv1.AdmissionRequest{UID: "u", Kind: routeGVK, Operation: admissionv1.Create,
		Object: runtime.RawExtension{Raw: []byte(`{"spec": 3}`)}}
	if resp := h.Review(req); resp.Allowed || resp.Result.Code != 400 || !strings.Contains(resp.Result.Message, ErrNotRoute.Error()) {
		t.Errorf("review %+v, want 400 naming %v", resp.Result, ErrNotRoute)
	}
	req.Kind.Version = "v1beta1"
	if resp := h.Review(req); resp.Allowed {
		t.Errorf("review of v1beta1 allowed, want 400")
	}
}
