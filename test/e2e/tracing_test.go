package e2e

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
	"github.com/ingress-sync/ingress-sync/test/testkit/otlptest"
)

// The incoming W3C trace context of the traced request: its trace id and
// the client's span id.
const (
	incomingTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	incomingSpan  = "00f067aa0ba902b7"
)

// TestTracedRequest: the controller ConfigMap turns OpenTelemetry on for
// every route and points the syncers' exporter at an OTLP/gRPC receiver
// of the test (on the namespace's loopback). A request with a trusted
// incoming traceparent, through each syncer, reaches the backend with a
// traceparent of the same trace and a new span id, and the receiver gets
// that server span: ingress-nginx's name and attributes, the client's
// span as its parent, the ConfigMap's service name.
func TestTracedRequest(t *testing.T) {
	ns := setup(t)
	rcv := otlptest.Start(t)
	service(t, ns, "web")
	h := ns + ".example.com"
	applyIngress(t, ours(ns, "traced", fixtures.Rule(h, fixtures.Prefix("/shop", "web", 80))))
	routes(t, nil, map[string]string{"http://" + h + "/shop": "web"})
	writeControllerConfigMap(t, map[string]string{
		"enable-opentelemetry": "true", "opentelemetry-trust-incoming-span": "true",
		"otlp-collector-host": "127.0.0.1", "otlp-collector-port": strconv.Itoa(rcv.Port),
		"otel-service-name": "e2e-edge", "otel-schedule-delay-millis": "100",
	})
	incoming := "00-" + incomingTrace + "-" + incomingSpan + "-01"
	for i, s := range w.Syncers {
		t.Run(s.Name, func(t *testing.T) {
			target := fmt.Sprintf("/shop/cart?n=%d", i)
			var span string
			eventually(t, waitTimeout, "a traced request", func() error {
				var err error
				span, err = tracedHop(t.Context(), i, "http://"+h+target, incoming)
				return err
			})
			got := rcv.Wait(t, "of the request through "+s.Name, func(sp otlptest.Span) bool {
				return hex.EncodeToString(sp.TraceId) == incomingTrace && hex.EncodeToString(sp.SpanId) == span
			})
			checkServerSpan(t, got, h, target)
		})
	}
}

// tracedHop sends a GET with traceparent incoming through syncer i and
// returns the span id of the traceparent the backend received: an error
// until it is one of the incoming trace, sampled, with a span of its own
// (before the ConfigMap applies, nginx passes the client's on untouched).
func tracedHop(ctx context.Context, i int, url, incoming string) (string, error) {
	r, err := echo.Get(ctx, w.Syncers[i].Client(nil), url, "Traceparent", incoming, "User-Agent", "e2e-tracing/1")
	if err != nil {
		return "", err
	}
	if r.Status != 200 || r.Reply.Backend != "web" {
		return "", fmt.Errorf("status %d from %q, want 200 from web", r.Status, r.Reply.Backend)
	}
	got := r.Reply.Headers.Get("Traceparent")
	f := strings.Split(got, "-")
	switch {
	case len(f) != 4 || f[0] != "00" || len(f[2]) != 16:
		return "", fmt.Errorf("backend traceparent %q is not 00-<trace>-<span>-<flags>", got)
	case f[1] != incomingTrace || f[3] != "01":
		return "", fmt.Errorf("backend traceparent %q: want trace %s, sampled", got, incomingTrace)
	case f[2] == incomingSpan:
		return "", fmt.Errorf("backend traceparent %q is the client's: not traced yet", got)
	}
	return f[2], nil
}

// checkServerSpan checks the span of GET target on host h against the
// nginx module's: kind SERVER, named after the path, the client's span as
// parent, the request's attributes.
func checkServerSpan(t *testing.T, s otlptest.Span, h, target string) {
	t.Helper()
	if s.Name != "/shop" || s.Kind.String() != "SPAN_KIND_SERVER" || hex.EncodeToString(s.ParentSpanId) != incomingSpan || s.Service != "e2e-edge" {
		t.Errorf("span %q kind %s parent %x service %q; want /shop, SERVER, %s, e2e-edge", s.Name, s.Kind, s.ParentSpanId, s.Service, incomingSpan)
	}
	if s.StartTimeUnixNano == 0 || s.EndTimeUnixNano < s.StartTimeUnixNano {
		t.Errorf("span times %d to %d", s.StartTimeUnixNano, s.EndTimeUnixNano)
	}
	for k, want := range map[string]string{"http.method": "GET", "http.flavor": "1.1", "http.target": target,
		"http.server_name": h, "http.host": h, "http.user_agent": "e2e-tracing/1", "http.status_code": "200",
		"http.scheme": "http"} {
		if got := otlptest.Attr(s.Span, k); got != want {
			t.Errorf("attribute %s = %q, want %q", k, got, want)
		}
	}
	if ip := net.ParseIP(otlptest.Attr(s.Span, "net.peer.ip")); ip == nil || !ip.IsLoopback() {
		t.Errorf("net.peer.ip = %q, want the client's loopback address", otlptest.Attr(s.Span, "net.peer.ip"))
	}
	for _, k := range []string{"net.host.port", "net.peer.port"} {
		if n, err := strconv.Atoi(otlptest.Attr(s.Span, k)); err != nil || n <= 0 {
			t.Errorf("attribute %s = %q, want a port", k, otlptest.Attr(s.Span, k))
		}
	}
}

// writeControllerConfigMap creates the World's controller ConfigMap with
// data; the test's end deletes it (the World runs without one).
func writeControllerConfigMap(t *testing.T, data map[string]string) {
	t.Helper()
	api := w.Kube.CoreV1().ConfigMaps(configMapNamespace)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: configMapNamespace, Name: configMapName}, Data: data}
	if _, err := api.Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ConfigMap: %v", err)
	}
	t.Cleanup(func() {
		err := api.Delete(context.Background(), configMapName, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete ConfigMap: %v", err)
		}
	})
}
