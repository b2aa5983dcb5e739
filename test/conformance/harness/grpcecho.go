package harness

import (
	"context"
	"net"
	"net/netip"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	pb "sigs.k8s.io/gateway-api/conformance/echo-basic/grpcechoserver"
)

// grpcEcho answers as echo-basic's gRPC echo (GRPC_ECHO_SERVER) does over
// plaintext HTTP/2: Echo and EchoTwo return the method called, the
// request's metadata, its authority and the Pod's context; EchoThree is
// left unimplemented, as the suite expects.
type grpcEcho struct {
	pb.UnimplementedGrpcEchoServer
	service string
	pod     *pb.Context
}

// startGRPCEchoPod listens on ip's echo-basic HTTP port with the gRPC echo.
func startGRPCEchoPod(ip netip.Addr, info echoInfo) (*echoPod, error) {
	l, err := net.Listen("tcp", netip.AddrPortFrom(ip, echoHTTPPort).String())
	if err != nil {
		return nil, err
	}
	s := grpc.NewServer()
	pb.RegisterGrpcEchoServer(s, &grpcEcho{
		service: string(pb.File_grpcecho_proto.Services().ByName("GrpcEcho").FullName()),
		pod:     &pb.Context{Namespace: info.Namespace, Ingress: info.Ingress, ServiceName: info.Service, Pod: info.Pod},
	})
	go func() { _ = s.Serve(l) }()
	return &echoPod{grpc: s}, nil
}

func (g *grpcEcho) Echo(ctx context.Context, _ *pb.EchoRequest) (*pb.EchoResponse, error) {
	return g.echo(ctx, "Echo"), nil
}

func (g *grpcEcho) EchoTwo(ctx context.Context, _ *pb.EchoRequest) (*pb.EchoResponse, error) {
	return g.echo(ctx, "EchoTwo"), nil
}

// echo is the answer to method: what the call carried.
func (g *grpcEcho) echo(ctx context.Context, method string) *pb.EchoResponse {
	md, _ := metadata.FromIncomingContext(ctx)
	a := &pb.Assertions{FullyQualifiedMethod: "/" + g.service + "/" + method, Context: g.pod}
	for k, vs := range md {
		for _, v := range vs {
			if k == ":authority" {
				a.Authority = v
			}
			a.Headers = append(a.Headers, &pb.Header{Key: k, Value: v})
		}
	}
	return &pb.EchoResponse{Assertions: a}
}
