package watch

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/client-go/tools/cache"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"

	"github.com/ingress-sync/ingress-sync/internal/group"
	"github.com/ingress-sync/ingress-sync/internal/httpserver"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
	"github.com/ingress-sync/ingress-sync/pkg/stream/embedded"
)

// Watcher publishes every change of the ingress inputs to JetStream.
type Watcher struct {
	cfg        Config
	log        *slog.Logger
	metrics    *metrics
	informers  *informerSet
	configMaps map[string]bool // namespace/name of the ConfigMaps in scope
	class      intent.Classes  // the class rule's inputs (ingress.Serves)
	gateway    *gatewayAPI     // the Gateway API informers; nil without Config.GatewayClient
	gwClient   gatewayclient.Interface
	apiGate    *apiGate      // holds the informers' requests during an API outage; nil without Config.RESTConfig
	apiBack    chan struct{} // receives when the gate opened after an outage (capacity 1)

	natsReady  chan struct{} // closed once nats is set
	nats       *natsLink
	synced     atomic.Bool
	reconciled atomic.Bool          // the current leader term finished its reconcile
	current    atomic.Pointer[term] // the leader term, nil on a standby
	leadMu     sync.Mutex           // one term at a time
	started    atomic.Bool
}

// New validates cfg and builds a Watcher; Start runs it.
func New(cfg Config) (*Watcher, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	m, err := newMetrics(cfg.Registry)
	if err != nil {
		return nil, fmt.Errorf("watch: metrics: %w", err)
	}
	log := cfg.Logger.With("component", "watcher", "watcher", cfg.WatcherID)
	client, gwClient, gate, err := gatedClients(cfg, log, m)
	if err != nil {
		return nil, fmt.Errorf("watch: informers' clients: %w", err)
	}
	inf, err := newInformerSet(cfg, client)
	if err != nil {
		return nil, fmt.Errorf("watch: informers: %w", err)
	}
	w := &Watcher{
		cfg: cfg, log: log, metrics: m, informers: inf, configMaps: make(map[string]bool),
		class:     intent.Classes{Controller: cfg.ControllerClass, Class: cfg.IngressClass, WithoutClass: cfg.WatchIngressWithoutClass},
		natsReady: make(chan struct{}), gwClient: gwClient, apiGate: gate, apiBack: make(chan struct{}, 1),
	}
	if gate != nil {
		gate.leading = func() bool { return w.current.Load() != nil }
		gate.back = w.signalAPIBack
	}
	for _, cm := range cfg.ConfigMaps {
		w.configMaps[cm] = true
	}
	if cfg.GatewayClient != nil {
		w.gateway = newGatewayAPI(w)
	}
	if err := w.toleratesNamespacesDenied(); err != nil {
		return nil, fmt.Errorf("watch: namespaces: %w", err)
	}
	if err := w.addHandlers(); err != nil {
		return nil, fmt.Errorf("watch: handlers: %w", err)
	}
	return w, nil
}

// Registry is the Prometheus registry of the watcher's metrics.
func (w *Watcher) Registry() *prometheus.Registry { return w.cfg.Registry }

// Start runs the watcher until ctx ends: embedded NATS if configured, the
// informers, the NATS connection, leader election and, while leading, the
// publishing and the status writer. It returns nil after a clean shutdown.
func (w *Watcher) Start(ctx context.Context) error {
	if !w.started.CompareAndSwap(false, true) {
		return errors.New("watch: Start called twice")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	url, stopEmbedded, err := w.startEmbedded(ctx)
	if err != nil {
		return err
	}
	defer stopEmbedded()
	stop := make(chan struct{})
	w.informers.start(stop)
	defer func() {
		close(stop)
		w.informers.shutdown()
	}()
	defer w.closeNATS()
	parts := []group.Part{
		{Name: "nats", Start: func(ctx context.Context) error { return w.prepareNATS(ctx, url) }},
		{Name: "leadership", Start: w.runLeadership},
	}
	if w.gateway != nil {
		parts = append(parts, group.Part{Name: "gateway-api", Start: w.gateway.Start})
	}
	if w.apiGate != nil {
		parts = append(parts, group.Part{Name: "api-gate", Start: w.apiGate.Start})
	}
	if w.cfg.MetricsAddr != "" {
		srv := &httpserver.Server{Addr: w.cfg.MetricsAddr, Registry: w.cfg.Registry,
			Healthz: w.healthz, Readyz: w.readyz, Logger: w.log}
		parts = append(parts, group.Part{Name: "http", Start: srv.Start})
	}
	return group.Run(ctx, w.log, parts...)
}

// startEmbedded starts nats-server in-process when configured and returns
// the URL to connect to and a stop function.
func (w *Watcher) startEmbedded(ctx context.Context) (string, func(), error) {
	if w.cfg.EmbeddedNATSDir == "" {
		return w.cfg.NATSURL, func() {}, nil
	}
	host, port, err := hostPort(w.cfg.NATSURL)
	if err != nil {
		return "", nil, err
	}
	srv, err := embedded.Start(ctx, embedded.Options{StoreDir: w.cfg.EmbeddedNATSDir, Host: host, Port: port})
	if err != nil {
		return "", nil, fmt.Errorf("watch: embedded NATS: %w", err)
	}
	w.log.Info("embedded NATS started", "url", srv.ClientURL(), "store", w.cfg.EmbeddedNATSDir)
	return srv.ClientURL(), func() {
		srv.Shutdown()
		srv.WaitForShutdown()
	}, nil
}

// signalAPIBack tells the leader term that the informers resume after an
// API outage (guardStream reconciles).
func (w *Watcher) signalAPIBack() {
	select {
	case w.apiBack <- struct{}{}:
	default:
	}
}

func (w *Watcher) closeNATS() {
	select {
	case <-w.natsReady:
		w.nats.nc.Close()
	default:
	}
}

// runLeadership waits for the caches and NATS, then leads: always without
// leader election, else whenever this replica holds the Lease.
func (w *Watcher) runLeadership(ctx context.Context) error {
	began := time.Now()
	if !cache.WaitForCacheSync(ctx.Done(), w.informers.hasSynced) {
		return nil
	}
	w.synced.Store(true)
	w.log.Info("informer caches synced", "took", time.Since(began).Round(time.Millisecond))
	select {
	case <-ctx.Done():
		return nil
	case <-w.natsReady:
	}
	if !w.cfg.LeaderElect {
		w.lead(ctx)
		return nil
	}
	return w.elect(ctx)
}

// healthz: informer caches synced. A NATS outage is readyz's, so that a
// liveness probe does not restart the watcher for it.
func (w *Watcher) healthz() error {
	if !w.synced.Load() {
		return errors.New("informer caches not synced")
	}
	return nil
}

// readyz: healthz, NATS connected, and on the leader a finished reconcile.
func (w *Watcher) readyz() error {
	if err := w.healthz(); err != nil {
		return err
	}
	if !w.natsConnected() {
		return errors.New("NATS not connected")
	}
	if w.current.Load() != nil && !w.reconciled.Load() {
		return errors.New("leader has not finished reconciling the stream")
	}
	return nil
}

// serves applies the class rule with the cached IngressClasses.
func (w *Watcher) serves(ing *networkingv1.Ingress) bool {
	classes := make(map[string]*networkingv1.IngressClass)
	for _, obj := range w.informers.sources[events.KindIngressClass].list() {
		if c, ok := obj.(*networkingv1.IngressClass); ok {
			classes[c.Name] = c
		}
	}
	return ingress.Serves(ing, classes, w.class)
}

// reportOversize logs and counts an object too large for max_payload.
func (w *Watcher) reportOversize(ev events.Event, err error) {
	size := -1
	if b, encErr := events.Encode(ev); encErr == nil {
		size = len(b)
	}
	var maxPayload int64
	if w.nats != nil {
		maxPayload = w.nats.nc.MaxPayload()
	}
	w.metrics.oversize.WithLabelValues(string(ev.Kind)).Inc()
	w.log.Error("object too large to publish", "kind", ev.Kind, "namespace", ev.Namespace, "name", ev.Name,
		"op", ev.Op, "sizeBytes", size, "maxPayload", maxPayload, "err", err)
}
