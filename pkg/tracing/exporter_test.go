package tracing

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/test/testkit/freeport"
	"github.com/ingress-sync/ingress-sync/test/testkit/otlptest"
)

// fields are a span's fields as lua/tracing.lua writes them.
func fields(i int) []string {
	return []string{fmt.Sprintf("%032x", i+1), fmt.Sprintf("%016x", i+1), "", "/", "a.test", "1700000000.123", "1700000000.456",
		"GET", "1.1", "/x", "a.test", "curl", "200", "http", "80", "10.0.0.1", "5555"}
}

// span is one span of a GET /ingress_traces answer: its fields and the
// end field, separated by NUL.
func span(f []string) string { return strings.Join(append(f, "\n"), "\x00") }

// body is a GET /ingress_traces answer: dropped, then n spans.
func body(dropped, n int) []byte {
	spans := make([]string, n)
	for i := range n {
		spans[i] = span(fields(i))
	}
	return []byte(fmt.Sprintf("#d\t%d\n", dropped) + strings.Join(spans, "\x00"))
}

func TestParseSpans(t *testing.T) {
	badID := fields(1)
	badID[0] = "zz"
	tests := map[string]struct {
		data                      string
		spans, dropped, malformed int
	}{
		"empty":           {"#d\t0\n", 0, 0, 0},
		"spans and drops": {string(body(3, 2)), 2, 3, 0},
		"a malformed span is skipped": {"#d\t0\n" + strings.Join([]string{span(fields(0)), span([]string{"not", "a", "span"}),
			span(badID), span(fields(2))}, "\x00"), 2, 0, 2},
		"a span without its end": {"#d\t0\n" + span(fields(0)) + "\x00" + strings.Join(fields(1), "\x00"), 1, 0, 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			b := ParseSpans([]byte(tc.data))
			if len(b.Spans) != tc.spans || b.Dropped != tc.dropped || b.Malformed != tc.malformed {
				t.Fatalf("spans %d dropped %d malformed %d; want %d %d %d", len(b.Spans), b.Dropped, b.Malformed, tc.spans, tc.dropped, tc.malformed)
			}
		})
	}
	s := ParseSpans(body(0, 1)).Spans[0]
	if s.StartTimeUnixNano != 1700000000123000000 || s.EndTimeUnixNano != 1700000000456000000 || len(s.ParentSpanId) != 0 {
		t.Errorf("times %d %d parent %x", s.StartTimeUnixNano, s.EndTimeUnixNano, s.ParentSpanId)
	}
}

// TestText: a client's values become valid UTF-8 protobuf strings without
// control characters.
func TestText(t *testing.T) {
	tests := map[string]struct{ in, want string }{
		"plain":              {"curl/8.0", "curl/8.0"},
		"UTF-8 kept":         {"/caf\u00e9", "/caf\u00e9"},
		"control characters": {"a\tb\x01c\x7f", "a?b?c?"},
		"invalid UTF-8":      {"a\xffb\xc3", "a\ufffdb\ufffd"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := text([]byte(tc.in)); got != tc.want {
				t.Errorf("text(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// newTest returns an Exporter whose Fetch answers data once, then nothing.
func newTest(t *testing.T, s config.OpenTelemetry, data []byte) *Exporter {
	t.Helper()
	e, err := New(Options{Timeout: 200 * time.Millisecond, Registerer: prometheus.NewRegistry(),
		Settings: func() config.OpenTelemetry { return s },
		Fetch: func(context.Context) ([]byte, error) {
			d := data
			data = []byte("#d\t0\n")
			return d, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.disconnect)
	return e
}

func settings(host string, port int, kv func(*config.OpenTelemetry)) config.OpenTelemetry {
	s := config.DefaultOpenTelemetry()
	s.CollectorHost, s.CollectorPort, s.ScheduleDelayMillis = host, port, 1
	if kv != nil {
		kv(&s)
	}
	return s
}

// TestExporterBounds: a collector that is absent or does not answer, a
// full queue, no collector set, and nginx's own drops each cost spans,
// counted by reason; none blocks longer than the export timeout.
func TestExporterBounds(t *testing.T) {
	ports, err := freeport.Ports(1)
	if err != nil {
		t.Fatal(err)
	}
	blocked := otlptest.Start(t)
	blocked.Block = true
	ok := otlptest.Start(t)
	tests := map[string]struct {
		s        config.OpenTelemetry
		data     []byte
		reason   string
		dropped  float64
		exported float64
	}{
		"absent collector":  {settings("127.0.0.1", ports[0], nil), body(0, 3), DropExport, 3, 0},
		"blocked collector": {settings("127.0.0.1", blocked.Port, nil), body(0, 3), DropExport, 3, 0},
		"no collector":      {settings("", 4317, nil), body(0, 3), DropNoCollector, 3, 0},
		"nginx dropped":     {settings("127.0.0.1", ok.Port, nil), body(5, 1), DropNginxQueue, 5, 1},
		"queue full": {settings("127.0.0.1", ok.Port, func(s *config.OpenTelemetry) {
			s.MaxQueueSize, s.MaxExportBatchSize, s.ScheduleDelayMillis = 4, 4, 3600000
		}), body(0, 6), DropQueue, 2, 4},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := newTest(t, tc.s, tc.data)
			e.round(context.Background())
			if got := testutil.ToFloat64(e.dropped.WithLabelValues(tc.reason)); got != tc.dropped {
				t.Errorf("dropped{%s} = %v, want %v", tc.reason, got, tc.dropped)
			}
			if got := testutil.ToFloat64(e.exported); got != tc.exported {
				t.Errorf("exported = %v, want %v", got, tc.exported)
			}
		})
	}
}

// TestExporterBatches: spans wait for a full batch until the schedule
// delay passes, and go out in batches of otel-max-export-batch-size.
func TestExporterBatches(t *testing.T) {
	rcv := otlptest.Start(t)
	e := newTest(t, settings("127.0.0.1", rcv.Port, func(s *config.OpenTelemetry) {
		s.MaxExportBatchSize, s.ScheduleDelayMillis = 2, 3600000
	}), body(0, 5))
	e.last = time.Now()
	e.round(context.Background())
	if got, left := len(rcv.Spans()), len(e.queue); got != 4 || left != 1 {
		t.Fatalf("exported %d, queued %d; want two batches of 2 and 1 waiting", got, left)
	}
	e.last = time.Time{} // the delay passed
	e.round(context.Background())
	if got := len(rcv.Spans()); got != 5 || rcv.Spans()[4].Service != "nginx" {
		t.Fatalf("exported %d, want 5 with service nginx", got)
	}
}

// BenchmarkParseSpans: one read of 1000 spans, as the syncer parses it
// every half second under load (go test ./pkg/tracing -bench ParseSpans).
func BenchmarkParseSpans(b *testing.B) {
	data := body(0, 1000)
	for b.Loop() {
		if n := len(ParseSpans(data).Spans); n != 1000 {
			b.Fatalf("%d spans", n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/span")
}
