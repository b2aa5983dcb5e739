package gateway

import (
	"errors"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// bySelector lets the routes of the namespaces sel selects attach to l
// (sel nil: from Selector without a selector).
func bySelector(l gatewayv1.Listener, sel *metav1.LabelSelector) gatewayv1.Listener {
	l.AllowedRoutes = &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{
		From: ptr.To(gatewayv1.NamespacesFromSelector), Selector: sel}}
	return l
}

func matchLabels(kv ...string) *metav1.LabelSelector {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return &metav1.LabelSelector{MatchLabels: m}
}

func expression(key string, op metav1.LabelSelectorOperator, values ...string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: op, Values: values}}}
}

func namespace(name string, kv ...string) *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if len(kv) > 0 {
		ns.Labels = matchLabels(kv...).MatchLabels
	}
	return ns
}

func TestAllowsRouteSelector(t *testing.T) {
	edge := gw("infra", "edge", "ours")
	web := map[string]string{"team": "web", "env": "prod"}
	tests := []struct {
		name   string
		sel    *metav1.LabelSelector
		labels map[string]string
		want   bool
	}{
		{name: "matchLabels match", sel: matchLabels("team", "web"), labels: web, want: true},
		{name: "matchLabels, every label must match", sel: matchLabels("team", "web", "env", "dev"), labels: web},
		{name: "matchLabels, no match", sel: matchLabels("team", "db"), labels: web},
		{name: "matchLabels, namespace without labels", sel: matchLabels("team", "web")},
		{name: "matchExpressions In", sel: expression("env", metav1.LabelSelectorOpIn, "prod", "staging"), labels: web, want: true},
		{name: "matchExpressions NotIn", sel: expression("env", metav1.LabelSelectorOpNotIn, "prod"), labels: web},
		{name: "matchExpressions Exists", sel: expression("team", metav1.LabelSelectorOpExists), labels: web, want: true},
		{name: "matchExpressions DoesNotExist", sel: expression("team", metav1.LabelSelectorOpDoesNotExist), labels: web},
		{name: "empty selector: every namespace", sel: &metav1.LabelSelector{}, want: true},
		{name: "invalid operator admits nothing", sel: expression("team", "Near", "web"), labels: web},
		{name: "In without values admits nothing", sel: expression("team", metav1.LabelSelectorOpIn), labels: web},
		{name: "no selector admits nothing", labels: web},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := bySelector(listener("http", 80, ""), tc.sel)
			if got := allowsRoute(edge, &l, &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "app"}}, tc.labels); got != tc.want {
				t.Errorf("allowsRoute = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestNamespaceLabelsTranslateAgain: a change of a Namespace's labels
// makes again the routes of that Namespace attached to a Gateway that
// selects namespaces by label, and only those; the route moves in and out
// with the labels.
func TestNamespaceLabelsTranslateAgain(t *testing.T) {
	src := NewSource(testController)
	edge := gw("infra", "edge", "ours", bySelector(listener("http", 80, "a.example.com"), matchLabels("team", "web")))
	all := gw("infra", "all", "ours", allNamespaces(listener("http", 81, "b.example.com")))
	keepAll(t, src, class("ours", testController), edge, all)
	observe(t, src, gatewayService(edge))
	observe(t, src, gatewayService(all))
	toEdge := httpRoute(nil, rule(nil, backend("web", 8)))
	toAll := httpRoute(nil, rule(nil, backend("web", 8)))
	toAll.Name, toAll.Spec.ParentRefs[0].Name = "other", "all"
	other := httpRoute(nil, rule(nil, backend("web", 8)))
	other.Namespace, other.Spec.ParentRefs[0].Name = "elsewhere", "all"
	for _, r := range []*gatewayv1.HTTPRoute{toEdge, toAll, other} {
		if _, err := src.Translate(events.KindHTTPRoute, intent.Key{Namespace: r.Namespace, Name: r.Name}, r); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name  string
		ns    *corev1.Namespace // nil: app deleted
		hosts []string          // of app/web, when made again
		again bool
	}{
		{name: "labelled to match", ns: namespace("app", "team", "web"), hosts: []string{"10080:a.example.com"}, again: true},
		{name: "the same labels again", ns: namespace("app", "team", "web")},
		{name: "labels that do not match", ns: namespace("app", "team", "db"), again: true},
		{name: "labels that match again", ns: namespace("app", "team", "web", "env", "prod"), hosts: []string{"10080:a.example.com"}, again: true},
		{name: "deleted", again: true},
	}
	for _, s := range steps {
		var obj any = s.ns
		if s.ns == nil {
			obj = nil
		}
		again, err := keepNamespace(src, "app", obj)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if !s.again {
			if len(again) != 0 {
				t.Errorf("%s: %d entries made again, want none", s.name, len(again))
			}
			continue
		}
		if len(again) != 1 || again[0].Key != (intent.Key{Namespace: "app", Name: "web"}) {
			t.Fatalf("%s: made again %+v, want app/web alone", s.name, again)
		}
		if !slices.Equal(again[0].Hosts, s.hosts) {
			t.Errorf("%s: hosts %q, want %q", s.name, again[0].Hosts, s.hosts)
		}
	}
	if again, err := keepNamespace(src, "elsewhere", namespace("elsewhere", "team", "db")); err != nil || len(again) != 0 {
		t.Errorf("a Namespace whose routes name no selecting Gateway: %d entries, %v", len(again), err)
	}
	if _, err := src.Keep(events.KindNamespace, intent.Key{Name: "app"}, edge); !errors.Is(err, intent.ErrWrongType) {
		t.Errorf("a Gateway kept as a Namespace: %v", err)
	}
	if !src.KeepsNarrowly(events.KindNamespace) || src.KeepsNarrowly(events.KindGateway) {
		t.Error("KeepsNarrowly: Namespaces only")
	}
}

func keepAll(t *testing.T, src *Source, objs ...any) {
	t.Helper()
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *gatewayv1.GatewayClass:
			_, err = src.Keep(events.KindGatewayClass, intent.Key{Name: o.Name}, o)
		case *gatewayv1.Gateway:
			_, err = src.Keep(events.KindGateway, intent.Key{Namespace: o.Namespace, Name: o.Name}, o)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func keepNamespace(src *Source, name string, obj any) ([]*intent.Entry, error) {
	if obj == nil {
		return src.Keep(events.KindNamespace, intent.Key{Name: name}, nil)
	}
	return src.Keep(events.KindNamespace, intent.Key{Name: name}, obj.(*corev1.Namespace))
}

// TestStatusSelector: a listener that selects namespaces by label counts
// the routes of the namespaces it selects and accepts them; the others
// are NotAllowedByListeners; an invalid selector makes the listener not
// Accepted.
func TestStatusSelector(t *testing.T) {
	served := Programming{Addresses: []gatewayv1.GatewayStatusAddress{{Value: "198.18.0.1"}}, Served: true}
	route := httpRoute([]string{"a.example.com"}, rule(nil, backend("web", 80)))
	const listenerOK = "Accepted=True/Accepted Programmed=True/Programmed ResolvedRefs=True/ResolvedRefs Conflicted=False/NoConflicts"
	tests := []struct {
		name      string
		sel       *metav1.LabelSelector
		ns        *corev1.Namespace
		gateway   []string
		routeCond string
	}{
		{name: "matchLabels selects the route's namespace", sel: matchLabels("team", "web"), ns: namespace("app", "team", "web"),
			gateway:   []string{"Accepted=True/Accepted Programmed=True/Programmed", "http kinds=[HTTPRoute,GRPCRoute] attached=1 " + listenerOK},
			routeCond: "Accepted=True/Accepted"},
		{name: "matchExpressions selects it", sel: expression("team", metav1.LabelSelectorOpIn, "web", "api"), ns: namespace("app", "team", "api"),
			gateway:   []string{"Accepted=True/Accepted Programmed=True/Programmed", "http kinds=[HTTPRoute,GRPCRoute] attached=1 " + listenerOK},
			routeCond: "Accepted=True/Accepted"},
		{name: "no match", sel: matchLabels("team", "web"), ns: namespace("app", "team", "db"),
			gateway:   []string{"Accepted=True/Accepted Programmed=True/Programmed", "http kinds=[HTTPRoute,GRPCRoute] attached=0 " + listenerOK},
			routeCond: "Accepted=False/NotAllowedByListeners"},
		{name: "namespace not known", sel: matchLabels("team", "web"),
			gateway:   []string{"Accepted=True/Accepted Programmed=True/Programmed", "http kinds=[HTTPRoute,GRPCRoute] attached=0 " + listenerOK},
			routeCond: "Accepted=False/NotAllowedByListeners"},
		{name: "invalid selector", sel: expression("team", "Near", "web"), ns: namespace("app", "team", "web"),
			gateway: []string{"Accepted=False/ListenersNotValid Programmed=False/Invalid",
				"http kinds=[HTTPRoute,GRPCRoute] attached=0 Accepted=False/UnsupportedValue Programmed=False/Invalid ResolvedRefs=True/ResolvedRefs Conflicted=False/NoConflicts"},
			routeCond: "Accepted=False/NotAllowedByListeners"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			edge := gw("infra", "edge", "ours", bySelector(listener("http", 80, ""), tc.sel))
			w := world(class("ours", testController), edge, route)
			w.Namespace = func(name string) *corev1.Namespace {
				if tc.ns != nil && tc.ns.Name == name {
					return tc.ns
				}
				return nil
			}
			if got := gatewaySummary(w.GatewayStatus(edge, served)); !slices.Equal(got, tc.gateway) {
				t.Errorf("Gateway status\n got %q\nwant %q", got, tc.gateway)
			}
			parents := w.RouteParents(route)
			if len(parents) != 1 {
				t.Fatalf("%d route parents, want 1", len(parents))
			}
			if got := conds(parents[0].Conditions[:1]); got != tc.routeCond {
				t.Errorf("route %s, want %s", got, tc.routeCond)
			}
		})
	}
}
