package e2e

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	pb "sigs.k8s.io/gateway-api/conformance/echo-basic/grpcechoserver"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/ingress-sync/ingress-sync/pkg/gateway"
	"github.com/ingress-sync/ingress-sync/test/testkit/gatewayapi"
	"github.com/ingress-sync/ingress-sync/test/testkit/netns"
)

// grpcEcho answers the conformance suite's echo service with its name as
// the Pod.
type grpcEcho struct {
	pb.UnimplementedGrpcEchoServer
	name string
}

func (g *grpcEcho) Echo(context.Context, *pb.EchoRequest) (*pb.EchoResponse, error) {
	return &pb.EchoResponse{Assertions: &pb.Assertions{Context: &pb.Context{Pod: g.name}}}, nil
}

func (g *grpcEcho) EchoTwo(context.Context, *pb.EchoRequest) (*pb.EchoResponse, error) {
	return &pb.EchoResponse{Assertions: &pb.Assertions{Context: &pb.Context{Pod: g.name}}}, nil
}

// grpcService creates Service name of namespace ns with one gRPC echo
// backend on a fresh test-range address.
func grpcService(t *testing.T, ns, name string) {
	t.Helper()
	addr := netns.Addr(int(nextAddr.Add(1)))
	l, err := net.Listen("tcp", net.JoinHostPort(addr, strconv.Itoa(backendPort)))
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	pb.RegisterGrpcEchoServer(s, &grpcEcho{name: name})
	go func() { _ = s.Serve(l) }()
	t.Cleanup(s.Stop)
	createService(t, ns, name)
	setEndpointAddrs(t, ns, name, addr)
}

// TestGRPCRoute: a GRPCRoute through the whole system: its Gateway's port
// of the fleet serves h2c, each syncer routes a call by its method to the
// Go gRPC server of the rule's Service, and the route is Accepted.
func TestGRPCRoute(t *testing.T) {
	ns := setup(t)
	host := ns + ".grpc.example.com"
	gatewayapi.InstallT(t, w.CP.Config())
	gw := gatewayclient.NewForConfigOrDie(w.CP.Config()).GatewayV1()
	grpcService(t, ns, "one")
	grpcService(t, ns, "two")
	class := &gatewayv1.GatewayClass{ObjectMeta: metav1.ObjectMeta{Name: "ingress-sync-" + ns},
		Spec: gatewayv1.GatewayClassSpec{ControllerName: gateway.DefaultControllerName}}
	create(t, class, gw.GatewayClasses().Create, func(ctx context.Context) error {
		return gw.GatewayClasses().Delete(ctx, class.Name, metav1.DeleteOptions{})
	})
	edge := &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rpc"}, Spec: gatewayv1.GatewaySpec{
		GatewayClassName: gatewayv1.ObjectName(class.Name),
		Listeners:        []gatewayv1.Listener{{Name: "grpc", Port: 80, Protocol: gatewayv1.HTTPProtocolType, Hostname: ptr.To(gatewayv1.Hostname(host))}}}}
	create(t, edge, gw.Gateways(ns).Create, func(ctx context.Context) error {
		return gw.Gateways(ns).Delete(ctx, edge.Name, metav1.DeleteOptions{})
	})
	fleet := gatewayPorts(t, edge, 80)
	ref := func(svc string) []gatewayv1.GRPCBackendRef {
		return []gatewayv1.GRPCBackendRef{{BackendRef: gatewayv1.BackendRef{BackendObjectReference: gatewayv1.BackendObjectReference{
			Name: gatewayv1.ObjectName(svc), Port: ptr.To[gatewayv1.PortNumber](80)}}}}
	}
	method := func(m string) []gatewayv1.GRPCRouteMatch {
		return []gatewayv1.GRPCRouteMatch{{Method: &gatewayv1.GRPCMethodMatch{
			Service: ptr.To("gateway_api_conformance.echo_basic.grpcecho.GrpcEcho"), Method: ptr.To(m)}}}
	}
	route := &gatewayv1.GRPCRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "echo"}, Spec: gatewayv1.GRPCRouteSpec{
		CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: []gatewayv1.ParentReference{{Name: "rpc"}}},
		Rules: []gatewayv1.GRPCRouteRule{
			{Matches: method("Echo"), BackendRefs: ref("one")},
			{Matches: method("EchoTwo"), BackendRefs: ref("two")},
		}}}
	create(t, route, gw.GRPCRoutes(ns).Create, func(ctx context.Context) error {
		return gw.GRPCRoutes(ns).Delete(ctx, route.Name, metav1.DeleteOptions{})
	})
	for i, s := range w.Syncers {
		conn, err := grpc.NewClient(net.JoinHostPort(s.Address, strconv.Itoa(fleet[0])),
			grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithAuthority(host))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		c := pb.NewGrpcEchoClient(conn)
		for _, tc := range []struct {
			method, want string
			call         func(context.Context, *pb.EchoRequest, ...grpc.CallOption) (*pb.EchoResponse, error)
		}{{"Echo", "one", c.Echo}, {"EchoTwo", "two", c.EchoTwo}} {
			eventually(t, waitTimeout, fmt.Sprintf("syncer %d: %s answered by %s", i, tc.method, tc.want), func() error {
				ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
				defer cancel()
				resp, err := tc.call(ctx, &pb.EchoRequest{})
				if err != nil {
					return err
				}
				if pod := resp.GetAssertions().GetContext().GetPod(); pod != tc.want {
					return fmt.Errorf("answered by %q", pod)
				}
				return nil
			})
		}
	}
	eventually(t, waitTimeout, "the GRPCRoute Accepted", func() error {
		r, err := gw.GRPCRoutes(ns).Get(t.Context(), route.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(r.Status.Parents) != 1 || !conditionTrue(r.Status.Parents[0].Conditions, "Accepted") ||
			!conditionTrue(r.Status.Parents[0].Conditions, "ResolvedRefs") {
			return fmt.Errorf("status %+v", r.Status.Parents)
		}
		return nil
	})
}

// conditionTrue reports whether condition typ of cs is True.
func conditionTrue(cs []metav1.Condition, typ string) bool {
	for _, c := range cs {
		if c.Type == typ {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}
