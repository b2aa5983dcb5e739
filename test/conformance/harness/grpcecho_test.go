package harness

import (
	"testing"

	"google.golang.org/grpc/metadata"
	corev1 "k8s.io/api/core/v1"
	pb "sigs.k8s.io/gateway-api/conformance/echo-basic/grpcechoserver"
)

// TestGRPCEcho: the gRPC echo answers what echo-basic's does, which the
// suite's gRPC tests read: the method, the authority, the metadata and
// the Pod's context.
func TestGRPCEcho(t *testing.T) {
	g := &grpcEcho{service: "gateway_api_conformance.echo_basic.grpcecho.GrpcEcho", pod: &pb.Context{Namespace: "ns", Pod: "pod-1"}}
	ctx := metadata.NewIncomingContext(t.Context(), metadata.Pairs(":authority", "bar.com", "version", "two"))
	for _, tc := range []struct {
		name string
		call func() (*pb.EchoResponse, error)
		want string
	}{
		{"Echo", func() (*pb.EchoResponse, error) { return g.Echo(ctx, &pb.EchoRequest{}) }, pb.GrpcEcho_Echo_FullMethodName},
		{"EchoTwo", func() (*pb.EchoResponse, error) { return g.EchoTwo(ctx, &pb.EchoRequest{}) }, pb.GrpcEcho_EchoTwo_FullMethodName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := tc.call()
			if err != nil {
				t.Fatal(err)
			}
			a := resp.GetAssertions()
			if a.GetFullyQualifiedMethod() != tc.want || a.GetAuthority() != "bar.com" || a.GetContext().GetPod() != "pod-1" ||
				a.GetContext().GetNamespace() != "ns" || len(a.GetHeaders()) != 2 {
				t.Errorf("answer %v, want method %s, authority bar.com, Pod ns/pod-1, 2 headers", a, tc.want)
			}
		})
	}
	if _, err := g.EchoThree(ctx, &pb.EchoRequest{}); err == nil {
		t.Error("EchoThree answered, want Unimplemented")
	}
}

// TestEchoContextModes: echo-basic's gRPC mode is answered by the gRPC
// echo; its TCP and UDP modes by nothing.
func TestEchoContextModes(t *testing.T) {
	pod := func(env ...corev1.EnvVar) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Image: "registry.k8s.io/gateway-api/echo-basic:v1.5.1", Env: env}}}}
	}
	if info, ok := echoContext(pod(corev1.EnvVar{Name: "GRPC_ECHO_SERVER", Value: "1"})); !ok || !info.grpc {
		t.Errorf("gRPC mode: %+v, %v; want the gRPC echo", info, ok)
	}
	if info, ok := echoContext(pod()); !ok || info.grpc {
		t.Errorf("HTTP mode: %+v, %v; want the HTTP echo", info, ok)
	}
	if _, ok := echoContext(pod(corev1.EnvVar{Name: "TCP_ECHO_SERVER", Value: "1"})); ok {
		t.Error("TCP mode answered, want nothing")
	}
}
