package model

import (
	"fmt"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/events/eventstest"
	"github.com/ingress-sync/ingress-sync/test/testkit/cputime"
)

// benchRoutes returns a GatewayClass, a Gateway with one HTTP listener
// taking routes of every namespace, its Service, and n HTTPRoutes, each
// with its own host and a Prefix path to its own Service, which has an
// EndpointSlice of 10 ready endpoints.
func benchRoutes(n int) []runtime.Object {
	edge := eventstest.Gateway()
	edge.Spec.Listeners = []gatewayv1.Listener{{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType,
		AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr(gatewayv1.NamespacesFromAll)}}}}
	out := []runtime.Object{eventstest.GatewayClass(), edge, gatewayService(edge, 10000)}
	for i := range n {
		out = append(out, benchRoute(edge, i)...)
	}
	return out
}

// benchRoute is the i-th route of benchRoutes with its Service and slice.
func benchRoute(edge *gatewayv1.Gateway, i int) []runtime.Object {
	ns, name := fmt.Sprintf("ns-%d", i%100), fmt.Sprintf("app-%d", i)
	eps := make([]discoveryv1.Endpoint, 10)
	for j := range eps {
		eps[j] = ready(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, j))
	}
	r := &gatewayv1.HTTPRoute{ObjectMeta: objMeta(ns, name)}
	r.CreationTimestamp = metav1.NewTime(epoch.Add(time.Duration(i) * time.Second))
	r.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: gatewayv1.ObjectName(edge.Name), Namespace: ptr(gatewayv1.Namespace(edge.Namespace))}}
	r.Spec.Hostnames = []gatewayv1.Hostname{gatewayv1.Hostname(name + ".example.com")}
	r.Spec.Rules = []gatewayv1.HTTPRouteRule{{BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
		BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(name), Port: ptr(gatewayv1.PortNumber(80))}}}}}}
	return []runtime.Object{service(ns, name, svcPort("http", 80)), slice(ns, name+"-abcde", name, "http", 8080, eps...), r}
}

// BenchmarkHTTPRouteCreate is the syncer's work for one new HTTPRoute (its
// Service and slice already there) at n routes: Incremental.Apply and
// Build, and the Diff against the previous Configuration.
func BenchmarkHTTPRouteCreate(b *testing.B) {
	for _, n := range []int{3000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s := newGatewayStore()
			for _, o := range benchRoutes(n) {
				if _, err := s.Apply(upsertEvent(o)); err != nil {
					b.Fatal(err)
				}
			}
			edge := eventstest.Gateway()
			in := NewIncremental(s, testOptions())
			cur := in.Build()
			b.ReportAllocs()
			b.ResetTimer()
			start := cputime.Process()
			i := n
			for b.Loop() {
				objs := benchRoute(edge, i)
				i++
				for _, o := range objs {
					if _, err := in.Apply(upsertEvent(o)); err != nil {
						b.Fatal(err)
					}
				}
				next := in.Build()
				if ch := config.Diff(cur, next); len(ch.ServersUpserted) != 1 || ch.Reload {
					b.Fatalf("change %+v", summarize(ch))
				}
				cur = next
			}
			reportCPU(b, start)
		})
	}
}
