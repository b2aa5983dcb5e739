package nginx

import (
	"context"
	"encoding/hex"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/tracing"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
	"github.com/ingress-sync/ingress-sync/test/testkit/otlptest"
)

// traceparent splits a W3C traceparent header: trace id, span id, flags.
func traceparent(t *testing.T, h string) (trace, span, flags string) {
	t.Helper()
	f := strings.Split(h, "-")
	if len(f) != 4 || f[0] != "00" || len(f[1]) != 32 || len(f[2]) != 16 || len(f[3]) != 2 {
		t.Fatalf("traceparent %q is not 00-<32 hex>-<16 hex>-<2 hex>", h)
	}
	return f[1], f[2], f[3]
}

// TestTracing: enable-opentelemetry and its keys on real nginx, the spans
// exported by pkg/tracing to a real OTLP/gRPC receiver: the server span's
// name and attributes (the nginx module's), its ids against the
// traceparent the backend receives, a trusted and an untrusted incoming
// span, the sampler AlwaysOff, an untraced route, and a span name from the
// ConfigMap; switching tracing on for a route does not reload nginx.
func TestTracing(t *testing.T) {
	web := startEcho(t, "web")
	rcv := otlptest.Start(t)
	controller := func(kv ...string) runtime.Object {
		kv = append([]string{"otlp-collector-host", "127.0.0.1", "otlp-collector-port", strconv.Itoa(rcv.Port),
			"otel-service-name", "edge", "otel-schedule-delay-millis", "1"}, kv...)
		return headerConfigMap("ingress", "controller", kv...)
	}
	objects := func(kv ...string) []runtime.Object {
		objs := []runtime.Object{
			fixtures.Ingress("default", "traced", ann("enable-opentelemetry", "true"), fixtures.Rule("traced.test", fixtures.Prefix("/app", "web", 80))),
			fixtures.Ingress("default", "untrusted", ann("enable-opentelemetry", "true"), ann("opentelemetry-trust-incoming-span", "false"),
				fixtures.Rule("untrusted.test", fixtures.Prefix("/", "web", 80))),
			fixtures.Ingress("default", "named", ann("enable-opentelemetry", "true"), ann("opentelemetry-operation-name", "my_backend"),
				fixtures.Rule("named.test", fixtures.Prefix("/", "web", 80))),
			fixtures.Ingress("default", "plain", fixtures.Rule("plain.test", fixtures.Prefix("/", "web", 80))),
			controller(kv...),
		}
		return append(objs, echoService("web", web.Port())...)
	}
	cfg := buildObjects(t, objects()...)
	h := startNginx(t, buildObjects(t, objects()[3:]...), nil) // no traced route yet
	applyWithoutReload(t, h, cfg)
	var running atomic.Pointer[config.Configuration]
	running.Store(cfg)
	exp, err := tracing.New(tracing.Options{Fetch: h.lua.Spans, Poll: 20 * time.Millisecond, Timeout: 5 * time.Second,
		Registerer: prometheus.NewRegistry(), Settings: func() config.OpenTelemetry { return running.Load().Global.OpenTelemetry }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- exp.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	spanOf := func(what, trace, span string) otlptest.Span {
		return rcv.Wait(t, what, func(s otlptest.Span) bool {
			return hex.EncodeToString(s.TraceId) == trace && hex.EncodeToString(s.SpanId) == span
		})
	}

	t.Run("a new trace: the span the backend's traceparent names", func(t *testing.T) {
		r := h.mustGet("http://traced.test/app/x?q=1", "User-Agent", "tester/1")
		trace, span, flags := traceparent(t, r.Reply.Headers.Get("Traceparent"))
		if r.Status != 200 || flags != "01" {
			t.Fatalf("status %d, flags %s; want 200 and sampled", r.Status, flags)
		}
		s := spanOf("of the request", trace, span)
		if s.Name != "/app" || s.Kind.String() != "SPAN_KIND_SERVER" || len(s.ParentSpanId) != 0 || s.Service != "edge" {
			t.Errorf("span %q kind %s parent %x service %q; want /app, server, none, edge", s.Name, s.Kind, s.ParentSpanId, s.Service)
		}
		for k, want := range map[string]string{"http.method": "GET", "http.target": "/app/x?q=1", "http.host": "traced.test",
			"http.server_name": "traced.test", "http.status_code": "200", "http.scheme": "http", "http.flavor": "1.1",
			"http.user_agent": "tester/1", "net.peer.ip": "127.0.0.1"} {
			if got := otlptest.Attr(s.Span, k); got != want {
				t.Errorf("attribute %s = %q, want %q", k, got, want)
			}
		}
		if s.EndTimeUnixNano < s.StartTimeUnixNano || s.StartTimeUnixNano == 0 {
			t.Errorf("start %d end %d", s.StartTimeUnixNano, s.EndTimeUnixNano)
		}
	})
	const incoming = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	t.Run("a trusted incoming span is the parent", func(t *testing.T) {
		r := h.mustGet("http://traced.test/app", "Traceparent", incoming, "Tracestate", "k=v")
		trace, span, _ := traceparent(t, r.Reply.Headers.Get("Traceparent"))
		if trace != "0af7651916cd43dd8448eb211c80319c" || span == "b7ad6b7169203331" || r.Reply.Headers.Get("Tracestate") != "k=v" {
			t.Fatalf("backend traceparent %q tracestate %q; want the incoming trace, a new span, the tracestate",
				r.Reply.Headers.Get("Traceparent"), r.Reply.Headers.Get("Tracestate"))
		}
		if s := spanOf("with the parent", trace, span); hex.EncodeToString(s.ParentSpanId) != "b7ad6b7169203331" {
			t.Errorf("parent %x, want b7ad6b7169203331", s.ParentSpanId)
		}
	})
	t.Run("an untrusted incoming span starts a new trace", func(t *testing.T) {
		r := h.mustGet("http://untrusted.test/", "Traceparent", incoming, "Tracestate", "k=v")
		trace, span, _ := traceparent(t, r.Reply.Headers.Get("Traceparent"))
		if trace == "0af7651916cd43dd8448eb211c80319c" || r.Reply.Headers.Get("Tracestate") != "" {
			t.Fatalf("backend traceparent %q tracestate %q; want a new trace and no tracestate",
				r.Reply.Headers.Get("Traceparent"), r.Reply.Headers.Get("Tracestate"))
		}
		if s := spanOf("of the new trace", trace, span); len(s.ParentSpanId) != 0 {
			t.Errorf("parent %x, want none", s.ParentSpanId)
		}
	})
	t.Run("the annotation names the span", func(t *testing.T) {
		r := h.mustGet("http://named.test/z")
		trace, span, _ := traceparent(t, r.Reply.Headers.Get("Traceparent"))
		if s := spanOf("named", trace, span); s.Name != "my_backend" {
			t.Errorf("name %q, want my_backend", s.Name)
		}
	})
	t.Run("an untraced route passes the client's traceparent on", func(t *testing.T) {
		r := h.mustGet("http://plain.test/", "Traceparent", incoming)
		if got := r.Reply.Headers.Get("Traceparent"); got != incoming {
			t.Errorf("backend traceparent %q, want the client's", got)
		}
	})
	t.Run("AlwaysOff records nothing and propagates unsampled", func(t *testing.T) {
		running.Store(buildObjects(t, objects("otel-sampler", "AlwaysOff", "otel-sampler-parent-based", "false",
			"opentelemetry-operation-name", "HTTP $request_method $uri")...))
		applyWithoutReload(t, h, running.Load())
		r := h.mustGet("http://traced.test/app/off")
		trace, _, flags := traceparent(t, r.Reply.Headers.Get("Traceparent"))
		if flags != "00" {
			t.Fatalf("flags %s, want 00 (not sampled)", flags)
		}
		// A sampled request after it: once its span is exported, the one
		// before would have been (nginx's list is in order).
		running.Store(buildObjects(t, objects("opentelemetry-operation-name", "HTTP $request_method $uri")...))
		applyWithoutReload(t, h, running.Load())
		r = h.mustGet("http://traced.test/app/on")
		after, span, _ := traceparent(t, r.Reply.Headers.Get("Traceparent"))
		if s := spanOf("after", after, span); s.Name != "HTTP GET /app/on" {
			t.Errorf("name %q, want the ConfigMap's HTTP $request_method $uri", s.Name)
		}
		for _, s := range rcv.Spans() {
			if hex.EncodeToString(s.TraceId) == trace {
				t.Errorf("span %q of the AlwaysOff request was exported", s.Name)
			}
		}
	})
	t.Run("TraceIdRatioBased samples by the ratio", func(t *testing.T) {
		for _, tc := range []struct{ ratio, flags string }{{"0", "00"}, {"1", "01"}} {
			running.Store(buildObjects(t, objects("otel-sampler", "TraceIdRatioBased", "otel-sampler-ratio", tc.ratio)...))
			applyWithoutReload(t, h, running.Load())
			for range 5 {
				r := h.mustGet("http://traced.test/app/ratio")
				if _, _, flags := traceparent(t, r.Reply.Headers.Get("Traceparent")); flags != tc.flags {
					t.Fatalf("ratio %s: flags %s, want %s", tc.ratio, flags, tc.flags)
				}
			}
		}
	})
}
