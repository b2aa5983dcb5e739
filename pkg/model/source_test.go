package model

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/ingress"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// routeSource is a second source for the build's tests: an HTTPRoute is
// one Prefix "/" path to its first BackendRef, on the hostname of the
// Gateway its first parentRef names, so that its translation depends on
// another object the source keeps (as the Gateway API's does).
type routeSource struct {
	gateways map[intent.Key]string // hostname of each Gateway
	routes   map[intent.Key]*gatewayv1.HTTPRoute
}

func newRouteSource() *routeSource {
	return &routeSource{gateways: map[intent.Key]string{}, routes: map[intent.Key]*gatewayv1.HTTPRoute{}}
}

func (src *routeSource) Takes(kind events.Kind) (ok, route bool) {
	return kind == events.KindHTTPRoute || kind == events.KindGateway, kind == events.KindHTTPRoute
}

func (src *routeSource) Translate(kind events.Kind, key intent.Key, obj runtime.Object) (*intent.Entry, error) {
	r, ok := obj.(*gatewayv1.HTTPRoute)
	if !ok {
		return nil, fmt.Errorf("%w: %T", intent.ErrWrongType, obj)
	}
	src.routes[key] = r
	return src.entry(key, r), nil
}

func (src *routeSource) entry(key intent.Key, r *gatewayv1.HTTPRoute) *intent.Entry {
	e := &intent.Entry{Origin: intent.Origin{Kind: string(events.KindHTTPRoute), Namespace: key.Namespace, Name: key.Name},
		Key: key, Name: key.String(), Settings: &intent.Settings{}, Created: r.CreationTimestamp.Unix()}
	host := src.gateways[intent.Key{Namespace: key.Namespace, Name: string(r.Spec.ParentRefs[0].Name)}]
	if host == "" {
		e.Problems = []string{"no Gateway accepts it"}
		return e
	}
	ref := r.Spec.Rules[0].BackendRefs[0]
	e.Rules = []intent.Host{{Host: host, Raw: host, Paths: []intent.Path{{Path: "/", PathType: config.PathPrefix, Raw: "/",
		Backend: intent.BackendRef{Service: string(ref.Name), PortNumber: int32(*ref.Port)}}}}}
	e.Hosts = []string{host}
	e.Services = []intent.Key{{Namespace: key.Namespace, Name: string(ref.Name)}}
	return e
}

func (src *routeSource) Keep(kind events.Kind, key intent.Key, obj runtime.Object) ([]*intent.Entry, error) {
	if kind == events.KindHTTPRoute {
		delete(src.routes, key) // deleted: the Store removes its entry
		return nil, nil
	}
	if obj == nil {
		delete(src.gateways, key)
	} else {
		src.gateways[key] = string(*obj.(*gatewayv1.Gateway).Spec.Listeners[0].Hostname)
	}
	var again []*intent.Entry
	for k, r := range src.routes {
		if k.Namespace == key.Namespace && string(r.Spec.ParentRefs[0].Name) == key.Name {
			again = append(again, src.entry(k, r))
		}
	}
	return again, nil
}

func (src *routeSource) Has(kind events.Kind, key intent.Key) bool {
	_, ok := src.gateways[key]
	return ok
}

func (src *routeSource) Len() int { return len(src.gateways) }

func (src *routeSource) Serving(intent.Classes) func(*intent.Entry) bool {
	return func(*intent.Entry) bool { return true }
}

func testGateway(ns, name, host string) *gatewayv1.Gateway {
	h := gatewayv1.Hostname(host)
	return &gatewayv1.Gateway{ObjectMeta: objMeta(ns, name),
		Spec: gatewayv1.GatewaySpec{Listeners: []gatewayv1.Listener{{Name: "http", Hostname: &h, Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}
}

func testRoute(ns, name, gateway, svc string, port int32) *gatewayv1.HTTPRoute {
	p := gatewayv1.PortNumber(port)
	return &gatewayv1.HTTPRoute{ObjectMeta: objMeta(ns, name), Spec: gatewayv1.HTTPRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(gateway)}}},
		Rules: []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
			BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(svc), Port: &p}}}}}}}}
}

// TestSecondSource: a Store takes a second source beside Ingress. Its
// entries never collide with an Ingress of the same name; an object its
// routes depend on makes them again (Keep), and the Store indexes and
// builds the new ones; the Incremental stays equal to Build throughout.
func TestSecondSource(t *testing.T) {
	opts := testOptions()
	in := NewIncremental(NewStore(ingress.NewSource(), newRouteSource()), opts)
	steps := []struct {
		obj   runtime.Object
		hosts []string
	}{
		{service("d", "web", svcPort("http", 80)), []string{"_"}},
		{slice("d", "web-1", "web", "http", 80, ready("10.0.0.1")), []string{"_"}},
		{testRoute("d", "app", "gw", "web", 80), []string{"_"}},
		{testGateway("d", "gw", "a.example.com"), []string{"_", "a.example.com"}},
		{newIngress("d", "app", rule("b.example.com", prefix("/", "web", 80))), []string{"_", "a.example.com", "b.example.com"}},
		{testGateway("d", "gw", "c.example.com"), []string{"_", "b.example.com", "c.example.com"}},
	}
	for i, step := range steps {
		if _, err := in.Apply(upsertEvent(step.obj)); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		got, want := in.Build(), Build(in.Store(), opts)
		if !reflect.DeepEqual(exported(got), exported(want)) {
			t.Fatalf("step %d: incremental differs from Build:\n%s", i, firstDiff(got, want))
		}
		var hosts []string
		for _, s := range got.Servers {
			hosts = append(hosts, s.Hostname)
		}
		if !slices.Equal(hosts, step.hosts) {
			t.Fatalf("step %d: servers %q, want %q (problems %q)", i, hosts, step.hosts, problemStrings(got.Problems))
		}
	}
	s := in.Store()
	if got := s.referrers(s.entriesByService, "d", "web"); !slices.Equal(got, []string{"d/app", "d/app"}) {
		t.Fatalf("entries naming Service d/web: %q, want the HTTPRoute's and the Ingress's", got)
	}
	if !s.Has(events.KindHTTPRoute, "d", "app") || !s.Has(events.KindIngress, "d", "app") || !s.Has(events.KindGateway, "d", "gw") {
		t.Fatal("the Store lost an object of one of its sources")
	}
	if _, err := in.Apply(events.Event{Op: events.OpDelete, Kind: events.KindHTTPRoute, Namespace: "d", Name: "app"}); err != nil {
		t.Fatal(err)
	}
	if got := Build(s, opts); len(got.Servers) != 2 || got.Servers[1].Hostname != "b.example.com" {
		t.Fatalf("after the HTTPRoute's delete: %d servers, want _ and the Ingress's", len(got.Servers))
	}
}
