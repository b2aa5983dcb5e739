package watch

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the watcher's Prometheus metrics, on its own registry.
type metrics struct {
	published  *prometheus.CounterVec // kind, op
	errors     *prometheus.CounterVec // kind
	latency    *prometheus.HistogramVec
	noop       *prometheus.CounterVec // kind
	conflicts  *prometheus.CounterVec // kind
	behind     *prometheus.CounterVec // kind
	oversize   *prometheus.CounterVec // kind
	leader     prometheus.Gauge
	reconciled *prometheus.CounterVec // result
	reports    *prometheus.CounterVec // result
	kubeEvents *prometheus.CounterVec // type, call, result
	// statusWaiting: Ingresses whose status address waits for the syncers.
	statusWaiting prometheus.Gauge
	// streamRecreated: event streams found missing or recreated while leading.
	streamRecreated prometheus.Counter
	// gatewayKinds: 1 per Gateway API kind watched now (its CRD served).
	gatewayKinds *prometheus.GaugeVec // kind
	// gatewayStatusWrites: Gateway API status writes that reached the API;
	// gatewaysWaiting: Gateways not Programmed for want of the syncers.
	gatewayStatusWrites *prometheus.CounterVec // kind, result
	gatewaysWaiting     prometheus.Gauge
	// apiReachable and apiOutages: the informers' gate (apigate.go).
	apiReachable prometheus.Gauge
	apiOutages   prometheus.Counter
}

// newMetrics registers the metrics on reg.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	const ns, sub = "ingress_sync", "watcher"
	m := &metrics{
		published: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "events_published_total", Help: "Events acknowledged by JetStream, by kind and op."},
			[]string{"kind", "op"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "publish_errors_total", Help: "Failed publish attempts (the key is retried), by kind."},
			[]string{"kind"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub,
			Name: "publish_latency_seconds", Help: "Time from publish to JetStream acknowledgement.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14)}, []string{"kind"}),
		noop: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "noop_updates_dropped_total", Help: "Updates not published because nothing that matters changed, by kind."},
			[]string{"kind"}),
		conflicts: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "publish_conflicts_total", Help: "Events the stream refused because another writer had published on the object's subject (the subject is read again and the object decided anew), by kind."},
			[]string{"kind"}),
		behind: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "stale_versions_dropped_total", Help: "Versions not published because the stream already holds a newer one of the object, by kind."},
			[]string{"kind"}),
		oversize: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "oversize_objects_total", Help: "Objects not published because they exceed the NATS max_payload, by kind."},
			[]string{"kind"}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub,
			Name: "leader", Help: "1 while this replica holds the Lease and publishes, else 0."}),
		reconciled: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "reconciled_objects_total", Help: "Objects examined by the start-up reconcile, by result (unchanged, changed, gone)."},
			[]string{"result"}),
		reports: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "syncer_reports_total", Help: "Syncer status reports read by the leader, by result (ok, malformed)."},
			[]string{"result"}),
		kubeEvents: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "kube_events_total", Help: "Writes of Kubernetes Events on Ingresses that reached the API, by type (Normal, Warning), call (create, patch: a repeat) and result."},
			[]string{"type", "call", "result"}),
		statusWaiting: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub,
			Name: "status_waiting_ingresses", Help: "Ingresses of the class whose status address waits until the syncers serve them (on the leader)."}),
		streamRecreated: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "stream_recreated_total", Help: "Times the leader found the event stream deleted and created again, and reconciled it with the API."}),
		gatewayKinds: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub,
			Name: "gateway_api_kinds_watched", Help: "1 for each Gateway API kind the API server serves and the watcher watches, by kind."},
			[]string{"kind"}),
		gatewayStatusWrites: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "gateway_status_writes_total", Help: "Status writes of GatewayClasses, Gateways and HTTPRoutes that reached the API (on the leader), by kind and result (ok, conflict, error)."},
			[]string{"kind", "result"}),
		gatewaysWaiting: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub,
			Name: "status_waiting_gateways", Help: "Gateways of ours with an address that are not Programmed until the syncers serve them (on the leader)."}),
		apiReachable: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub,
			Name: "api_reachable", Help: "0 while the informers hold their requests because the kube-apiserver is unreachable, else 1."}),
		apiOutages: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub,
			Name: "api_outages_total", Help: "Times the informers found the kube-apiserver unreachable and waited for it to answer ready."}),
	}
	for _, c := range []prometheus.Collector{m.published, m.errors, m.latency, m.noop, m.conflicts, m.behind, m.oversize, m.leader, m.reconciled, m.reports, m.kubeEvents, m.statusWaiting, m.streamRecreated, m.gatewayKinds, m.gatewayStatusWrites, m.gatewaysWaiting, m.apiReachable, m.apiOutages} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
