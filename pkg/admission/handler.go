package admission

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ingress-sync/ingress-sync/pkg/ingress"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	admissionv1 "k8s.io/api/admission/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Errors of a review the webhook cannot answer; the HTTP status is 400.
var (
	ErrBadReview  = errors.New("not an admission.k8s.io/v1 AdmissionReview request")
	ErrNotIngress = errors.New("not a networking.k8s.io/v1 Ingress")
)

// Limits of what the webhook reads and returns.
const (
	// MaxReviewBytes bounds the body of a review: the API server's own
	// limit on an object is 3 MiB, and the review may hold two.
	MaxReviewBytes = 7 << 20
	// maxItemRunes bounds one warning or refusal: the API server
	// truncates warnings to 256 runes once they add up to 4096.
	maxItemRunes   = 256
	maxReasonRunes = 1024
	maxWarnings    = 16
	// maxNeighbours bounds the Ingresses built beside the one reviewed
	// (Conflicts); beyond them a conflict may go unnoticed at admission,
	// and the syncers report it as without the webhook.
	maxNeighbours = 1000
)

// Options configure the Handler.
type Options struct {
	// Classes are the controller's class flags (--controller-class,
	// --ingress-class, --watch-ingress-without-class).
	Classes intent.Classes
	// IngressClasses returns the cluster's IngressClasses by name (a
	// lister's view); nil checks every Ingress, whatever its class.
	IngressClasses func() map[string]*networkingv1.IngressClass
	// Neighbours returns the stored Ingresses that may hold one of paths
	// on host (config.DefaultServerName for rules without host), as
	// Cache.Neighbours; nil checks no conflict between Ingresses.
	Neighbours func(host string, paths []string) []*networkingv1.Ingress
	// RouteOurs reports whether an HTTPRoute names a Gateway of ours
	// among its parentRefs (the watcher's view, gateway.RouteOurs); nil
	// checks every HTTPRoute.
	RouteOurs func(*gatewayv1.HTTPRoute) bool
	// Logger; nil is slog.Default().
	Logger *slog.Logger
}

// Handler answers AdmissionReviews of Ingresses (see the package comment).
type Handler struct {
	opts Options
	src  *ingress.Source
	log  *slog.Logger
}

// NewHandler returns the webhook's http.Handler.
func NewHandler(o Options) *Handler {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Handler{opts: o, src: ingress.NewSource(), log: log}
}

// ServeHTTP decodes one AdmissionReview, reviews its request and writes
// the review back with the response.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST an AdmissionReview", http.StatusMethodNotAllowed)
		return
	}
	review, err := decodeReview(http.MaxBytesReader(w, r.Body, MaxReviewBytes))
	if err != nil {
		h.log.Warn("admission review not read", "err", err, "remote", r.RemoteAddr)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	resp := h.Review(review.Request)
	out := admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(&out); err != nil {
		h.log.Warn("admission response not written", "err", err, "remote", r.RemoteAddr)
	}
}

func decodeReview(body io.Reader) (*admissionv1.AdmissionReview, error) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(body).Decode(&review); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadReview, err)
	}
	gvk := review.GroupVersionKind()
	if gvk != admissionv1.SchemeGroupVersion.WithKind("AdmissionReview") || review.Request == nil {
		return nil, fmt.Errorf("%w: apiVersion %q kind %q", ErrBadReview, review.APIVersion, review.Kind)
	}
	return &review, nil
}

// Review answers one request: an Ingress or HTTPRoute of ours, created or
// updated, is checked (Check, CheckRoute); anything else is allowed as it
// is.
func (h *Handler) Review(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	if isRoute(req) {
		return h.reviewRoute(req, resp)
	}
	ing, skip, err := ingressOf(req)
	if err != nil {
		h.log.Warn("admission request not an Ingress", "uid", req.UID, "kind", req.Kind.String(), "err", err)
		return deny(resp, http.StatusBadRequest, err.Error())
	}
	if skip || !h.ours(ing) {
		return resp
	}
	v, err := Check(h.src, ing)
	if err == nil && v.Allowed() {
		var conflicts []string
		conflicts, err = Conflicts(ing, h.neighbours(ing))
		v.Refusals = append(v.Refusals, conflicts...)
	}
	if err != nil {
		return deny(resp, http.StatusBadRequest, err.Error())
	}
	return h.answer(req, resp, "Ingress", v)
}

// answer writes verdict v of the object of req (of kind) into resp.
func (h *Handler) answer(req *admissionv1.AdmissionRequest, resp *admissionv1.AdmissionResponse, kind string, v Verdict) *admissionv1.AdmissionResponse {
	resp.Warnings = bounded(v.Warnings, maxItemRunes, maxWarnings)
	h.log.Info("object reviewed", "kind", kind, "namespace", req.Namespace, "name", req.Name, "operation", req.Operation,
		"allowed", v.Allowed(), "refusals", len(v.Refusals), "warnings", len(v.Warnings))
	if !v.Allowed() {
		msg := fmt.Sprintf("ingress-sync would not serve all of %s %s/%s: %s", kind, req.Namespace, req.Name,
			strings.Join(bounded(v.Refusals, maxReasonRunes, len(v.Refusals)), "; and "))
		return deny(resp, http.StatusUnprocessableEntity, msg)
	}
	return resp
}

// ingressOf decodes the Ingress of a CREATE or UPDATE; skip is true for
// any other operation, resource or subresource.
func ingressOf(req *admissionv1.AdmissionRequest) (*networkingv1.Ingress, bool, error) {
	if req.Kind.Group != networkingv1.GroupName || req.Kind.Kind != "Ingress" || req.SubResource != "" {
		return nil, true, nil
	}
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return nil, true, nil
	}
	if req.Kind.Version != "v1" {
		return nil, false, fmt.Errorf("%w: version %q", ErrNotIngress, req.Kind.Version)
	}
	var ing networkingv1.Ingress
	if err := json.Unmarshal(req.Object.Raw, &ing); err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrNotIngress, err)
	}
	if ing.Namespace == "" {
		ing.Namespace = req.Namespace // a CREATE may leave it to the request
	}
	if ing.Name == "" {
		ing.Name = req.Name
	}
	return &ing, false, nil
}

// neighbours are the stored Ingresses of our classes, other than ing, that
// may hold one of its paths on one of its hosts, at most maxNeighbours.
func (h *Handler) neighbours(ing *networkingv1.Ingress) []*networkingv1.Ingress {
	if h.opts.Neighbours == nil {
		return nil
	}
	ours := h.classRule()
	seen := map[*networkingv1.Ingress]bool{}
	var out []*networkingv1.Ingress
	for _, host := range hostsOf(ing) {
		for _, n := range h.opts.Neighbours(host, pathsOf(ing, host)) {
			if len(out) == maxNeighbours {
				return out
			}
			if (n.Name == ing.Name && n.Namespace == ing.Namespace) || seen[n] || !ours(n) {
				continue
			}
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// pathsOf are the paths of ing's rules for host.
func pathsOf(ing *networkingv1.Ingress, host string) []string {
	var out []string
	for i := range ing.Spec.Rules {
		r := &ing.Spec.Rules[i]
		if r.HTTP == nil || hostOf(r) != host {
			continue
		}
		for j := range r.HTTP.Paths {
			out = append(out, r.HTTP.Paths[j].Path)
		}
	}
	return out
}

// ours applies the class rule; without IngressClasses, every Ingress.
func (h *Handler) ours(ing *networkingv1.Ingress) bool { return h.classRule()(ing) }

// classRule is the class rule with the IngressClasses of now.
func (h *Handler) classRule() func(*networkingv1.Ingress) bool {
	if h.opts.IngressClasses == nil {
		return func(*networkingv1.Ingress) bool { return true }
	}
	classes := h.opts.IngressClasses()
	return func(ing *networkingv1.Ingress) bool { return ingress.Serves(ing, classes, h.opts.Classes) }
}

func deny(resp *admissionv1.AdmissionResponse, code int32, msg string) *admissionv1.AdmissionResponse {
	resp.Allowed = false
	resp.Result = &metav1.Status{Status: metav1.StatusFailure, Code: code, Message: msg,
		Reason: metav1.StatusReasonInvalid}
	return resp
}

// bounded returns at most n items, each printable and at most runes
// long; the last one says how many were left off.
func bounded(items []string, runes, n int) []string {
	out := make([]string, 0, min(len(items), n))
	for i, s := range items {
		if i == n-1 && len(items) > n {
			out = append(out, fmt.Sprintf("and %d more", len(items)-i))
			break
		}
		out = append(out, clip(printable(s), runes))
	}
	return out
}

func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, s)
}

func clip(s string, runes int) string {
	if utf8.RuneCountInString(s) <= runes {
		return s
	}
	r := []rune(s)
	return string(r[:runes-1]) + "…"
}

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}
