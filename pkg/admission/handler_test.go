package admission

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ingress-sync/ingress-sync/pkg/ingress"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	admissionv1 "k8s.io/api/admission/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

var ingressGVK = metav1.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}

// reviewOf is the AdmissionReview the API server sends for op on ing.
func reviewOf(t testing.TB, op admissionv1.Operation, ing *networkingv1.Ingress) []byte {
	t.Helper()
	raw, err := json.Marshal(ing)
	if err != nil {
		t.Fatal(err)
	}
	r := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "uid-1", Kind: ingressGVK, Operation: op,
			Resource:  metav1.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"},
			Namespace: ing.Namespace, Name: ing.Name, Object: runtime.RawExtension{Raw: raw}},
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// post sends body to h and decodes the answer, failing unless it is 200.
func post(t *testing.T, h http.Handler, body []byte) *admissionv1.AdmissionResponse {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/validate", bytes.NewReader(body)))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.APIVersion != "admission.k8s.io/v1" || out.Kind != "AdmissionReview" || out.Response == nil || out.Response.UID != "uid-1" {
		t.Fatalf("answer %+v: want an admission.k8s.io/v1 AdmissionReview with the request's UID", out)
	}
	return out.Response
}

func snippetIngress(class string) *networkingv1.Ingress {
	ing := newIngress("shop.example.com", "/", map[string]string{prefix + "server-snippet": "return 200;"})
	ing.Spec.IngressClassName = &class
	return ing
}

func TestServeHTTP(t *testing.T) {
	other := map[string]*networkingv1.IngressClass{"other": {ObjectMeta: metav1.ObjectMeta{Name: "other"},
		Spec: networkingv1.IngressClassSpec{Controller: "example.com/other"}}}
	classes := intent.Classes{Controller: ingress.DefaultControllerClass, Class: ingress.DefaultIngressClass}
	withClasses := Options{Classes: classes, IngressClasses: func() map[string]*networkingv1.IngressClass { return other }}
	tests := []struct {
		name    string
		opts    Options
		op      admissionv1.Operation
		ing     *networkingv1.Ingress
		allowed bool
		message string
	}{
		{name: "create refused", opts: withClasses, op: admissionv1.Create, ing: snippetIngress(ingress.DefaultIngressClass),
			message: "ingress-sync would not serve all of Ingress shop/web: annotation " + prefix + "server-snippet: snippets are never applied"},
		{name: "update refused", opts: withClasses, op: admissionv1.Update, ing: snippetIngress(ingress.DefaultIngressClass), message: "server-snippet"},
		{name: "delete allowed", opts: withClasses, op: admissionv1.Delete, ing: snippetIngress(ingress.DefaultIngressClass), allowed: true},
		{name: "another controller's class is not checked", opts: withClasses, op: admissionv1.Create, ing: snippetIngress("other"), allowed: true},
		{name: "without IngressClasses every Ingress is checked", opts: Options{Classes: classes}, op: admissionv1.Create, ing: snippetIngress("other"), message: "server-snippet"},
		{name: "good one allowed", opts: withClasses, op: admissionv1.Create, ing: newIngress("shop.example.com", "/", nil), allowed: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, NewHandler(tc.opts), reviewOf(t, tc.op, tc.ing))
			if resp.Allowed != tc.allowed {
				t.Fatalf("allowed = %v (%+v), want %v", resp.Allowed, resp.Result, tc.allowed)
			}
			if tc.allowed {
				return
			}
			if resp.Result == nil || !strings.Contains(resp.Result.Message, tc.message) || resp.Result.Code != http.StatusUnprocessableEntity {
				t.Errorf("result %+v, want code 422 and a message containing %q", resp.Result, tc.message)
			}
		})
	}
}

func TestServeHTTPBadRequests(t *testing.T) {
	good := reviewOf(t, admissionv1.Create, newIngress("shop.example.com", "/", nil))
	tests := []struct {
		name   string
		method string
		body   string
		status int
	}{
		{name: "GET", method: http.MethodGet, body: string(good), status: http.StatusMethodNotAllowed},
		{name: "not JSON", method: http.MethodPost, body: "{", status: http.StatusBadRequest},
		{name: "no request", method: http.MethodPost, body: `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, status: http.StatusBadRequest},
		{name: "v1beta1", method: http.MethodPost, body: strings.Replace(string(good), "admission.k8s.io/v1", "admission.k8s.io/v1beta1", 1), status: http.StatusBadRequest},
		{name: "too large", method: http.MethodPost, body: `{"apiVersion":"` + strings.Repeat("x", MaxReviewBytes) + `"}`, status: http.StatusBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			NewHandler(Options{}).ServeHTTP(rec, httptest.NewRequest(tc.method, "/validate", strings.NewReader(tc.body)))
			if rec.Code != tc.status {
				t.Errorf("status %d (%s), want %d", rec.Code, rec.Body, tc.status)
			}
		})
	}
}

func TestReviewNotAnIngress(t *testing.T) {
	tests := []struct {
		name    string
		req     admissionv1.AdmissionRequest
		allowed bool
	}{
		{name: "a Service is not checked", allowed: true,
			req: admissionv1.AdmissionRequest{Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Service"}, Operation: admissionv1.Create}},
		{name: "status subresource is not checked", allowed: true,
			req: admissionv1.AdmissionRequest{Kind: ingressGVK, SubResource: "status", Operation: admissionv1.Update, Object: runtime.RawExtension{Raw: []byte("{")}}},
		{name: "an object that does not decode is refused",
			req: admissionv1.AdmissionRequest{Kind: ingressGVK, Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: []byte("[]")}}},
		{name: "v1beta1 Ingress is refused",
			req: admissionv1.AdmissionRequest{Kind: metav1.GroupVersionKind{Group: "networking.k8s.io", Version: "v1beta1", Kind: "Ingress"}, Operation: admissionv1.Create}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := NewHandler(Options{}).Review(&tc.req)
			if resp.Allowed != tc.allowed {
				t.Errorf("allowed = %v (%+v), want %v", resp.Allowed, resp.Result, tc.allowed)
			}
		})
	}
}

func TestWarningsAreBounded(t *testing.T) {
	ann := map[string]string{}
	for _, e := range ingress.Annotations() {
		if st, _ := ingress.AnnotationStatus(e.Name); st == ingress.StatusSupportedWithDifference {
			ann[prefix+e.Name] = "\x01" + strings.Repeat("z", 5000)
		}
	}
	resp := NewHandler(Options{}).Review(&admissionv1.AdmissionRequest{UID: "u", Kind: ingressGVK, Operation: admissionv1.Create,
		Object: runtime.RawExtension{Raw: mustJSON(t, newIngress("shop.example.com", "/", ann))}})
	if len(resp.Warnings) != maxWarnings || !strings.HasPrefix(resp.Warnings[maxWarnings-1], "and ") {
		t.Errorf("%d warnings, last %q: want %d, the last saying how many more", len(resp.Warnings), resp.Warnings[len(resp.Warnings)-1], maxWarnings)
	}
	for _, w := range resp.Warnings {
		if n := utf8.RuneCountInString(w); n > maxItemRunes || strings.ContainsRune(w, '\x01') {
			t.Errorf("warning of %d runes (at most %d, printable): %q", n, maxItemRunes, w)
		}
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
