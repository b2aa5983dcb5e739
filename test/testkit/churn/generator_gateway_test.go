package churn

import (
	"errors"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

func httpRouteSpec() Spec {
	s := smallSpec()
	s.Routes, s.TLSEvery, s.SecretRate = events.KindHTTPRoute, 0, 0
	return s
}

// TestHTTPRouteSetup: with Routes HTTPRoute, the setup writes the
// GatewayClass and Gateway before the routes, and one HTTPRoute per base
// app (no Ingress), each attached to the Gateway with the app's host.
func TestHTTPRouteSetup(t *testing.T) {
	spec := httpRouteSpec()
	g, err := NewGenerator(spec, testPool)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[events.Kind]int{}
	for _, ch := range g.Setup("k8s.io/ingress-sync") {
		k := ch.Key().Kind
		seen[k]++
		r, ok := ch.Object.(*gatewayv1.HTTPRoute)
		if !ok {
			continue
		}
		if seen[events.KindGateway] != 1 || seen[events.KindGatewayClass] != 1 {
			t.Fatalf("HTTPRoute %s before the GatewayClass and Gateway (%v)", ch.Key(), seen)
		}
		p := r.Spec.ParentRefs
		if len(p) != 1 || p[0].Name != GatewayName || p[0].Namespace == nil || string(*p[0].Namespace) != g.GatewayNamespace() {
			t.Fatalf("HTTPRoute %s: parentRefs %+v", ch.Key(), p)
		}
		if len(r.Spec.Hostnames) != 1 || string(r.Spec.Hostnames[0]) != r.Name+"."+spec.Domain {
			t.Fatalf("HTTPRoute %s: hostnames %v", ch.Key(), r.Spec.Hostnames)
		}
	}
	if seen[events.KindHTTPRoute] != spec.Ingresses || seen[events.KindIngress] != 0 || seen[events.KindSecret] != 0 {
		t.Fatalf("setup kinds %v: want %d HTTPRoutes, no Ingress, no Secret", seen, spec.Ingresses)
	}
}

// TestHTTPRouteChurn: the route churn creates, updates and deletes
// HTTPRoutes, the update toggling the /api rule.
func TestHTTPRouteChurn(t *testing.T) {
	spec := httpRouteSpec()
	spec.EndpointRate = 0
	g, err := NewGenerator(spec, testPool)
	if err != nil {
		t.Fatal(err)
	}
	ops := map[events.Op]int{}
	for ch, ok := g.Next(); ok; ch, ok = g.Next() {
		r, isRoute := ch.Object.(*gatewayv1.HTTPRoute)
		if !isRoute {
			t.Fatalf("change %d: %T, want an HTTPRoute", ch.Seq, ch.Object)
		}
		if n := len(r.Spec.Rules); n < 1 || n > 2 {
			t.Fatalf("change %d: %d rules", ch.Seq, n)
		}
		ops[ch.Op]++
	}
	if ops[events.OpCreate] == 0 || ops[events.OpUpdate] == 0 || ops[events.OpDelete] == 0 {
		t.Fatalf("ops %v: want creates, updates and deletes", ops)
	}
}

func TestHTTPRouteSpecValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Spec)
		ok   bool
	}{
		{"HTTPRoutes without TLS", func(*Spec) {}, true},
		{"HTTPRoutes with TLS", func(s *Spec) { s.TLSEvery = 10 }, false},
		{"HTTPRoutes with Secret rotation", func(s *Spec) { s.TLSEvery, s.SecretRate = 10, 1 }, false},
		{"another kind", func(s *Spec) { s.Routes = events.KindService }, false},
		{"Ingresses by default", func(s *Spec) { s.Routes = "" }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := httpRouteSpec()
			tc.edit(&spec)
			err := spec.Validate()
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalidSpec)) {
				t.Fatalf("Validate: %v, want ok %v", err, tc.ok)
			}
		})
	}
}
