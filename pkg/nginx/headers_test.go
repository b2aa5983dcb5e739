package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/model"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// headerController is the controller ConfigMap of the header tests.
const headerController = "ingress/controller"

// buildObjects builds, with model.Build and the controller ConfigMap
// headerController, the Configuration of objs (Ingresses, Services,
// EndpointSlices and ConfigMaps), and fails on any Problem.
func buildObjects(t *testing.T, objs ...runtime.Object) *config.Configuration {
	t.Helper()
	s := model.NewStore(ingress.NewSource())
	for _, obj := range objs {
		var kind events.Kind
		switch obj.(type) {
		case *corev1.Service:
			kind = events.KindService
		case *corev1.ConfigMap:
			kind = events.KindConfigMap
		case *discoveryv1.EndpointSlice:
			kind = events.KindEndpointSlice
		case *networkingv1.Ingress:
			kind = events.KindIngress
		default:
			t.Fatalf("unexpected %T", obj)
		}
		m := obj.(metav1.Object)
		if _, err := s.Apply(upsertEventOf(obj, kind, m.GetNamespace(), m.GetName())); err != nil {
			t.Fatal(err)
		}
	}
	cfg := model.Build(s, model.Options{ControllerClass: "k8s.io/ingress-sync", IngressClass: "nginx", ConfigMap: headerController})
	if len(cfg.Problems) > 0 {
		t.Fatalf("problems: %+v", cfg.Problems)
	}
	return cfg
}

func headerConfigMap(ns, name string, kv ...string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		cm.Data[kv[i]] = kv[i+1]
	}
	return cm
}

// echoService is a Service named as its echo backend with one endpoint.
func echoService(name string, port int) []runtime.Object {
	return []runtime.Object{fixtures.Service("default", name, 80), fixtures.EndpointSlice("default", name+"-1", name, int32(port), "127.0.0.1")}
}

// TestUpstreamAndHeaders: upstream-vhost, connection-proxy-header,
// custom-headers and the ConfigMap's proxy-set-headers and add-headers, as
// ingress-nginx's e2e tests (annotations/upstreamvhost.go, connection.go,
// customheaders.go, settings/custom_header.go) describe them, pushed to a
// running nginx without a reload.
func TestUpstreamAndHeaders(t *testing.T) {
	web := startEcho(t, "web")
	base := []runtime.Object{
		fixtures.Ingress("default", "vhost", ann("upstream-vhost", "internal.example.com"), fixtures.Rule("vhost.test", fixtures.Prefix("/", "web", 80))),
		fixtures.Ingress("default", "close", ann("connection-proxy-header", "close"), fixtures.Rule("close.test", fixtures.Prefix("/", "web", 80))),
		fixtures.Ingress("default", "keep", ann("connection-proxy-header", "keep-alive"), fixtures.Rule("keep.test", fixtures.Prefix("/", "web", 80))),
		fixtures.Ingress("default", "custom", fixtures.Rule("custom.test", fixtures.Prefix("/c", "web", 80))),
		fixtures.Ingress("default", "plain", fixtures.Rule("plain.test", fixtures.Prefix("/", "web", 80))),
	}
	// global-allowed-response-headers turns the response header filter on
	// (a reload); from then on no header setting reloads.
	base = append(base, echoService("web", web.Port())...)
	base = append(base, headerConfigMap("ingress", "controller", "global-allowed-response-headers", "X-Custom,X-Frame-Options,X-Literal"))
	h := startNginx(t, buildObjects(t, base...), nil)

	// The header ConfigMaps and custom-headers arrive later: routes
	// change, nginx does not reload.
	withHeaders := append(slices.Clone(base[:len(base)-1]),
		fixtures.Ingress("default", "custom", ann("custom-headers", "default/custom"), fixtures.Rule("custom.test", fixtures.Prefix("/c", "web", 80))),
		headerConfigMap("ingress", "controller", "proxy-set-headers", "ingress/req", "add-headers", "ingress/resp",
			"global-allowed-response-headers", "X-Custom,X-Frame-Options,X-Literal"),
		headerConfigMap("ingress", "req", "X-Using-Ingress", "ingress-sync", "X-Quoted", `a "quoted"; {value}`),
		headerConfigMap("ingress", "resp", "X-Frame-Options", "DENY", "X-Global", "1"),
		headerConfigMap("default", "custom", "X-Custom", "42", "X-Frame-Options", "SAMEORIGIN", "X-Literal", "$remote_addr"))
	applyWithoutReload(t, h, buildObjects(t, withHeaders...))

	t.Run("upstream-vhost is the Host the backend receives", func(t *testing.T) {
		r := h.mustGet("http://vhost.test/x")
		if r.Status != 200 || r.Reply.Host != "internal.example.com" {
			t.Fatalf("status %d, backend Host %q; want 200, internal.example.com", r.Status, r.Reply.Host)
		}
		if got := r.Reply.Headers.Get("X-Forwarded-Host"); got != "vhost.test" {
			t.Errorf("X-Forwarded-Host %q, want the request's host", got)
		}
		if r := h.mustGet("http://plain.test/"); r.Reply.Host != "plain.test" {
			t.Errorf("without upstream-vhost the backend gets Host %q", r.Reply.Host)
		}
	})
	t.Run("connection-proxy-header is the Connection the backend receives", func(t *testing.T) {
		for host, want := range map[string]string{"close.test": "close", "keep.test": "keep-alive"} {
			if r := h.mustGet("http://" + host + "/"); r.Status != 200 || r.Reply.Headers.Get("Connection") != want {
				t.Errorf("%s: status %d, Connection %q; want %q", host, r.Status, r.Reply.Headers.Get("Connection"), want)
			}
		}
		if r := h.mustGet("http://plain.test/", "Upgrade", "websocket"); r.Reply.Headers.Get("Connection") != "upgrade" {
			t.Errorf("without the annotation an Upgrade request sends Connection %q, want upgrade", r.Reply.Headers.Get("Connection"))
		}
	})
	t.Run("proxy-set-headers reach every backend, as written", func(t *testing.T) {
		for _, host := range []string{"plain.test", "vhost.test", "custom.test"} {
			r := h.mustGet("http://" + host + "/c")
			if r.Reply.Headers.Get("X-Using-Ingress") != "ingress-sync" || r.Reply.Headers.Get("X-Quoted") != `a "quoted"; {value}` {
				t.Errorf("%s: backend headers %v", host, r.Reply.Headers)
			}
		}
	})
	t.Run("add-headers on every response, custom-headers over them", func(t *testing.T) {
		r := h.mustGet("http://plain.test/")
		if r.Header.Get("X-Frame-Options") != "DENY" || r.Header.Get("X-Global") != "1" || r.Header.Get("X-Custom") != "" {
			t.Errorf("plain: response headers %v", r.Header)
		}
		r = h.mustGet("http://custom.test/c/x")
		if r.Status != 200 || r.Header.Get("X-Custom") != "42" || r.Header.Get("X-Frame-Options") != "SAMEORIGIN" ||
			r.Header.Get("X-Global") != "1" || r.Header.Get("X-Literal") != "$remote_addr" {
			t.Errorf("custom: status %d, response headers %v", r.Status, r.Header)
		}
		if vs := r.Header.Values("X-Frame-Options"); len(vs) != 1 {
			t.Errorf("X-Frame-Options sent %d times: %q", len(vs), vs)
		}
		// Responses nginx makes itself get the ConfigMap's headers too; the
		// catch-all of a host, those of its first Ingress (ingress-nginx's
		// root location).
		if r := h.mustGet("http://unknown.test/"); r.Status != 404 || r.Header.Get("X-Global") != "1" || r.Header.Get("X-Custom") != "" {
			t.Errorf("unknown host: status %d, headers %v; want 404 with X-Global only", r.Status, r.Header)
		}
		if r := h.mustGet("http://custom.test/none"); r.Status != 404 || r.Header.Get("X-Global") != "1" || r.Header.Get("X-Custom") != "42" {
			t.Errorf("catch-all: status %d, headers %v; want 404 with X-Global and X-Custom", r.Status, r.Header)
		}
	})

	// Removing the ConfigMaps' reference removes the headers, again
	// without a reload.
	applyWithoutReload(t, h, buildObjects(t, base...))
	if r := h.mustGet("http://custom.test/c"); r.Header.Get("X-Frame-Options") != "" || r.Reply.Headers.Get("X-Using-Ingress") != "" {
		t.Errorf("headers left after their ConfigMaps went: response %v, backend %v", r.Header, r.Reply.Headers)
	}
}

// TestResponseHeaderFilterOnlyWhenUsed: without add-headers and
// global-allowed-response-headers, no response can get headers from the
// cluster and nginx.conf has no header filter, so no request pays for it.
func TestResponseHeaderFilterOnlyWhenUsed(t *testing.T) {
	r, err := NewRenderer(goldenOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kv     []string
		filter bool
	}{
		{nil, false},
		{[]string{"proxy-set-headers", "ingress/req"}, false},
		{[]string{"add-headers", "ingress/resp"}, true},
		{[]string{"global-allowed-response-headers", "X-A"}, true},
	} {
		objs := []runtime.Object{headerConfigMap("ingress", "controller", tc.kv...),
			headerConfigMap("ingress", "req", "X-A", "1"), headerConfigMap("ingress", "resp", "X-A", "1")}
		conf, err := r.Render(buildObjects(t, objs...))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(conf), "header_filter_by_lua"); got != tc.filter {
			t.Errorf("ConfigMap %q: header filter %v, want %v", tc.kv, got, tc.filter)
		}
	}
}

// TestServiceUpstream: service-upstream sends to the Service's ClusterIP
// and port (annotations/serviceupstream.go), not to its endpoints. The
// ClusterIP is a loopback address with an echo server on the Service port.
func TestServiceUpstream(t *testing.T) {
	viaIP, viaEndpoints := startEcho(t, "cluster-ip"), startEcho(t, "endpoints")
	svc := fixtures.Service("default", "web", int32(viaIP.Port()))
	svc.Spec.ClusterIP = "127.0.0.1"
	port := int32(viaIP.Port())
	objs := []runtime.Object{svc, fixtures.EndpointSlice("default", "web-1", "web", int32(viaEndpoints.Port()), "127.0.0.1"),
		fixtures.Ingress("default", "up", ann("service-upstream", "true"), fixtures.Rule("up.test", fixtures.Prefix("/", "web", port))),
		fixtures.Ingress("default", "eps", fixtures.Rule("eps.test", fixtures.Prefix("/", "web", port)))}
	cfg := buildObjects(t, objs[:3]...)
	h := startNginx(t, cfg, nil)
	checkServed(t, h, "http://up.test/", 200, "cluster-ip")
	// The other Ingress of the same Service port does not set the
	// annotation: the one that does decides for the backend.
	applyWithoutReload(t, h, buildObjects(t, objs...))
	checkServed(t, h, "http://eps.test/", 200, "cluster-ip")
	// Without the annotation the endpoints answer, with no reload.
	objs[2] = fixtures.Ingress("default", "up", fixtures.Rule("up.test", fixtures.Prefix("/", "web", port)))
	applyWithoutReload(t, h, buildObjects(t, objs...))
	checkServed(t, h, "http://up.test/", 200, "endpoints")
}

// TestServerAlias: the alias answers with the host's routes
// (annotations/alias.go); other names do not.
func TestServerAlias(t *testing.T) {
	web := startEcho(t, "web")
	objs := append(echoService("web", web.Port()),
		fixtures.Ingress("default", "a", ann("server-alias", "bar.test, *.w.test"), fixtures.Rule("foo.test", fixtures.Prefix("/app", "web", 80))))
	h := startNginx(t, buildObjects(t, objs...), nil)
	for _, host := range []string{"foo.test", "bar.test", "x.w.test"} {
		r := h.mustGet("http://" + host + "/app")
		if r.Status != 200 || r.Reply.Backend != "web" || r.Reply.Host != host {
			t.Errorf("%s: %d from %q with Host %q", host, r.Status, r.Reply.Backend, r.Reply.Host)
		}
	}
	for _, url := range []string{"http://baz.test/app", "http://a.b.w.test/app", "http://bar.test/other"} {
		checkServed(t, h, url, 404, "")
	}
}

// TestRefusedHeaders: router.lua checks the header and upstream fields
// again; a host with values Build never emits (a CR LF in a value, a name
// that is not a token, a vhost with a path) answers 503, the others are
// served.
func TestRefusedHeaders(t *testing.T) {
	app := startEcho(t, "app")
	good := serverOf("good.test", prefixLoc("/", "app"))
	good.ResponseHeaders = []config.Header{{Name: "X-Ok", Value: "1"}}
	good.Locations[0].Settings.UpstreamVhost = "a:8080" // one letter and a port
	bad := func(host string, mutate func(*config.Server)) config.Server {
		s := serverOf(host, prefixLoc("/", "app"))
		mutate(&s)
		return s
	}
	cfg := configOf("headers-refused", []config.Server{good,
		bad("crlf.test", func(s *config.Server) { s.RequestHeaders = []config.Header{{Name: "X-A", Value: "a\r\nInjected: 1"}} }),
		bad("name.test", func(s *config.Server) { s.ResponseHeaders = []config.Header{{Name: "Bad Name", Value: "1"}} }),
		bad("route.test", func(s *config.Server) {
			s.Locations[0].Settings.ResponseHeaders = []config.Header{{Name: "X-B", Value: "\x00"}}
		}),
		bad("vhost.test", func(s *config.Server) { s.Locations[0].Settings.UpstreamVhost = "a.test/evil" }),
		bad("conn.test", func(s *config.Server) { s.Locations[0].Settings.ConnectionHeader = "upgrade" }),
		bad("port.test", func(s *config.Server) { s.Locations[0].Settings.UpstreamVhost = "a.test:" }),
	}, backendOf("app", app))
	cfg.Global.AddHeaders = "ingress/resp" // the response header filter on
	cfg.Checksum = cfg.ComputeChecksum()
	h := startNginx(t, cfg, nil)
	h.allowLuaErrors = true
	if r := h.mustGet("http://good.test/"); r.Status != 200 || r.Header.Get("X-Ok") != "1" {
		t.Errorf("good.test: %d, headers %v", r.Status, r.Header)
	}
	for _, host := range []string{"crlf.test", "name.test", "route.test", "vhost.test", "conn.test", "port.test"} {
		if r := h.mustGet("http://" + host + "/"); r.Status != 503 || r.Header.Get("Injected") != "" {
			t.Errorf("%s: %d, want 503", host, r.Status)
		}
	}
}

// TestUpstreamVhostGRPC: upstream-vhost is the :authority a gRPC backend
// receives, as ingress-nginx's grpc_set_header Host.
func TestUpstreamVhostGRPC(t *testing.T) {
	vhost := settingsLoc("/v.Echo", "grpc", config.LocationSettings{BackendProtocol: "GRPC", UpstreamVhost: "internal.example.com"})
	plain := settingsLoc("/p.Echo", "grpc", config.LocationSettings{BackendProtocol: "GRPC"})
	cfg := configOf("grpc-vhost", []config.Server{serverOf("g.test", vhost, plain)}, backendAt("grpc", startH2C(t, grpcReflector("grpc"))))
	h := startNginx(t, cfg, nil)
	c := h.h2Client()
	for path, want := range map[string]string{"/v.Echo/Call": "internal.example.com", "/p.Echo/Call": "g.test"} {
		status, reply, grpcStatus, err := grpcCall(c, "https://g.test"+path)
		if err != nil || status != 200 || grpcStatus != "0" || reply.Host != want {
			t.Errorf("%s: %d %q %v, backend Host %q; want %q", path, status, grpcStatus, err, reply.Host, want)
		}
	}
}

// TestHeadersThroughProxyLocations: the request and response headers also
// apply to routes that router.lua hands to a fixed proxy location
// (backend-protocol HTTPS, proxy-buffering off), where ngx.ctx is gone.
func TestHeadersThroughProxyLocations(t *testing.T) {
	srv := serverOf("p.test",
		settingsLoc("/secure", "secure", config.LocationSettings{BackendProtocol: "HTTPS",
			ResponseHeaders: []config.Header{{Name: "X-Route", Value: "secure"}}}),
		settingsLoc("/unbuffered", "plain", config.LocationSettings{Proxy: &config.ProxySettings{Buffering: "off"}}))
	srv.RequestHeaders = []config.Header{{Name: "X-Req", Value: "1"}}
	srv.ResponseHeaders = []config.Header{{Name: "X-Global", Value: "1"}}
	cfg := configOf("headers-locations", []config.Server{srv},
		backendAt("secure", startHTTPTest(t, reflector("secure"), true, false)),
		backendAt("plain", startHTTPTest(t, reflector("plain"), false, false)))
	cfg.Global.AddHeaders = "ingress/resp"
	cfg.Checksum = cfg.ComputeChecksum()
	h := startNginx(t, cfg, nil)
	for path, route := range map[string]string{"/secure/x": "secure", "/unbuffered/x": ""} {
		r := h.mustGet("http://p.test" + path)
		if r.Status != 200 || r.Reply.Headers.Get("X-Req") != "1" || r.Header.Get("X-Global") != "1" || r.Header.Get("X-Route") != route {
			t.Errorf("%s: %d, backend headers %v, response headers %v", path, r.Status, r.Reply.Headers, r.Header)
		}
	}
}

// TestCustomHeadersMissingConfigMap: custom-headers naming a ConfigMap
// that does not exist answers 503, as ingress-nginx's e2e test
// (annotations/customheaders.go) checks; an Ingress beside it is served.
func TestCustomHeadersMissingConfigMap(t *testing.T) {
	web := startEcho(t, "web")
	cfg := buildWithSecrets(t, map[string]int{"web": web.Port()}, nil,
		[]string{"custom-headers: ConfigMap default/custom-headers not found; the Ingress's routes answer 503"},
		fixtures.Ingress("default", "custom", ann("custom-headers", "default/custom-headers"), fixtures.Rule("custom.test", fixtures.Prefix("/", "web", 80))),
		fixtures.Ingress("default", "plain", fixtures.Rule("plain.test", fixtures.Prefix("/", "web", 80))))
	h := startNginx(t, cfg, nil)
	if r := h.mustGet("http://custom.test/"); r.Status != 503 || r.Reply.Backend != "" {
		t.Errorf("custom-headers without its ConfigMap: status %d from %q, want 503", r.Status, r.Reply.Backend)
	}
	checkServed(t, h, "http://plain.test/", 200, "web")
}
