package syncer

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the syncer's Prometheus metrics, registered on a registry the
// caller owns (never the global default).
type metrics struct {
	events         *prometheus.CounterVec
	decodeErrors   prometheus.Counter
	storeErrors    prometheus.Counter
	builds         prometheus.Counter
	buildDuration  prometheus.Histogram
	skippedEqual   prometheus.Counter
	dynamicUpdates prometheus.Counter
	reloads        prometheus.Counter
	applyErrors    *prometheus.CounterVec
	eventLag       prometheus.Histogram
	lastSequence   prometheus.Gauge
	caughtUp       prometheus.Gauge
	ready          prometheus.Gauge
	problems       prometheus.Gauge
	// streamRecreated counts the bootstraps of a recreated stream.
	streamRecreated prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	const ns, sub = "ingress_sync", "syncer"
	m := &metrics{
		events: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "events_applied_total", Help: "Events applied to the store, by kind."}, []string{"kind"}),
		decodeErrors: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "decode_errors_total", Help: "Stream messages that could not be decoded and were skipped."}),
		storeErrors: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "store_errors_total", Help: "Decoded events the store refused (wrong object type) and skipped."}),
		builds: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "builds_total", Help: "Configurations built."}),
		buildDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub,
			Name: "build_duration_seconds", Help: "Time to build a Configuration from the store.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)}),
		skippedEqual: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "skipped_equal_total", Help: "Builds skipped because they equal the running Configuration."}),
		dynamicUpdates: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "dynamic_updates_total", Help: "Changes applied through the Lua endpoints without a reload."}),
		reloads: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "reloads_total", Help: "Confirmed nginx reloads."}),
		applyErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "apply_errors_total", Help: "Failed applies, by path (reload or dynamic)."}, []string{"path"}),
		eventLag: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub,
			Name: "event_lag_seconds", Help: "From the watcher observing a change to the syncer applying it.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}),
		lastSequence: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub,
			Name: "last_sequence_applied", Help: "Stream sequence of the last event in the applied Configuration."}),
		caughtUp: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub,
			Name: "caught_up", Help: "1 once the bootstrap reached the end of the stream."}),
		ready: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub,
			Name: "ready", Help: "1 once the first Configuration is applied."}),
		problems: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub,
			Name: "configuration_problems", Help: "Objects or parts left out of the running Configuration."}),
		streamRecreated: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "stream_recreated_total", Help: "Times the event stream was found deleted and created again, each followed by a new bootstrap."}),
	}
	reg.MustRegister(m.events, m.decodeErrors, m.storeErrors, m.builds, m.buildDuration, m.skippedEqual,
		m.dynamicUpdates, m.reloads, m.applyErrors, m.eventLag, m.lastSequence, m.caughtUp, m.ready, m.problems,
		m.streamRecreated)
	return m
}
