package watch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayclient "sigs.k8s.io/gateway-api/pkg/client/clientset/versioned"
	gatewayinformers "sigs.k8s.io/gateway-api/pkg/client/informers/externalversions/apis/v1"

	"github.com/ingress-sync/ingress-sync/internal/retry"
	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// The Gateway API kinds are watched only while the cluster serves their
// CRDs. A cluster may have none, get them later, or lose them; the watcher
// follows without a restart. Every Config.GatewayAPIPollInterval it asks
// discovery for gateway.networking.k8s.io/v1 (one request, bounded by
// gatewayDiscoveryTimeout; failures back off up to gatewayPollMax) and, kind
// by kind:
//
//   - a resource that appeared gets an informer (of the watched namespaces,
//     without resync). Its first list reaches the handlers as adds, so the
//     leader publishes every object, as for an object created later;
//   - a resource that went away (its CRD deleted) has its informer stopped,
//     and every object still in its cache is handed to the handlers as
//     deleted: the stream gets their deletes, as the API deleted them with
//     the CRD.
//
// The informer caches count as synced (healthz, and the wait before each
// reconcile) once discovery has answered once and every running Gateway API
// informer has synced, so that a reconcile never mistakes objects not yet
// listed for deleted ones. An informer whose list is forbidden (RBAC without
// the gateway.networking.k8s.io rules) is logged and does not block the
// others: its kind is then treated as absent. Nor does one that has not
// synced within gatewaySyncGrace (a list that keeps failing): Gateway API
// trouble never holds up the Ingress inputs.
//
// Discovery needs no permission beyond what every authenticated user has,
// and no CustomResourceDefinition is ever read.

// Bounds of the discovery poll.
const (
	gatewayDiscoveryTimeout = 10 * time.Second
	gatewayPollMax          = 2 * time.Minute
	gatewaySyncGrace        = time.Minute
)

// gatewayGroupVersion is the API the watcher reads.
var gatewayGroupVersion = gatewayv1.GroupVersion.String()

// gatewayResources maps each Gateway API kind to its resource name.
var gatewayResources = map[events.Kind]string{
	events.KindGatewayClass:     "gatewayclasses",
	events.KindGateway:          "gateways",
	events.KindHTTPRoute:        "httproutes",
	events.KindGRPCRoute:        "grpcroutes",
	events.KindReferenceGrant:   "referencegrants",
	events.KindBackendTLSPolicy: "backendtlspolicies",
	events.KindTLSRoute:         "tlsroutes",
	events.KindTCPRoute:         "tcproutes",
	events.KindUDPRoute:         "udproutes",
}

// gatewayAPI runs the informers of the Gateway API kinds the cluster
// serves. Start runs the discovery poll; the informers live as long as it.
type gatewayAPI struct {
	w        *Watcher
	client   gatewayclient.Interface
	interval time.Duration
	log      *slog.Logger

	checked atomic.Bool // discovery has answered at least once
	mu      sync.Mutex
	running map[events.Kind]*kindInformer
}

// kindInformer is the running informer of one kind.
type kindInformer struct {
	inf     cache.SharedIndexInformer
	cancel  context.CancelFunc
	done    chan struct{}
	started time.Time
	denied  atomic.Bool // the API server refused to list the kind
	late    atomic.Bool // not synced within gatewaySyncGrace (logged once)
}

func newGatewayAPI(w *Watcher) *gatewayAPI {
	g := &gatewayAPI{w: w, client: w.gwClient, interval: w.cfg.GatewayAPIPollInterval,
		log: w.log.With("api", gatewayGroupVersion), running: make(map[events.Kind]*kindInformer)}
	for _, k := range events.GatewayKinds {
		w.informers.sources[k].synced = func() bool { return g.synced(k) }
		w.metrics.gatewayKinds.WithLabelValues(string(k)).Set(0)
	}
	return g
}

// Start polls discovery until ctx ends, then stops the informers.
func (g *gatewayAPI) Start(ctx context.Context) error {
	defer g.stopAll()
	backoff := retry.Backoff{Base: g.interval, Max: max(g.interval, gatewayPollMax)}
	failures := 0
	for {
		wait := g.interval
		if err := g.check(ctx); err != nil && ctx.Err() == nil {
			failures++
			wait = backoff.Delay(failures + 1)
			g.log.Warn("Gateway API discovery failed, retrying", "attempt", failures, "retryIn", wait, "err", err)
		} else {
			failures = 0
		}
		if !retry.Sleep(ctx, nil, wait) {
			return nil
		}
	}
}

// check asks discovery which kinds are served and starts or stops their
// informers to match.
func (g *gatewayAPI) check(ctx context.Context) error {
	served, err := g.discover(ctx)
	if err != nil {
		return err
	}
	for _, k := range events.GatewayKinds {
		g.mu.Lock()
		ki := g.running[k]
		g.mu.Unlock()
		switch {
		case served[gatewayResources[k]] && ki == nil:
			g.startKind(ctx, k)
		case !served[gatewayResources[k]] && ki != nil:
			g.stopKind(k, ki)
		}
	}
	g.checked.Store(true)
	return nil
}

// discover returns the resources of gatewayGroupVersion the API server
// serves: none when it serves no such group version.
func (g *gatewayAPI) discover(ctx context.Context) (map[string]bool, error) {
	ctx, cancel := context.WithTimeout(ctx, gatewayDiscoveryTimeout)
	defer cancel()
	var list metav1.APIResourceList
	var err error
	if rc := g.w.cfg.Client.Discovery().RESTClient(); rc != nil {
		var raw []byte
		raw, err = rc.Get().AbsPath("/apis", gatewayGroupVersion).Do(ctx).Raw()
		if err == nil {
			err = json.Unmarshal(raw, &list)
		}
	} else { // a client without REST access (fakes): no context, its own timeout
		var l *metav1.APIResourceList
		if l, err = g.w.cfg.Client.Discovery().ServerResourcesForGroupVersion(gatewayGroupVersion); err == nil {
			list = *l
		}
	}
	if apierrors.IsNotFound(err) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discover %s: %w", gatewayGroupVersion, err)
	}
	served := make(map[string]bool, len(list.APIResources))
	for _, r := range list.APIResources {
		served[r.Name] = true // subresources ("gateways/status") never match a kind's name
	}
	return served, nil
}

// startKind starts the informer of kind k, its handlers first.
func (g *gatewayAPI) startKind(ctx context.Context, k events.Kind) {
	inf := g.newInformer(k)
	ki := &kindInformer{inf: inf, done: make(chan struct{}), started: time.Now()}
	err := errors.Join(inf.SetTransform(dropManagedFields),
		inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) { g.watchError(k, ki, err) }))
	if err == nil {
		_, err = inf.AddEventHandler(g.w.handler(k))
	}
	if err != nil { // only on an informer already started, which this one is not
		g.log.Error("cannot prepare informer", "kind", k, "err", err)
		return
	}
	var runCtx context.Context
	runCtx, ki.cancel = context.WithCancel(ctx)
	go func() {
		defer close(ki.done)
		inf.RunWithContext(runCtx)
	}()
	g.mu.Lock()
	g.running[k] = ki
	g.mu.Unlock()
	g.w.informers.sources[k].setInformers([]cache.SharedIndexInformer{inf})
	g.w.metrics.gatewayKinds.WithLabelValues(string(k)).Set(1)
	g.log.Info("Gateway API kind served: watching it", "kind", k)
}

// stopKind stops the informer of kind k (its CRD is gone) and hands what
// its cache still holds to the handlers as deleted.
func (g *gatewayAPI) stopKind(k events.Kind, ki *kindInformer) {
	ki.cancel()
	<-ki.done
	left := ki.inf.GetStore().List()
	g.w.informers.sources[k].setInformers(nil)
	g.w.metrics.gatewayKinds.WithLabelValues(string(k)).Set(0)
	g.mu.Lock()
	delete(g.running, k)
	g.mu.Unlock()
	g.log.Info("Gateway API kind no longer served: its objects are deleted", "kind", k, "objects", len(left))
	for _, obj := range left {
		g.w.changed(k, obj, true)
	}
}

// stopAll stops every informer, on the way out.
func (g *gatewayAPI) stopAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for k, ki := range g.running {
		ki.cancel()
		<-ki.done
		delete(g.running, k)
	}
}

// watchError logs a failed list or watch; a refused list marks the kind
// denied, so that it does not keep the caches unsynced.
func (g *gatewayAPI) watchError(k events.Kind, ki *kindInformer, err error) {
	if apierrors.IsForbidden(err) {
		if !ki.denied.Swap(true) {
			g.log.Error("not allowed to list and watch a Gateway API kind: grant list and watch on it (deploy/ has the rules); treating it as absent",
				"kind", k, "resource", gatewayResources[k], "err", err)
		}
		return
	}
	g.log.Warn("Gateway API list or watch failed, the informer retries", "kind", k, "err", err)
}

// synced reports whether kind k counts as synced: discovery answered, and
// its informer, if running, allowed and not late, has synced.
func (g *gatewayAPI) synced(k events.Kind) bool {
	if !g.checked.Load() {
		return false
	}
	g.mu.Lock()
	ki := g.running[k]
	g.mu.Unlock()
	switch {
	case ki == nil || ki.denied.Load() || ki.inf.HasSynced():
		return true
	case time.Since(ki.started) < gatewaySyncGrace:
		return false
	}
	if !ki.late.Swap(true) {
		g.log.Error("Gateway API informer not synced, no longer waiting for it", "kind", k, "waited", gatewaySyncGrace)
	}
	return true
}

// newInformer builds the informer of kind k with the indexes the Secret
// rule reads (gateway_secrets.go).
func (g *gatewayAPI) newInformer(k events.Kind) cache.SharedIndexInformer {
	ns := g.w.cfg.WatchNamespace
	byNS := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	switch k {
	case events.KindGatewayClass:
		return gatewayinformers.NewGatewayClassInformer(g.client, 0, cache.Indexers{})
	case events.KindGateway:
		return gatewayinformers.NewGatewayInformer(g.client, ns, 0, cache.Indexers{
			gatewaySecretIndex: gatewaySecretKeys, gatewayClassIndex: gatewayClassKeys})
	case events.KindHTTPRoute:
		return gatewayinformers.NewHTTPRouteInformer(g.client, ns, 0, routeIndexers())
	case events.KindBackendTLSPolicy:
		return gatewayinformers.NewBackendTLSPolicyInformer(g.client, ns, 0, policyIndexers())
	case events.KindGRPCRoute:
		return gatewayinformers.NewGRPCRouteInformer(g.client, ns, 0, routeIndexers())
	case events.KindTLSRoute:
		return gatewayinformers.NewTLSRouteInformer(g.client, ns, 0, routeIndexers())
	case events.KindTCPRoute:
		return gatewayinformers.NewTCPRouteInformer(g.client, ns, 0, routeIndexers())
	case events.KindUDPRoute:
		return gatewayinformers.NewUDPRouteInformer(g.client, ns, 0, routeIndexers())
	}
	return gatewayinformers.NewReferenceGrantInformer(g.client, ns, 0, byNS)
}
