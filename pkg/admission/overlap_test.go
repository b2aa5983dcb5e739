package admission

import (
	"strings"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/ingress"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	admissionv1 "k8s.io/api/admission/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// named is ing as Ingress ns/name created at second created (0: not yet,
// a CREATE).
func named(ing *networkingv1.Ingress, ns, name string, created int64) *networkingv1.Ingress {
	ing.Namespace, ing.Name = ns, name
	if created > 0 {
		ing.CreationTimestamp = metav1.NewTime(time.Unix(created, 0))
	}
	return ing
}

func withPathType(ing *networkingv1.Ingress, t networkingv1.PathType) *networkingv1.Ingress {
	ing.Spec.Rules[0].HTTP.Paths[0].PathType = &t
	return ing
}

func TestConflicts(t *testing.T) {
	old := named(newIngress("shop.example.com", "/api", nil), "shop", "old", 100)
	canary := map[string]string{prefix + "canary": "true", prefix + "canary-weight": "10"}
	tests := []struct {
		name       string
		ing        *networkingv1.Ingress
		neighbours []*networkingv1.Ingress
		want       []string // substrings of the one conflict expected; none: none
	}{
		{name: "same host and path, created now", ing: named(newIngress("shop.example.com", "/api", nil), "team", "new", 0),
			neighbours: []*networkingv1.Ingress{old},
			want:       []string{"host shop.example.com path /api (Prefix): conflicts with Ingress shop/old, which is older and is used"}},
		{name: "trailing slash is the same prefix", ing: named(newIngress("shop.example.com", "/api/", nil), "team", "new", 0),
			neighbours: []*networkingv1.Ingress{old}, want: []string{"conflicts with Ingress shop/old"}},
		{name: "an older Ingress updated takes a newer one's path", ing: named(newIngress("shop.example.com", "/api", nil), "team", "oldest", 50),
			neighbours: []*networkingv1.Ingress{old},
			want:       []string{"would leave a path of Ingress shop/old unserved", "conflicts with Ingress team/oldest"}},
		{name: "another path", ing: named(newIngress("shop.example.com", "/web", nil), "team", "new", 0), neighbours: []*networkingv1.Ingress{old}},
		{name: "another host", ing: named(newIngress("www.example.com", "/api", nil), "team", "new", 0), neighbours: []*networkingv1.Ingress{old}},
		{name: "another path type", ing: named(withPathType(newIngress("shop.example.com", "/api", nil), networkingv1.PathTypeExact), "team", "new", 0),
			neighbours: []*networkingv1.Ingress{old}},
		{name: "a canary adds no path", ing: named(newIngress("shop.example.com", "/api", canary), "team", "new", 0), neighbours: []*networkingv1.Ingress{old}},
		{name: "no neighbours", ing: named(newIngress("shop.example.com", "/api", nil), "team", "new", 0)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Conflicts(tc.ing, tc.neighbours)
			if err != nil {
				t.Fatal(err)
			}
			checkContains(t, "conflicts", got, tc.want)
		})
	}
}

// TestReviewConflicts: the Handler reads the neighbours of every host of
// the Ingress, leaves out the Ingress itself (an UPDATE) and those of
// other classes.
func TestReviewConflicts(t *testing.T) {
	old := named(newIngress("shop.example.com", "/api", nil), "shop", "old", 100)
	other := named(newIngress("shop.example.com", "/api", nil), "shop", "other-class", 10)
	otherClass := "other"
	other.Spec.IngressClassName = &otherClass
	classes := func() map[string]*networkingv1.IngressClass {
		return map[string]*networkingv1.IngressClass{"other": {ObjectMeta: metav1.ObjectMeta{Name: "other"},
			Spec: networkingv1.IngressClassSpec{Controller: "example.com/other"}}}
	}
	tests := []struct {
		name       string
		ing        *networkingv1.Ingress
		neighbours []*networkingv1.Ingress
		allowed    bool
	}{
		{name: "conflict refused", ing: named(newIngress("shop.example.com", "/api", nil), "team", "new", 0), neighbours: []*networkingv1.Ingress{old}},
		{name: "conflict on a second host", ing: named(withRule(newIngress("www.example.com", "/", nil), "shop.example.com", "/api"), "team", "new", 0),
			neighbours: []*networkingv1.Ingress{old}},
		{name: "the Ingress itself updated", ing: named(newIngress("shop.example.com", "/api", map[string]string{prefix + "proxy-body-size": "8m"}), "shop", "old", 100),
			neighbours: []*networkingv1.Ingress{old}, allowed: true},
		{name: "another class's Ingress is no conflict", ing: named(newIngress("shop.example.com", "/api", nil), "team", "new", 0),
			neighbours: []*networkingv1.Ingress{other}, allowed: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			byHost := map[string][]*networkingv1.Ingress{"shop.example.com": tc.neighbours}
			h := NewHandler(Options{Logger: quiet, IngressClasses: classes,
				Classes:    intent.Classes{Controller: ingress.DefaultControllerClass, Class: ingress.DefaultIngressClass},
				Neighbours: func(host string, _ []string) []*networkingv1.Ingress { return byHost[host] }})
			resp := h.Review(&admissionv1.AdmissionRequest{UID: "u", Kind: ingressGVK, Operation: admissionv1.Create,
				Namespace: tc.ing.Namespace, Name: tc.ing.Name, Object: runtime.RawExtension{Raw: mustJSON(t, tc.ing)}})
			if resp.Allowed != tc.allowed {
				t.Fatalf("allowed = %v (%+v), want %v", resp.Allowed, resp.Result, tc.allowed)
			}
			if !tc.allowed && !strings.Contains(resp.Result.Message, "conflicts with Ingress shop/old") {
				t.Errorf("message %q, want the conflict with shop/old", resp.Result.Message)
			}
		})
	}
}

// withRule adds a rule with one Prefix path to svc:80.
func withRule(ing *networkingv1.Ingress, host, path string) *networkingv1.Ingress {
	r := newIngress(host, path, nil).Spec.Rules[0]
	ing.Spec.Rules = append(ing.Spec.Rules, r)
	return ing
}
