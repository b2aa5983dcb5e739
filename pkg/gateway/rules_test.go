package gateway

import (
	"reflect"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events/eventstest"
)

func TestGatewayOurs(t *testing.T) {
	ours, foreign := eventstest.GatewayClass(), eventstest.GatewayClass()
	foreign.Name, foreign.Spec.ControllerName = "other", "example.com/other"
	classes := map[string]*gatewayv1.GatewayClass{ours.Name: ours, foreign.Name: foreign}
	class := func(name string) *gatewayv1.GatewayClass { return classes[name] }
	gw := eventstest.Gateway()
	for _, tc := range []struct {
		className, controller string
		want                  bool
	}{
		{"ingress-sync", eventstest.GatewayController, true},
		{"ingress-sync", "example.com/other", false},
		{"other", eventstest.GatewayController, false},
		{"missing", eventstest.GatewayController, false},
		{"ingress-sync", "", false},
	} {
		gw.Spec.GatewayClassName = gatewayv1.ObjectName(tc.className)
		if got := Ours(gw, class, tc.controller); got != tc.want {
			t.Errorf("Ours(class %q, controller %q) = %v, want %v", tc.className, tc.controller, got, tc.want)
		}
	}
}

// TestRouteOurs: a route is ours when one of its parentRefs names a
// Gateway of ours, whichever parentRef it is.
func TestRouteOurs(t *testing.T) {
	ours, foreign := eventstest.GatewayClass(), eventstest.GatewayClass()
	foreign.Name, foreign.Spec.ControllerName = "other", "example.com/other"
	classes := map[string]*gatewayv1.GatewayClass{ours.Name: ours, foreign.Name: foreign}
	class := func(name string) *gatewayv1.GatewayClass { return classes[name] }
	r := eventstest.HTTPRoute() // parents shop/edge and infra/shared
	for _, tc := range []struct {
		name     string
		gateways map[string]string // "namespace/name" to class
		want     bool
	}{
		{"first parent ours", map[string]string{"shop/edge": "ingress-sync"}, true},
		{"second parent ours", map[string]string{"shop/edge": "other", "infra/shared": "ingress-sync"}, true},
		{"parents of another controller", map[string]string{"shop/edge": "other", "infra/shared": "other"}, false},
		{"a Gateway of ours not named", map[string]string{"shop/shared": "ingress-sync"}, false},
		{"no Gateways", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lookup := func(ns, name string) *gatewayv1.Gateway {
				c, ok := tc.gateways[ns+"/"+name]
				if !ok {
					return nil
				}
				gw := eventstest.Gateway()
				gw.Namespace, gw.Name, gw.Spec.GatewayClassName = ns, name, gatewayv1.ObjectName(c)
				return gw
			}
			if got := RouteOurs(r, lookup, class, eventstest.GatewayController); got != tc.want {
				t.Errorf("RouteOurs = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestGatewaySecretRefs(t *testing.T) {
	gw := eventstest.Gateway()
	tls := gw.Spec.Listeners[1].TLS
	tls.CertificateRefs = append(tls.CertificateRefs,
		gatewayv1.SecretObjectReference{Name: "shop-tls"}, // twice
		gatewayv1.SecretObjectReference{Kind: new(gatewayv1.Kind("ConfigMap")), Name: "not-a-secret"},
		gatewayv1.SecretObjectReference{Group: new(gatewayv1.Group("example.com")), Kind: new(gatewayv1.Kind("Secret")), Name: "other-group"})
	want := []SecretRef{{"shop", "shop-tls"}, {"certs", "wildcard"}}
	if got := SecretRefs(gw); !reflect.DeepEqual(got, want) {
		t.Errorf("GatewaySecretRefs = %v, want %v", got, want)
	}
}

func TestReferenceGranted(t *testing.T) {
	grant := eventstest.ReferenceGrant() // in canary: Gateways and HTTPRoutes of shop to every Secret and Service api-canary
	grants := []*gatewayv1.ReferenceGrant{grant}
	gwFrom := GrantFrom{Group: gatewayv1.GroupName, Kind: "Gateway", Namespace: "shop"}
	secret := func(ns, name string) GrantTo { return GrantTo{Kind: "Secret", Namespace: ns, Name: name} }
	for _, tc := range []struct {
		name string
		from GrantFrom
		to   GrantTo
		want bool
	}{
		{"same namespace needs no grant", gwFrom, secret("shop", "x"), true},
		{"any Secret of canary", gwFrom, secret("canary", "x"), true},
		{"named Service", GrantFrom{gatewayv1.GroupName, "HTTPRoute", "shop"}, GrantTo{"", "Service", "canary", "api-canary"}, true},
		{"other Service", GrantFrom{gatewayv1.GroupName, "HTTPRoute", "shop"}, GrantTo{"", "Service", "canary", "db"}, false},
		{"other namespace refers", GrantFrom{gatewayv1.GroupName, "Gateway", "evil"}, secret("canary", "x"), false},
		{"grant of another namespace", gwFrom, secret("certs", "x"), false},
		{"other kind refers", GrantFrom{gatewayv1.GroupName, "GRPCRoute", "shop"}, secret("canary", "x"), false},
		{"other group referred", gwFrom, GrantTo{"example.com", "Secret", "canary", "x"}, false},
	} {
		if got := ReferenceGranted(grants, tc.from, tc.to); got != tc.want {
			t.Errorf("%s: ReferenceGranted = %v, want %v", tc.name, got, tc.want)
		}
	}
	if ReferenceGranted(nil, gwFrom, secret("canary", "x")) {
		t.Error("granted without any grant")
	}
}
