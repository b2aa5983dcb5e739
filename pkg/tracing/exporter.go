package tracing

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
)

// Reasons of ingress_sync_tracing_spans_dropped_total.
const (
	DropNginxQueue  = "nginx_queue_full" // nginx held 8192 spans not yet read
	DropQueue       = "queue_full"       // otel-max-queuesize spans waited for export
	DropExport      = "export_failed"    // the collector did not take the batch
	DropNoCollector = "no_collector"     // otlp-collector-host is not set
)

// ErrOptions is the error of Options that cannot work.
var ErrOptions = errors.New("tracing: invalid options")

// Options configure an Exporter.
type Options struct {
	// Fetch reads and empties nginx's span list (nginx.Client.Spans).
	Fetch func(ctx context.Context) ([]byte, error)
	// Settings returns the running ConfigMap's OpenTelemetry keys (the
	// zero value: nothing set, ingress-nginx's defaults).
	Settings func() config.OpenTelemetry
	// Poll is the interval between two reads of nginx (default 500ms).
	Poll time.Duration
	// Timeout bounds one read of nginx and one export (default 10s).
	Timeout    time.Duration
	Registerer prometheus.Registerer
	Logger     *slog.Logger
}

// Exporter reads the spans nginx records and exports them over OTLP/gRPC
// (see the package comment).
type Exporter struct {
	o        Options
	dropped  *prometheus.CounterVec
	exported prometheus.Counter

	queue    []*tracepb.Span
	last     time.Time
	endpoint string
	client   otlptrace.Client
}

// New returns an Exporter; its metrics are registered on o.Registerer.
func New(o Options) (*Exporter, error) {
	if o.Fetch == nil || o.Settings == nil {
		return nil, ErrOptions
	}
	if o.Poll <= 0 {
		o.Poll = 500 * time.Millisecond
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	e := &Exporter{o: o,
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ingress_sync_tracing_spans_dropped_total",
			Help: "OpenTelemetry spans dropped before export, by reason"}, []string{"reason"}),
		exported: prometheus.NewCounter(prometheus.CounterOpts{Name: "ingress_sync_tracing_spans_exported_total",
			Help: "OpenTelemetry spans the collector accepted"}),
	}
	for _, r := range []string{DropNginxQueue, DropQueue, DropExport, DropNoCollector} {
		e.dropped.WithLabelValues(r)
	}
	if o.Registerer != nil {
		if err := errors.Join(o.Registerer.Register(e.dropped), o.Registerer.Register(e.exported)); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Start reads and exports spans until ctx ends.
func (e *Exporter) Start(ctx context.Context) error {
	t := time.NewTicker(e.o.Poll)
	defer t.Stop()
	defer e.disconnect()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			e.round(ctx)
		}
	}
}

// round reads nginx once and exports what is due.
func (e *Exporter) round(ctx context.Context) {
	s := withDefaults(e.o.Settings())
	e.connect(ctx, s)
	fctx, cancel := context.WithTimeout(ctx, e.o.Timeout)
	data, err := e.o.Fetch(fctx)
	cancel()
	if err != nil {
		e.o.Logger.Debug("tracing: spans not read", "error", err)
		return
	}
	b := ParseSpans(data)
	e.drop(DropNginxQueue, b.Dropped)
	if e.client == nil {
		e.drop(DropNoCollector, len(b.Spans))
		return
	}
	room := max(s.MaxQueueSize-len(e.queue), 0)
	e.drop(DropQueue, max(len(b.Spans)-room, 0))
	e.queue = append(e.queue, b.Spans[:min(room, len(b.Spans))]...)
	e.exportDue(ctx, s)
}

// exportDue exports full batches, and what waits once the schedule delay
// passed; it stops at the first failed export.
func (e *Exporter) exportDue(ctx context.Context, s config.OpenTelemetry) {
	delay := time.Duration(s.ScheduleDelayMillis) * time.Millisecond
	for len(e.queue) >= s.MaxExportBatchSize || len(e.queue) > 0 && time.Since(e.last) >= delay {
		n := min(len(e.queue), s.MaxExportBatchSize)
		batch := e.queue[:n]
		e.queue = append(e.queue[:0:0], e.queue[n:]...)
		e.last = time.Now()
		if err := e.export(ctx, s, batch); err != nil {
			e.drop(DropExport, n)
			e.o.Logger.Warn("tracing: export failed", "collector", e.endpoint, "spans", n, "error", err)
			return
		}
		e.exported.Add(float64(n))
	}
}

func (e *Exporter) export(ctx context.Context, s config.OpenTelemetry, spans []*tracepb.Span) error {
	ctx, cancel := context.WithTimeout(ctx, e.o.Timeout)
	defer cancel()
	return e.client.UploadTraces(ctx, []*tracepb.ResourceSpans{resourceSpans(s.ServiceName, spans)})
}

// resourceSpans wraps spans with the resource of service and the scope
// "nginx" (the module's tracer).
func resourceSpans(service string, spans []*tracepb.Span) *tracepb.ResourceSpans {
	return &tracepb.ResourceSpans{
		Resource:   &resourcepb.Resource{Attributes: []*commonpb.KeyValue{str("service.name", []byte(service))}},
		ScopeSpans: []*tracepb.ScopeSpans{{Scope: &commonpb.InstrumentationScope{Name: "nginx"}, Spans: spans}},
	}
}

// connect (re)makes the client when the collector address changed; no
// address: no client, the queue is dropped.
func (e *Exporter) connect(ctx context.Context, s config.OpenTelemetry) {
	endpoint := ""
	if s.CollectorHost != "" {
		endpoint = net.JoinHostPort(s.CollectorHost, strconv.Itoa(s.CollectorPort))
	}
	if endpoint == e.endpoint {
		return
	}
	e.disconnect()
	e.drop(DropNoCollector, len(e.queue))
	e.queue, e.endpoint = nil, endpoint
	if endpoint == "" {
		return
	}
	c := otlptracegrpc.NewClient(otlptracegrpc.WithEndpoint(endpoint), otlptracegrpc.WithInsecure(),
		otlptracegrpc.WithTimeout(e.o.Timeout), otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}))
	sctx, cancel := context.WithTimeout(ctx, e.o.Timeout)
	defer cancel()
	if err := c.Start(sctx); err != nil {
		e.o.Logger.Warn("tracing: collector client not started", "collector", endpoint, "error", err)
		e.endpoint = "" // tried again next round
		return
	}
	e.client = c
	e.o.Logger.Info("tracing: exporting spans", "collector", endpoint)
}

func (e *Exporter) disconnect() {
	if e.client == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.o.Timeout)
	defer cancel()
	_ = e.client.Stop(ctx)
	e.client = nil
}

func (e *Exporter) drop(reason string, n int) {
	if n > 0 {
		e.dropped.WithLabelValues(reason).Add(float64(n))
	}
}

// withDefaults fills what a ConfigMap without OpenTelemetry keys leaves
// zero, and bounds the batch by the queue, as the SDK's batch processor.
func withDefaults(s config.OpenTelemetry) config.OpenTelemetry {
	if s == (config.OpenTelemetry{}) {
		s = config.DefaultOpenTelemetry()
	}
	s.MaxExportBatchSize = min(s.MaxExportBatchSize, s.MaxQueueSize)
	return s
}
