package model

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"time"

	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"

	"github.com/ingress-sync/ingress-sync/pkg/events/eventstest"
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// universe generates random events over a small set of objects, so that
// they often touch what other objects name: four Services (one with a
// named and a UDP port), their EndpointSlices (ready, not ready, moving
// between Services), seven Ingresses on five hosts and the default server,
// some on two, with the settings Build decides across hosts and per host
// (service-upstream, canary, ssl-passthrough, TLS, aliases, www
// redirects, default backends, balancing, another class), a TCP and a UDP
// services ConfigMap, two TLS Secrets and the controller ConfigMap; and,
// through the Gateway API source, three HTTPRoutes (one or two backends)
// on a Gateway whose hostname, class and allowedRoutes (its namespace, or
// those labelled team=web) change, and the labels of the routes'
// Namespace and of another.
//
// wide is the odds (one in wide) that an Ingress has a setting Build
// decides across hosts: low, and most Ingress events are rebuilt per host.
type universe struct {
	t    *testing.T
	rnd  *rand.Rand
	wide int
}

const propNS = "app"

func (u universe) pick(n int) int { return u.rnd.IntN(n) }

func (u universe) svcName() string { return "s" + strconv.Itoa(u.pick(4)) }

func (u universe) event() events.Event {
	switch u.pick(20) {
	case 17, 18:
		if u.pick(4) == 0 {
			return u.grpcRouteEvent()
		}
		return u.routeEvent()
	case 19:
		return u.gatewayEvent()
	case 11:
		return upsertEvent(fixtures.ConfigMap(propNS, "hdrs", "X-A", strconv.Itoa(u.pick(3))))
	case 12:
		return upsertEvent(fixtures.ConfigMap("ingress", "psh", "X-B", strconv.Itoa(u.pick(3))))
	case 0, 1, 2, 3, 4:
		return u.sliceEvent()
	case 5:
		return u.serviceEvent()
	case 6, 7, 13, 14, 15:
		return u.ingressEvent()
	case 8:
		return u.servicesConfigMap()
	case 9:
		if u.pick(2) == 0 {
			return deleteEvent(events.KindSecret, propNS, "tls")
		}
		return upsertEvent(tlsSecret(u.t, propNS, []string{"tls", "tls2"}[u.pick(2)], []string{"example", "other"}[u.pick(2)]))
	case 10:
		return upsertEvent(fixtures.ConfigMap("ingress", "cfg", "load-balance", []string{"round_robin", "ewma"}[u.pick(2)],
			"service-upstream", strconv.FormatBool(u.pick(4) == 0), "proxy-set-headers", []string{"ingress/psh", ""}[u.pick(2)]))
	}
	if u.pick(2) == 0 {
		return deleteEvent(events.KindIngress, propNS, "i"+strconv.Itoa(u.pick(7)))
	}
	return deleteEvent([]events.Kind{events.KindIngress, events.KindEndpointSlice, events.KindService}[u.pick(3)],
		propNS, []string{"i0", "e0", "s0"}[u.pick(3)])
}

func (u universe) sliceEvent() events.Event {
	name := "e" + strconv.Itoa(u.pick(6))
	if u.pick(6) == 0 {
		return deleteEvent(events.KindEndpointSlice, propNS, name)
	}
	var eps []discoveryv1.Endpoint
	for i := range u.pick(4) {
		addr := fmt.Sprintf("10.0.%d.%d", u.pick(2), i+u.pick(3))
		if u.pick(5) == 0 {
			eps = append(eps, notReady(addr))
		} else {
			eps = append(eps, ready(addr))
		}
	}
	port := []string{"http", "dns", "grpc"}[u.pick(3)]
	return upsertEvent(slice(propNS, name, u.svcName(), port, int32(8080+u.pick(2)), eps...))
}

func (u universe) serviceEvent() events.Event {
	name := u.svcName()
	s := service(propNS, name, svcPort("http", 80), udpPort("dns", 53), svcPort("grpc", int32(9000+u.pick(2))))
	s.Spec.ClusterIP = []string{"10.96.0.1", "10.96.0.2", corev1.ClusterIPNone}[u.pick(3)]
	if u.pick(6) == 0 {
		s.Spec.Ports = s.Spec.Ports[:1]
	}
	return upsertEvent(s)
}

// hosts are the rule hosts of the universe: www pairs for
// from-to-www-redirect, and "" for the default server.
var hosts = []string{"h0.example.com", "h1.example.com", "h2.example.com", "www.h0.example.com", "h3.example.com", ""}

func (u universe) ingressEvent() events.Event {
	name := "i" + strconv.Itoa(u.pick(7))
	host := hosts[u.pick(3)]
	if u.pick(3) == 0 {
		host = hosts[u.pick(len(hosts))]
	}
	opts := []ingOpt{created(u.pick(5)), rule(host, prefix([]string{"/", "/api"}[u.pick(2)], u.svcName(), []any{80, "http", "grpc"}[u.pick(3)]))}
	if u.pick(4) == 0 { // a second host
		opts = append(opts, rule(hosts[u.pick(len(hosts))], exact("/x", u.svcName(), 80)))
	}
	if u.pick(10) == 0 {
		opts = append(opts, className("other"))
	}
	if u.pick(u.wide) == 0 {
		opts = append(opts, u.hostWideOption(host)...)
	}
	return upsertEvent(newIngress(propNS, name, append(opts, u.ingressOption(host)...)...))
}

// hostWideOption returns settings that Build decides across hosts (see
// hostLocal) or per host (TLS, ssl-redirect).
func (u universe) hostWideOption(host string) []ingOpt {
	switch u.pick(9) {
	case 0:
		return []ingOpt{nginx("from-to-www-redirect", "true")}
	case 1:
		return []ingOpt{nginx("server-alias", hosts[u.pick(5)])}
	case 2:
		return []ingOpt{defaultBackend(u.svcName(), 80)}
	case 3:
		return []ingOpt{nginx("default-backend", u.svcName()), nginx("custom-http-errors", "503")}
	case 4:
		return []ingOpt{tlsFor("tls2", host)}
	case 5:
		return []ingOpt{tlsFor("tls"), nginx("ssl-redirect", "false")}
	case 6:
		return []ingOpt{nginx("canary", "true"), nginx("canary-by-header", "X-Canary")}
	case 7:
		return []ingOpt{nginx("load-balance", "ewma")}
	}
	return []ingOpt{nginx("auth-tls-secret", propNS+"/tls")}
}

func (u universe) ingressOption(host string) []ingOpt {
	var opts []ingOpt
	switch u.pick(8) {
	case 5:
		opts = append(opts, nginx("custom-headers", []string{"hdrs", propNS + "/hdrs"}[u.pick(2)]))
	case 6:
		opts = append(opts, nginx("auth-url", "http://auth.example.com/check"), nginx("auth-proxy-set-headers", "hdrs"))
	case 0:
		opts = append(opts, nginx("service-upstream", "true"))
	case 1:
		opts = append(opts, nginx("canary", "true"), nginx("canary-weight", "30"))
	case 2:
		opts = append(opts, nginx("ssl-passthrough", "true"))
	case 3:
		opts = append(opts, tlsFor("tls", host))
	case 4:
		opts = append(opts, nginx("affinity", "cookie"))
	}
	return opts
}

func (u universe) servicesConfigMap() events.Event {
	if u.pick(2) == 0 {
		return upsertEvent(fixtures.ConfigMap("ingress", "tcp", "9000", propNS+"/"+u.svcName()+":80", "9001", propNS+"/"+u.svcName()+":grpc"))
	}
	return upsertEvent(fixtures.ConfigMap("ingress", "udp", "5353", propNS+"/"+u.svcName()+":dns"))
}

func propOptions() Options {
	o := testOptions()
	o.ConfigMap = "ingress/cfg"
	o.TCPServicesConfigMap, o.UDPServicesConfigMap = "ingress/tcp", "ingress/udp"
	o.EnableSSLPassthrough = true
	o.DefaultBackendService = propNS + "/s3"
	return o
}

// TestIncrementalEqualsBuild applies random event sequences through an
// Incremental and compares, after every step, its Configuration with a
// full Build of the same Store: every field, Problems and the checksum;
// and Diff from the previous step with the Incremental's hints with a
// Diff of the same Configurations without them.
// A failure names the seed and the step.
func TestIncrementalEqualsBuild(t *testing.T) {
	seeds, steps := 200, 150
	if testing.Short() {
		seeds = 20
	}
	for seed := range seeds {
		u := universe{t: t, rnd: rand.New(rand.NewPCG(uint64(seed), 0x1e)), wide: 2 + seed%2*8}
		opts := propOptions()
		in := NewIncremental(newGatewayStore(), opts)
		var prev *config.Configuration
		for step := range steps {
			// One seed in three applies bursts of up to three events
			// before a Build, as the syncer coalesces them.
			var ev events.Event
			matters := false
			for range 1 + seed%3/2*u.pick(3) {
				ev = u.event()
				m, err := in.Apply(ev)
				if err != nil {
					t.Fatalf("seed %d step %d: Apply(%s %s %s): %v", seed, step, ev.Op, ev.Kind, ev.Key(), err)
				}
				matters = matters || m
			}
			got, want := in.Build(), Build(in.Store(), opts)
			if !reflect.DeepEqual(exported(got), exported(want)) || got.Checksum != got.ComputeChecksum() {
				t.Fatalf("seed %d step %d (%s %s %s): incremental differs from Build:\n%s", seed, step, ev.Op, ev.Kind, ev.Key(), firstDiff(got, want))
			}
			if v := dataPlaneViolations(want); len(v) > 0 {
				t.Fatalf("seed %d step %d (%s %s %s): outside the data plane contract: %q", seed, step, ev.Op, ev.Kind, ev.Key(), v)
			}
			if !matters && prev != nil && prev.Checksum != got.Checksum {
				t.Fatalf("seed %d step %d (%s %s %s): an event that cannot matter changed the checksum", seed, step, ev.Op, ev.Kind, ev.Key())
			}
			if prev != nil {
				x, y := exported(prev), exported(want)
				if d, full := config.Diff(prev, got), config.Diff(&x, &y); !reflect.DeepEqual(d, full) {
					t.Fatalf("seed %d step %d (%s %s %s): Diff with the Incremental's hint differs from a full Diff:\n got  %+v\n want %+v",
						seed, step, ev.Op, ev.Kind, ev.Key(), d, full)
				}
			}
			prev = got
		}
	}
}

// exported is c without the Incremental's bookkeeping (gen, patch).
func exported(c *config.Configuration) config.Configuration {
	return c.Content()
}

// firstDiff names the first top-level field in which a and b differ.
func firstDiff(a, b *config.Configuration) string {
	va, vb := reflect.ValueOf(*a), reflect.ValueOf(*b)
	for i := range va.NumField() {
		if !va.Type().Field(i).IsExported() {
			continue
		}
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			if va.Type().Field(i).Name == "Backends" && a.Backends.Len() == b.Backends.Len() {
				if path, x, y, ok := diffPath(reflect.ValueOf(a.Backends.Slice()), reflect.ValueOf(b.Backends.Slice()), "Backends"); ok {
					return fmt.Sprintf("%s:\n got  %v\n want %v", path, x, y)
				}
			}
			if va.Type().Field(i).Name == "Backends" {
				return fmt.Sprintf("field Backends:\n got  %s\n want %s", backendsText(a.Backends), backendsText(b.Backends))
			}
			if va.Type().Field(i).Name == "Servers" && len(a.Servers) != len(b.Servers) {
				return fmt.Sprintf("Servers:\n got  %v\n want %v", serverNames(a.Servers), serverNames(b.Servers))
			}
			if path, x, y, ok := diffPath(va.Field(i), vb.Field(i), va.Type().Field(i).Name); ok {
				return fmt.Sprintf("%s:\n got  %v\n want %v", path, x, y)
			}
			return fmt.Sprintf("field %s:\n got  %+v\n want %+v", va.Type().Field(i).Name, va.Field(i).Interface(), vb.Field(i).Interface())
		}
	}
	return "checksum " + a.Checksum + " recomputed " + a.ComputeChecksum()
}

// diffPath finds the first leaf where a and b differ and names its path.
func diffPath(a, b reflect.Value, path string) (string, any, any, bool) {
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			break
		}
		return diffPath(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := range a.NumField() {
			if !a.Type().Field(i).IsExported() {
				continue
			}
			if p, x, y, ok := diffPath(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); ok {
				return p, x, y, true
			}
		}
		return "", nil, nil, false
	case reflect.Slice:
		if a.Len() != b.Len() {
			break
		}
		for i := range a.Len() {
			if p, x, y, ok := diffPath(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); ok {
				return p, x, y, true
			}
		}
		return "", nil, nil, false
	}
	if !a.CanInterface() || reflect.DeepEqual(a.Interface(), b.Interface()) {
		return "", nil, nil, false
	}
	return path, a.Interface(), b.Interface(), true
}

func serverNames(ss []config.Server) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Hostname+"->"+s.RedirectTo)
	}
	return out
}

func backendsText(l config.BackendList) string {
	var out []string
	for _, be := range l.All() {
		out = append(out, fmt.Sprintf("%+v", *be))
	}
	return strings.Join(out, "\n      ")
}

// TestIncrementalShares: an endpoint change shares the Servers and
// Certificates with the previous Configuration, and Diff finds only the
// changed Backend.
func TestIncrementalShares(t *testing.T) {
	in := NewIncremental(NewStore(ingress.NewSource()), testOptions())
	for _, o := range []runtime.Object{service("default", "web"), slice("default", "web-1", "web", "http", 8080, ready("10.0.0.1")),
		service("default", "api"), slice("default", "api-1", "api", "http", 8080, ready("10.0.0.2")),
		newIngress("default", "a", rule("a.example.com", prefix("/", "web", 80), prefix("/api", "api", 80)))} {
		if _, err := in.Apply(upsertEvent(o)); err != nil {
			t.Fatal(err)
		}
	}
	a := in.Build()
	if _, err := in.Apply(upsertEvent(slice("default", "web-1", "web", "http", 8080, ready("10.0.0.3")))); err != nil {
		t.Fatal(err)
	}
	b := in.Build()
	if !sameBacking(a.Servers, b.Servers) || !sameBacking(a.Certificates, b.Certificates) || a.Backends.Same(b.Backends) {
		t.Errorf("an endpoint change copied the servers or certificates, or not the backends")
	}
	ch := config.Diff(a, b)
	if len(ch.BackendsUpserted) != 1 || ch.BackendsUpserted[0].Service != "web" || len(ch.ServersUpserted) != 0 || ch.Reload {
		t.Errorf("diff %+v, want the web backend only", ch)
	}
	if matters, _ := in.Apply(upsertEvent(slice("default", "web-1", "web", "http", 8080, ready("10.0.0.3")))); matters || in.Build() != b {
		t.Errorf("the same endpoints again matter")
	}
	if matters, _ := in.Apply(upsertEvent(service("default", "unused"))); matters {
		t.Errorf("a Service nothing names matters")
	}
}

// TestIngressChangeRebuildsItsHosts: an Ingress change rebuilds the
// Servers of its hosts only (the others keep their Locations), Diff names
// only those, and a setting decided across hosts makes it a full Build.
func TestIngressChangeRebuildsItsHosts(t *testing.T) {
	in := NewIncremental(NewStore(ingress.NewSource()), testOptions())
	objs := []runtime.Object{service("default", "web"), slice("default", "web-1", "web", "http", 8080, ready("10.0.0.1"))}
	for _, h := range []string{"a", "b", "c"} {
		objs = append(objs, newIngress("default", h, rule(h+".example.com", prefix("/", "web", 80))))
	}
	for _, o := range objs {
		if _, err := in.Apply(upsertEvent(o)); err != nil {
			t.Fatal(err)
		}
	}
	byHost := func(c *config.Configuration, h string) *config.Server {
		for i := range c.Servers {
			if c.Servers[i].Hostname == h {
				return &c.Servers[i]
			}
		}
		return nil
	}
	apply := func(o runtime.Object) *config.Configuration {
		t.Helper()
		if _, err := in.Apply(upsertEvent(o)); err != nil {
			t.Fatal(err)
		}
		return in.Build()
	}
	base := in.Build()
	next := apply(newIngress("default", "b", rule("b.example.com", prefix("/", "web", 80), prefix("/v2", "web", 80))))
	if !next.Spliced() {
		t.Fatalf("an Ingress change was a full Build")
	}
	for _, h := range []string{"a.example.com", "c.example.com", config.DefaultServerName} {
		if !sameBacking(byHost(base, h).Locations, byHost(next, h).Locations) {
			t.Errorf("server %s was rebuilt", h)
		}
	}
	ch := config.Diff(base, next)
	if len(ch.ServersUpserted) != 1 || ch.ServersUpserted[0].Hostname != "b.example.com" || len(ch.ServersRemoved) != 0 || ch.Reload {
		t.Errorf("diff %+v, want server b.example.com only", ch)
	}
	full := apply(newIngress("default", "c", rule("c.example.com", prefix("/", "web", 80)), nginx("server-alias", "d.example.com")))
	if full.Patched() {
		t.Errorf("server-alias (decided across hosts) was rebuilt per host")
	}
}

// sameBacking reports whether a and b are the same slice.
func sameBacking[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// TestSharedAnnotationsStayUnchanged: the parsed annotations shared by the
// Ingresses without any (noAnnotations) are never written by a build.
func TestSharedAnnotationsStayUnchanged(t *testing.T) {
	u := universe{t: t, rnd: rand.New(rand.NewPCG(7, 7)), wide: 2}
	in := NewIncremental(newGatewayStore(), propOptions())
	for range 300 {
		if _, err := in.Apply(u.event()); err != nil {
			t.Fatal(err)
		}
		in.Build()
	}
	Build(newTestStore(t, goldenInputs(t)["full"]...), goldenOptions(t))
	// Ingresses without annotations of ours share one parsed Settings.
	e, err := ingress.NewSource().Translate(events.KindIngress, intent.Key{Namespace: "d", Name: "plain"}, newIngress("d", "plain"))
	if err != nil || !reflect.DeepEqual(*e.Settings, intent.Settings{}) {
		t.Fatalf("the shared settings of Ingresses without annotations were modified: %+v (%v)", e.Settings, err)
	}
}

// routeEvent is an HTTPRoute of the universe's Gateway: one of three, on
// one of its hosts or none, to one or two of its Services.
func (u universe) routeEvent() events.Event {
	name := "r" + strconv.Itoa(u.pick(3))
	if u.pick(6) == 0 {
		return deleteEvent(events.KindHTTPRoute, propNS, name)
	}
	ref := func(w int32) gatewayv1.HTTPBackendRef {
		return gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{Weight: ptr(w), BackendObjectReference: gatewayv1.BackendObjectReference{
			Name: gatewayv1.ObjectName(u.svcName()), Port: ptr(gatewayv1.PortNumber(80))}}}
	}
	r := &gatewayv1.HTTPRoute{ObjectMeta: objMeta(propNS, name)}
	r.CreationTimestamp = metav1.NewTime(epoch.Add(time.Duration(u.pick(5)) * time.Second))
	r.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: "edge"}}
	if h := hosts[u.pick(len(hosts))]; h != "" {
		r.Spec.Hostnames = []gatewayv1.Hostname{gatewayv1.Hostname(h)}
	}
	refs := []gatewayv1.HTTPBackendRef{ref(1)}
	if u.pick(3) == 0 {
		refs = append(refs, ref(int32(u.pick(3))))
	}
	if u.pick(6) == 0 { // a reference that cannot be served: its share answers 500
		bad := ref(1)
		bad.Kind = ptr(gatewayv1.Kind("Unknown"))
		refs = append(refs, bad)
	}
	path := []string{"/", "/api", "/r"}[u.pick(3)]
	m := u.routeConditions(gatewayv1.HTTPRouteMatch{Path: &gatewayv1.HTTPPathMatch{Type: ptr(gatewayv1.PathMatchPathPrefix), Value: ptr(path)}})
	r.Spec.Rules = []gatewayv1.HTTPRouteRule{{BackendRefs: refs, Matches: []gatewayv1.HTTPRouteMatch{m}}}
	if u.pick(3) == 0 { // a second match: another candidate of a path
		r.Spec.Rules[0].Matches = append(r.Spec.Rules[0].Matches, u.routeConditions(gatewayv1.HTTPRouteMatch{}))
	}
	r.Spec.Rules[0].Filters = u.routeFilters()
	if u.pick(4) == 0 {
		d := gatewayv1.Duration([]string{"500ms", "0s", "10s"}[u.pick(3)])
		r.Spec.Rules[0].Timeouts = &gatewayv1.HTTPRouteTimeouts{BackendRequest: &d}
	}
	return upsertEvent(r)
}

// grpcRouteEvent is a GRPCRoute of the universe's Gateway: one of two, on
// one of its hosts or none, a method or every call, to one of its
// Services. While only GRPCRoutes are attached the Gateway's port serves
// h2c: the routes turn it to h2c and back.
func (u universe) grpcRouteEvent() events.Event {
	name := "g" + strconv.Itoa(u.pick(2))
	if u.pick(4) == 0 {
		return deleteEvent(events.KindGRPCRoute, propNS, name)
	}
	r := &gatewayv1.GRPCRoute{ObjectMeta: objMeta(propNS, name)}
	r.CreationTimestamp = metav1.NewTime(epoch.Add(time.Duration(u.pick(5)) * time.Second))
	r.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: "edge"}}
	if h := hosts[u.pick(len(hosts))]; h != "" {
		r.Spec.Hostnames = []gatewayv1.Hostname{gatewayv1.Hostname(h)}
	}
	rule := gatewayv1.GRPCRouteRule{BackendRefs: []gatewayv1.GRPCBackendRef{{BackendRef: gatewayv1.BackendRef{
		BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(u.svcName()), Port: ptr(gatewayv1.PortNumber(80))}}}}}
	if u.pick(2) == 0 {
		rule.Matches = []gatewayv1.GRPCRouteMatch{{Method: &gatewayv1.GRPCMethodMatch{Service: ptr("echo.Echo"), Method: ptr("Say")}}}
	}
	r.Spec.Rules = []gatewayv1.GRPCRouteRule{rule}
	return upsertEvent(r)
}

// routeFilters draws none or one of each kind of filter the universe's
// routes may have (a redirect or a rewrite, not both).
func (u universe) routeFilters() []gatewayv1.HTTPRouteFilter {
	var out []gatewayv1.HTTPRouteFilter
	headers := &gatewayv1.HTTPHeaderFilter{Set: []gatewayv1.HTTPHeader{{Name: "X-Set", Value: "1"}},
		Add: []gatewayv1.HTTPHeader{{Name: "x-add", Value: "2"}}, Remove: []string{"X-Gone"}}
	if u.pick(4) == 0 {
		out = append(out, gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestHeaderModifier, RequestHeaderModifier: headers})
	}
	if u.pick(4) == 0 {
		out = append(out, gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterResponseHeaderModifier, ResponseHeaderModifier: headers})
	}
	path := &gatewayv1.HTTPPathModifier{Type: gatewayv1.PrefixMatchHTTPPathModifier, ReplacePrefixMatch: ptr("/new")}
	if u.pick(2) == 0 {
		path = &gatewayv1.HTTPPathModifier{Type: gatewayv1.FullPathHTTPPathModifier, ReplaceFullPath: ptr("/full")}
	}
	if u.pick(5) == 0 {
		out = append(out, gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterCORS, CORS: &gatewayv1.HTTPCORSFilter{
			AllowOrigins: []gatewayv1.CORSOrigin{"https://*.example.com", "*"}, AllowMethods: []gatewayv1.HTTPMethodWithWildcard{"GET", "*"}, MaxAge: 5}})
	}
	switch u.pick(6) {
	case 0:
		out = append(out, gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterRequestRedirect, RequestRedirect: &gatewayv1.HTTPRequestRedirectFilter{
			Scheme: ptr("https"), Port: ptr(gatewayv1.PortNumber(8443)), Path: path, StatusCode: ptr(301)}})
	case 1:
		out = append(out, gatewayv1.HTTPRouteFilter{Type: gatewayv1.HTTPRouteFilterURLRewrite, URLRewrite: &gatewayv1.HTTPURLRewriteFilter{
			Hostname: ptr(gatewayv1.PreciseHostname("backend.example.com")), Path: path}})
	}
	return out
}

// routeConditions adds none, some or all of a method, a header (exact or
// regex) and a query parameter condition to m, from small sets, so that
// routes often share or differ in them.
func (u universe) routeConditions(m gatewayv1.HTTPRouteMatch) gatewayv1.HTTPRouteMatch {
	if u.pick(3) == 0 {
		m.Method = ptr([]gatewayv1.HTTPMethod{gatewayv1.HTTPMethodGet, gatewayv1.HTTPMethodPost}[u.pick(2)])
	}
	if u.pick(2) == 0 {
		h := gatewayv1.HTTPHeaderMatch{Name: gatewayv1.HTTPHeaderName([]string{"x-v", "X-V", "color"}[u.pick(3)]), Value: []string{"1", "v[0-9]+"}[u.pick(2)]}
		if u.pick(2) == 0 {
			h.Type = ptr(gatewayv1.HeaderMatchRegularExpression)
		}
		m.Headers = append(m.Headers, h)
	}
	if u.pick(3) == 0 {
		m.QueryParams = append(m.QueryParams, gatewayv1.HTTPQueryParamMatch{Name: gatewayv1.HTTPHeaderName([]string{"q", "Q"}[u.pick(2)]), Value: "1"})
	}
	return m
}

// gatewayEvent is the universe's GatewayClass, Gateway or the Gateway's
// Service: ours or not, with or without a hostname, the Service on one of
// two ports of the fleet or none, so that every route is translated again
// and moves between ports.
func (u universe) gatewayEvent() events.Event {
	switch u.pick(5) {
	case 4:
		return u.namespaceEvent()
	case 0:
		svc := gatewayService(&gatewayv1.Gateway{ObjectMeta: objMeta(propNS, "edge"), Spec: gatewayv1.GatewaySpec{
			Listeners: []gatewayv1.Listener{{Port: 80}}}}, int32(10000+u.pick(2)))
		if u.pick(4) == 0 {
			return deleteEvent(events.KindService, svc.Namespace, svc.Name)
		}
		return upsertEvent(svc)
	case 1:
		c := eventstest.GatewayClass()
		if u.pick(3) == 0 {
			c.Spec.ControllerName = "example.com/other"
		}
		return upsertEvent(c)
	}
	gw := &gatewayv1.Gateway{ObjectMeta: objMeta(propNS, "edge")}
	gw.Spec.GatewayClassName = gatewayv1.ObjectName(eventstest.GatewayClass().Name)
	l := gatewayv1.Listener{Name: "http", Port: 80, Protocol: gatewayv1.HTTPProtocolType}
	if h := hosts[u.pick(len(hosts))]; h != "" && u.pick(2) == 0 {
		l.Hostname = ptr(gatewayv1.Hostname(h))
	}
	if u.pick(2) == 0 {
		l.AllowedRoutes = &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr(gatewayv1.NamespacesFromSelector),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "web"}}}}
	}
	gw.Spec.Listeners = []gatewayv1.Listener{l}
	return upsertEvent(gw)
}

// namespaceEvent is the routes' Namespace or another, labelled so that
// the Gateway's selector takes its routes or not, or deleted.
func (u universe) namespaceEvent() events.Event {
	name := []string{propNS, propNS, "other"}[u.pick(3)]
	if u.pick(5) == 0 {
		return events.Event{Op: events.OpDelete, Kind: events.KindNamespace, Name: name}
	}
	return upsertEvent(labelledNamespace(name, "team", []string{"web", "db"}[u.pick(2)], "env", []string{"prod", "dev"}[u.pick(2)]))
}
