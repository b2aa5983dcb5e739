package nginx

import (
	"bufio"
	"context"
	"crypto/tls"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	pb "sigs.k8s.io/gateway-api/conformance/echo-basic/grpcechoserver"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/gateway"
	"github.com/ingress-sync/ingress-sync/pkg/model"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// Benchmarks of the Gateway API's gRPC and stream routes on a real nginx,
// each against a direct connection to the same backend where a ratio is
// reported:
//
//	go test ./pkg/nginx -run '^$' -bench GRPCThroughput -benchtime 1x
//	go test ./pkg/nginx -run '^$' -bench TLSPassthroughConnectionRate -benchtime 1x
//	go test ./pkg/nginx -run '^$' -bench TCPRouteEndpointChange -benchtime 200x

const grpcEchoService = "/gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/"

// grpcRun makes total unary Echo calls, conns at a time spread over the
// clients, and returns their rate and latencies.
func grpcRun(b *testing.B, clients []pb.GrpcEchoClient, conns, total int) loadResult {
	b.Helper()
	lat := make([]time.Duration, total)
	var mu sync.Mutex
	var firstErr error
	start := time.Now()
	var wg sync.WaitGroup
	for w := range conns {
		c := clients[w%len(clients)]
		wg.Go(func() {
			for i := w; i < total; i += conns {
				ctx, cancel := context.WithTimeout(context.Background(), testWait)
				t0 := time.Now()
				_, err := c.Echo(ctx, &pb.EchoRequest{})
				lat[i] = time.Since(t0)
				cancel()
				if err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
	return loadResult{rate: float64(total) / time.Since(start).Seconds(), latency: lat}
}

// BenchmarkGRPCThroughput: unary Echo calls of the conformance suite's
// gRPC echo server (16 at a time over 4 HTTP/2 connections, 5 alternating
// rounds of 10k calls after a warm-up), through a GRPCRoute's location of
// an h2c Gateway listener (router.lua, balancer.lua, grpc_pass) and
// directly to the same server. It reports the median rates, the median
// ratio router/direct, and the latency percentiles over every call.
func BenchmarkGRPCThroughput(b *testing.B) {
	backend := startGRPCEcho(b, "echo")
	port := freePorts(b, 1)[0]
	cfg := configOf("grpc-bench", nil, backendAt("echo", backend))
	cfg.Servers = []config.Server{{Hostname: "rpc.example.com", Port: port, Locations: []config.Location{
		grpcLoc(grpcEchoService+"Echo", config.PathExact, "echo")}}}
	cfg.Listeners = []config.Listener{{Port: port, H2C: true}}
	startNginx(b, cfg, func(o *Options) { o.DisableAccessLog = true })
	var router, direct []pb.GrpcEchoClient
	for range 4 {
		router = append(router, grpcClient(b, port, "rpc.example.com"))
		direct = append(direct, grpcClient(b, backend, "rpc.example.com"))
	}
	const conns, total, rounds = 16, 10000, 5
	grpcRun(b, router, conns, total/2)
	grpcRun(b, direct, conns, total/2)
	var rates, directRates, ratios []float64
	var lat, directLat []time.Duration
	for b.Loop() {
		for range rounds {
			r, d := grpcRun(b, router, conns, total), grpcRun(b, direct, conns, total)
			rates, directRates, ratios = append(rates, r.rate), append(directRates, d.rate), append(ratios, r.rate/d.rate)
			lat, directLat = append(lat, r.latency...), append(directLat, d.latency...)
		}
	}
	b.StopTimer()
	b.ReportMetric(median(rates), "router-calls/s")
	b.ReportMetric(median(directRates), "direct-calls/s")
	b.ReportMetric(median(ratios), "router/direct")
	reportLatency(b, "router", lat)
	reportLatency(b, "direct", directLat)
}

// tlsOnce makes one TLS connection with sni to port, completes the
// handshake, reads the backend's line and closes: one connection of the
// rate benchmark.
func tlsOnce(port int, sni string) (int64, error) {
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: l4Wait}, Config: &tls.Config{ServerName: sni, InsecureSkipVerify: true}} //nolint:gosec // a benchmark of the connection rate
	conn, err := d.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(testWait))
	line, err := bufio.NewReader(conn).ReadString('\n')
	return int64(len(line)), err
}

// BenchmarkTLSPassthroughConnectionRate: TLS connections per second (8
// parallel clients, 1000 connections a round, each a full handshake with
// the backend and one line read), through a TLSRoute's passthrough stream
// of a Gateway listener (the stream block reads the ClientHello's SNI in
// lua/l4.js and proxies the bytes) and directly, in 5 alternating rounds.
func BenchmarkTLSPassthroughConnectionRate(b *testing.B) {
	ep, _ := startTLSBackend(b, newTestCA(b), "pass", "pass.example.com")
	port := freePorts(b, 1)[0]
	cfg := configOf("tls-bench", nil)
	cfg.Streams = []config.Stream{streamOf(config.L4TLS, port, "pass.example.com", weightedTo(1, ep))}
	startNginx(b, cfg, func(o *Options) { o.DisableAccessLog = true })
	proxy := func() (int64, error) { return tlsOnce(port, "pass.example.com") }
	direct := func() (int64, error) { return tlsOnce(int(ep.Port), "pass.example.com") }
	var p, d, ratio float64
	for b.Loop() {
		p, d, ratio = abConns(b, proxy, direct, 8, 1000, 5, true)
	}
	b.ReportMetric(p, "proxy-conn/s")
	b.ReportMetric(d, "direct-conn/s")
	b.ReportMetric(ratio, "proxy/direct")
}

// tcpRouteBench is a Store (gateway.Source) holding a Gateway with a TCP
// listener on port 5432, nginx's port port, and a TCPRoute of it to
// Service db, fed through a model.Incremental as the syncer does.
type tcpRouteBench struct {
	in *model.Incremental
}

func newTCPRouteBench(b *testing.B, port int, first config.Endpoint) *tcpRouteBench {
	const controller = "example.com/tcp-bench"
	s := model.NewStore(gateway.NewSource(controller))
	in := model.NewIncremental(s, model.Options{ControllerClass: "k8s.io/ingress-sync", IngressClass: "nginx"})
	rb := &tcpRouteBench{in: in}
	route := &gatewayv1.TCPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "db"},
		Spec: gatewayv1.TCPRouteSpec{CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "edge"}}},
			Rules: []gatewayv1.TCPRouteRule{{BackendRefs: []gatewayv1.BackendRef{{BackendObjectReference: gatewayv1.BackendObjectReference{
				Name: "db", Port: ptr(gatewayv1.PortNumber(80))}}}}}}}
	for _, o := range []runtime.Object{
		&gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "tcp"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: controller}},
		&gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "edge"}, Spec: gatewayv1.GatewaySpec{GatewayClassName: "tcp",
			Listeners: []gatewayv1.Listener{{Name: "tcp", Port: 5432, Protocol: gatewayv1.TCPProtocolType}}}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ingress", Name: gateway.ServiceName("default", "edge"),
			Labels:      map[string]string{gateway.ServiceManagedByLabel: gateway.ServiceManagedBy},
			Annotations: map[string]string{gateway.ServiceGatewayAnnotation: "default/edge"}},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 5432, TargetPort: intstr.FromInt(port)}}}},
		fixtures.Service("default", "db", 80), route,
	} {
		rb.apply(b, o)
	}
	rb.endpoint(b, first)
	return rb
}

// apply applies obj as an update event of its kind.
func (rb *tcpRouteBench) apply(b *testing.B, obj runtime.Object) {
	b.Helper()
	var kind events.Kind
	switch obj.(type) {
	case *gatewayv1.GatewayClass:
		kind = events.KindGatewayClass
	case *gatewayv1.Gateway:
		kind = events.KindGateway
	case *gatewayv1.TCPRoute:
		kind = events.KindTCPRoute
	case *corev1.Service:
		kind = events.KindService
	default:
		kind = events.KindEndpointSlice
	}
	m := obj.(metav1.Object)
	if _, err := rb.in.Apply(upsertEventOf(obj, kind, m.GetNamespace(), m.GetName())); err != nil {
		b.Fatal(err)
	}
}

// endpoint moves Service db to ep (its EndpointSlice db-1).
func (rb *tcpRouteBench) endpoint(b *testing.B, ep config.Endpoint) {
	rb.apply(b, fixtures.EndpointSlice("default", "db-1", "db", ep.Port, ep.Address))
}

// BenchmarkTCPRouteEndpointChange: the EndpointSlice of a TCPRoute's
// Service moves to another endpoint; the event goes through the Gateway
// translator and model.Incremental, nginx applies the Configuration, then
// new connections are made until one reaches the new endpoint: the time
// from the event to that connection (p50, p99), and the reloads it took
// (none: only the stream's endpoint file changes).
func BenchmarkTCPRouteEndpointChange(b *testing.B) {
	backends := []*tcpBackend{startTCPBackend(b, "a"), startTCPBackend(b, "b")}
	port := freePorts(b, 1)[0]
	rb := newTCPRouteBench(b, port, backends[0].endpoint())
	cfg := rb.in.Build()
	if len(cfg.Streams) != 1 || len(cfg.Problems) > 0 {
		b.Fatalf("streams %+v, problems %+v: want the TCPRoute's stream", cfg.Streams, cfg.Problems)
	}
	h := startNginx(b, cfg, func(o *Options) { o.DisableAccessLog = true })
	endpointChanges(b, h, port, backends, "event-to-traffic", func(to *tcpBackend) {
		rb.endpoint(b, to.endpoint())
		if _, err := applyDiff(context.Background(), h.app, rb.in.Build()); err != nil {
			b.Fatal(err)
		}
	})
}
