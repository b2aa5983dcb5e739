package nginx

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	pb "sigs.k8s.io/gateway-api/conformance/echo-basic/grpcechoserver"

	"github.com/ingress-sync/ingress-sync/pkg/config"
)

// grpcEcho is a Go gRPC server of the conformance suite's echo service:
// Echo and EchoTwo answer the method called, the authority and the
// server's name (as the Pod); EchoThree is not implemented.
type grpcEcho struct {
	pb.UnimplementedGrpcEchoServer
	name string
}

func (g *grpcEcho) Echo(ctx context.Context, _ *pb.EchoRequest) (*pb.EchoResponse, error) {
	return g.reply(ctx, "Echo"), nil
}

func (g *grpcEcho) EchoTwo(ctx context.Context, _ *pb.EchoRequest) (*pb.EchoResponse, error) {
	return g.reply(ctx, "EchoTwo"), nil
}

func (g *grpcEcho) reply(ctx context.Context, method string) *pb.EchoResponse {
	md, _ := metadata.FromIncomingContext(ctx)
	a := &pb.Assertions{FullyQualifiedMethod: "/gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/" + method,
		Context: &pb.Context{Pod: g.name}}
	if v := md.Get(":authority"); len(v) > 0 {
		a.Authority = v[0]
	}
	for _, v := range md.Get("version") {
		a.Headers = append(a.Headers, &pb.Header{Key: "version", Value: v})
	}
	return &pb.EchoResponse{Assertions: a}
}

// startGRPCEcho serves grpcEcho name on a free port of 127.0.0.1.
func startGRPCEcho(t testing.TB, name string) int {
	t.Helper()
	port := freePorts(t, 1)[0]
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	pb.RegisterGrpcEchoServer(s, &grpcEcho{name: name})
	go func() { _ = s.Serve(l) }()
	t.Cleanup(s.Stop)
	return port
}

// grpcClient dials nginx's port with gRPC over h2c, as host.
func grpcClient(t testing.TB, port int, host string) pb.GrpcEchoClient {
	t.Helper()
	conn, err := grpc.NewClient(net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithAuthority(host))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return pb.NewGrpcEchoClient(conn)
}

// grpcLoc is a GRPCRoute's location: path of type typ to backend, over
// gRPC.
func grpcLoc(path string, typ config.PathType, backend string) config.Location {
	return config.Location{Path: path, PathType: typ, Backend: backend, Ingress: "rpc/" + backend, Kind: "GRPCRoute",
		Settings: config.LocationSettings{BackendProtocol: "GRPC"}}
}

// TestGRPCRouteOnH2CListener: a Gateway listener port of GRPCRoutes
// serves h2c; the router picks the route by the call's path
// /<service>/<method> and its metadata, and grpc_pass calls the Go gRPC
// server the balancer picks; a method no route takes is Unimplemented
// (nginx's 404 as gRPC maps it). Switching the port between HTTP/1.1 and
// h2c reloads nginx, and the port then speaks the other protocol.
func TestGRPCRouteOnH2CListener(t *testing.T) {
	v1, v2 := startGRPCEcho(t, "v1"), startGRPCEcho(t, "v2")
	plain := startEcho(t, "plain")
	ports := freePorts(t, 1)
	a := ports[0]
	const svc = "/gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/"
	header := grpcLoc(svc+"Echo", config.PathExact, "v2")
	header.Match = &config.Match{Headers: []config.MatchValue{{Name: "version", Value: "two"}}}
	cfg := configOf("grpc-1", nil, backendAt("v1", v1), backendAt("v2", v2), backendOf("plain", plain))
	cfg.Servers = []config.Server{{Hostname: "rpc.example.com", Port: a, Locations: []config.Location{
		header, grpcLoc(svc+"Echo", config.PathExact, "v1"), grpcLoc(svc+"EchoTwo", config.PathExact, "v2")}}}
	cfg.Listeners = []config.Listener{{Port: a, H2C: true}}
	h := startNginx(t, cfg, nil)

	c := grpcClient(t, a, "rpc.example.com")
	for _, tc := range []struct {
		name, method, version, pod string
		code                       codes.Code
	}{
		{name: "Echo to v1", method: "Echo", pod: "v1"},
		{name: "Echo with version two to v2", method: "Echo", version: "two", pod: "v2"},
		{name: "EchoTwo to v2", method: "EchoTwo", pod: "v2"},
		{name: "EchoThree: no route", method: "EchoThree", code: codes.Unimplemented},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			if tc.version != "" {
				ctx = metadata.AppendToOutgoingContext(ctx, "version", tc.version)
			}
			var resp *pb.EchoResponse
			var err error
			switch tc.method {
			case "Echo":
				resp, err = c.Echo(ctx, &pb.EchoRequest{})
			case "EchoTwo":
				resp, err = c.EchoTwo(ctx, &pb.EchoRequest{})
			default:
				resp, err = c.EchoThree(ctx, &pb.EchoRequest{})
			}
			if status.Code(err) != tc.code {
				t.Fatalf("%s: %v, want code %s", tc.method, err, tc.code)
			}
			if tc.code != codes.OK {
				return
			}
			if a := resp.GetAssertions(); a.GetContext().GetPod() != tc.pod || a.GetFullyQualifiedMethod() != svc+tc.method ||
				a.GetAuthority() != "rpc.example.com" {
				t.Errorf("%s answered by %q for %q at %q, want %q for %s at rpc.example.com", tc.method, a.GetContext().GetPod(),
					a.GetFullyQualifiedMethod(), a.GetAuthority(), tc.pod, svc+tc.method)
			}
		})
	}

	// The port without h2c: HTTP/1.1 again (a reload), for an HTTPRoute.
	next := *cfg
	next.Servers = []config.Server{gatewayServer(a, "_", "plain")}
	next.Listeners = []config.Listener{{Port: a}}
	next.Checksum = "grpc-2"
	if reloaded, err := applyDiff(t.Context(), h.app, &next); err != nil || !reloaded {
		t.Fatalf("the port no longer h2c: reloaded %v, %v", reloaded, err)
	}
	waitFor(t, "HTTP/1.1 on the port", func() bool {
		resp, err := onPort(a).Get("http://www.example.com/")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	checkOn(t, a, "http://www.example.com/", 200, "plain")
}
