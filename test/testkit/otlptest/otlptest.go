// Package otlptest is a real OTLP/gRPC trace receiver for tests: an
// in-process gRPC server implementing the collector's TraceService
// (go.opentelemetry.io/proto/otlp) on a free loopback port, which keeps
// every span it receives with its resource's service.name.
package otlptest

import (
	"context"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"

	"github.com/ingress-sync/ingress-sync/test/testkit/freeport"
)

// Span is a received span and the service.name of its resource.
type Span struct {
	*tracepb.Span
	Service string
}

// Receiver is a running OTLP/gRPC trace receiver.
type Receiver struct {
	collectorpb.UnimplementedTraceServiceServer
	// Port is the port it listens on at 127.0.0.1.
	Port int
	// Block, when set, makes every export wait until its context ends
	// (a collector that does not answer).
	Block bool

	mu    sync.Mutex
	spans []Span
}

// Start starts a receiver, stopped when the test ends.
func Start(t testing.TB) *Receiver {
	t.Helper()
	ports, err := freeport.Ports(1)
	if err != nil {
		t.Fatal(err)
	}
	r := &Receiver{Port: ports[0]}
	l, err := net.Listen("tcp", r.Addr())
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	collectorpb.RegisterTraceServiceServer(s, r)
	go func() { _ = s.Serve(l) }()
	t.Cleanup(s.Stop)
	return r
}

// Addr is host:port.
func (r *Receiver) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Port)) }

// Export implements the collector's TraceService.
func (r *Receiver) Export(ctx context.Context, req *collectorpb.ExportTraceServiceRequest) (*collectorpb.ExportTraceServiceResponse, error) {
	if r.Block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, Span{Span: s, Service: service})
			}
		}
	}
	return &collectorpb.ExportTraceServiceResponse{}, nil
}

// Spans returns the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Wait returns the first span match accepts, failing the test when none
// came within 20 seconds.
func (r *Receiver) Wait(t testing.TB, what string, match func(Span) bool) Span {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, s := range r.Spans() {
			if match(s) {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no span %s received within 20s; got %d spans", what, len(r.Spans()))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Attr returns the string form of span attribute key ("" when absent).
func Attr(s *tracepb.Span, key string) string {
	for _, kv := range s.GetAttributes() {
		if kv.GetKey() != key {
			continue
		}
		if v, ok := kv.GetValue().GetValue().(*commonpb.AnyValue_IntValue); ok {
			return strconv.FormatInt(v.IntValue, 10)
		}
		return kv.GetValue().GetStringValue()
	}
	return ""
}
