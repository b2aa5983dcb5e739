package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/nats-io/nats.go"

	"github.com/ingress-sync/ingress-sync/internal/group"
	"github.com/ingress-sync/ingress-sync/internal/httpserver"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
	"github.com/ingress-sync/ingress-sync/pkg/syncer"
)

// run wires the syncer: nginx, the sync loop, the stream consumer, status
// reports and the metrics server, and stops them all when ctx is done.
func run(ctx context.Context, f *runFlags, log *slog.Logger) error {
	reg := httpserver.NewRegistry()
	ngx, err := syncer.NewNginx(f.nginx, f.nginxMode)
	if err != nil {
		return err
	}
	conn, err := f.nats.connect(ctx, "syncer "+f.pod, log)
	if err != nil {
		return err
	}
	defer conn.Close()
	nc, js := conn.NATS(), conn.JetStream()
	controller := registerMetrics(reg, f, ngx, nc.IsConnected)
	traces, err := newTracing(reg, ngx, log)
	if err != nil {
		return err
	}
	s, err := syncer.New(ngx, syncer.Options{
		Model: f.model.opts, Sources: f.model.sources(), Pod: f.pod, Holdoff: f.holdoff, MaxHoldoff: f.maxHoldoff,
		Report: statusReporter(nc, f.nats.prefix, f.pod), Logger: log, Registerer: reg, ListenCheck: ngx.CanListen,
		Observe: controller.Observe,
	})
	if err != nil {
		return err
	}
	consumer, err := stream.NewConsumer(js, f.nats.stream, f.nats.prefix, s, stream.WithDecodeErrorHandler(s.DecodeError),
		stream.WithStreamRecreated(s.StreamRecreated), stream.WithConsumerLogger(log))
	if err != nil {
		return err
	}
	srv := &httpserver.Server{Addr: f.metricsAddr, Registry: reg, Logger: log, Healthz: ngx.Healthy, Readyz: readyCheck(s)}
	if _, err := srv.Listen(); err != nil {
		return err
	}
	log.Info("syncer starting", "pod", f.pod, "stream", f.nats.stream, "prefix", f.nats.prefix, "nginx-mode", f.nginxMode)
	return group.Run(ctx, log,
		group.Part{Name: "nginx", Start: ngx.Start}, group.Part{Name: "sync", Start: s.Start},
		group.Part{Name: "consumer", Start: consumer.Start}, group.Part{Name: "http", Start: srv.Start},
		group.Part{Name: "tracing", Start: traces.Start})
}

func readyCheck(s *syncer.Syncer) httpserver.Check {
	return func() error {
		if !s.Ready() {
			return errors.New("no configuration applied yet")
		}
		return nil
	}
}

func statusReporter(nc *nats.Conn, prefix, pod string) func(context.Context, events.SyncerStatus) error {
	subject := events.StatusSubject(prefix, pod)
	return func(_ context.Context, st events.SyncerStatus) error {
		data, err := events.EncodeStatus(st)
		if err != nil {
			return err
		}
		return nc.Publish(subject, data)
	}
}
