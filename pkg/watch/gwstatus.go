package watch

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/gateway"
)

// gatewayStatus writes, during one leader term, the status of our
// GatewayClasses, of our Gateways (after keeping their Services,
// gwservice.go) and of the HTTPRoutes and GRPCRoutes whose parents are our Gateways, as
// gateway.World computes it from the caches. A status is written through
// the status subresource only when it differs, lastTransitionTimes aside
// (kept while a condition's status holds); route parents of other
// controllers are never touched. A Gateway is Programmed only once it has
// an address and enough syncers (Config.StatusSyncers) serve the version of
// it, and of its Service, the term published (servedGateway).
type gatewayStatus struct {
	w     *Watcher
	t     *term
	svc   *gatewayServices // nil when no Services are kept
	queue workqueue.TypedRateLimitingInterface[key]

	mu      sync.Mutex
	waiting map[key]bool // Gateways not Programmed for want of the syncers
}

func newGatewayStatus(w *Watcher, t *term) *gatewayStatus {
	return &gatewayStatus{w: w, t: t, svc: newGatewayServices(w), queue: newQueue[key](), waiting: make(map[key]bool)}
}

// Indexes of the HTTPRoute and GRPCRoute informers: routes by the
// "namespace/name" of the Gateways their parentRefs name and of the
// Services their backendRefs name.
const (
	routeParentIndex  = "routeParent"
	routeBackendIndex = "routeBackend"
)

// routeKinds are the kinds of HTTP routes (a GRPCRoute as its HTTPView).
var routeKinds = []events.Kind{events.KindHTTPRoute, events.KindGRPCRoute}

// allRouteKinds are routeKinds and the stream route kinds (gwstreams.go).
var allRouteKinds = []events.Kind{events.KindHTTPRoute, events.KindGRPCRoute, events.KindTLSRoute, events.KindTCPRoute, events.KindUDPRoute}

func routeIndexers() cache.Indexers {
	return cache.Indexers{
		cache.NamespaceIndex: cache.MetaNamespaceIndexFunc,
		routeParentIndex: func(obj any) ([]string, error) {
			r := httpView(obj)
			if r == nil {
				return streamRouteParents(obj), nil
			}
			var out []string
			for _, p := range r.Spec.ParentRefs {
				if ns, name, ok := gateway.ParentGateway(&p, r.Namespace); ok {
					out = append(out, ns+"/"+name)
				}
			}
			return out, nil
		},
		routeBackendIndex: func(obj any) ([]string, error) {
			r := httpView(obj)
			if r == nil {
				return streamRouteBackends(obj), nil
			}
			var out []string
			for _, rule := range r.Spec.Rules {
				for _, b := range rule.BackendRefs {
					ns := r.Namespace
					if b.Namespace != nil {
						ns = string(*b.Namespace)
					}
					out = append(out, ns+"/"+string(b.Name))
				}
			}
			return out, nil
		},
	}
}

// httpView is route obj as an HTTPRoute (a GRPCRoute's gateway.HTTPView);
// nil for any other object.
func httpView(obj any) *gatewayv1.HTTPRoute {
	switch r := obj.(type) {
	case *gatewayv1.HTTPRoute:
		return r
	case *gatewayv1.GRPCRoute:
		return gateway.HTTPView(r)
	}
	return nil
}

// run writes status until ctx ends (one worker: the Services' port
// allocation must not race).
func (g *gatewayStatus) run(ctx context.Context) {
	g.enqueueAll()
	go func() {
		<-ctx.Done()
		g.queue.ShutDown()
	}()
	defer g.w.metrics.gatewaysWaiting.Set(0)
	for {
		k, shutdown := g.queue.Get()
		if shutdown {
			return
		}
		if err := g.sync(ctx, k); err != nil && ctx.Err() == nil {
			g.w.log.Warn("gateway api status update failed, will retry", "kind", k.Kind, "namespace", k.Namespace,
				"name", k.Name, "retries", g.queue.NumRequeues(k), "error", err)
			g.queue.AddRateLimited(k)
		} else {
			g.queue.Forget(k)
		}
		g.queue.Done(k)
	}
}

// enqueueAll queues every GatewayClass, Gateway, HTTPRoute and GRPCRoute,
// and the Gateways of the Services kept (to delete those of Gateways
// gone).
func (g *gatewayStatus) enqueueAll() {
	for _, kind := range append([]events.Kind{events.KindGatewayClass, events.KindGateway, events.KindBackendTLSPolicy}, allRouteKinds...) {
		for _, obj := range g.w.informers.sources[kind].list() {
			if k, err := keyOf(kind, obj); err == nil {
				g.queue.Add(k)
			}
		}
	}
	if g.svc != nil {
		for _, gk := range g.svc.gatewayKeys() {
			g.addGateway(gk)
		}
	}
}

// addGateway queues Gateway "namespace/name".
func (g *gatewayStatus) addGateway(cacheKey string) {
	if ns, name, err := cache.SplitMetaNamespaceKey(cacheKey); err == nil {
		g.queue.Add(key{Kind: events.KindGateway, Namespace: ns, Name: name})
	}
}

// addRoutes queues the routes (of every kind) index names value.
func (g *gatewayStatus) addRoutes(index, value string) {
	for _, kind := range allRouteKinds {
		for _, obj := range g.w.informers.sources[kind].byIndex(index, value) {
			if k, err := keyOf(kind, obj); err == nil {
				g.queue.Add(k)
			}
		}
	}
}

// changed queues what a change of obj, of kind, may change the status of.
func (g *gatewayStatus) changed(kind events.Kind, item any) {
	switch o := item.(type) {
	case *gatewayv1.GatewayClass:
		g.queue.Add(key{Kind: kind, Name: o.Name})
		for _, gw := range g.w.informers.sources[events.KindGateway].byIndex(gatewayClassIndex, o.Name) {
			g.gatewayChanged(gw)
		}
	case *gatewayv1.Gateway:
		g.gatewayChanged(o)
	case *gatewayv1.HTTPRoute:
		g.routeChanged(kind, o.Namespace, o.Name, o.Spec.ParentRefs)
		g.routePolicies(o)
	case *gatewayv1.GRPCRoute:
		g.routeChanged(kind, o.Namespace, o.Name, o.Spec.ParentRefs)
	case *gatewayv1.TLSRoute, *gatewayv1.TCPRoute, *gatewayv1.UDPRoute:
		g.streamRouteChanged(kind, item.(runtime.Object))
	case *gatewayv1.ReferenceGrant:
		g.enqueueAll() // grants are few and rarely change
	case *gatewayv1.BackendTLSPolicy:
		g.queue.Add(key{Kind: kind, Namespace: o.Namespace, Name: o.Name})
	case *corev1.ConfigMap:
		g.addPolicies(policyConfigMapIndex, o.Namespace+"/"+o.Name)
	case *corev1.Namespace:
		g.namespaceChanged(o.Name)
	case *corev1.Service:
		if gk := g.svc.gatewayOf(o); gk != "" {
			g.addGateway(gk)
		}
		g.addRoutes(routeBackendIndex, o.Namespace+"/"+o.Name)
	case *corev1.Secret:
		for _, gw := range g.w.informers.sources[events.KindGateway].byIndex(gatewaySecretIndex, o.Namespace+"/"+o.Name) {
			g.gatewayChanged(gw)
		}
	}
}

// routeChanged queues route ns/name, of kind, and the Gateways its
// parentRefs name.
func (g *gatewayStatus) routeChanged(kind events.Kind, ns, name string, parents []gatewayv1.ParentReference) {
	g.queue.Add(key{Kind: kind, Namespace: ns, Name: name})
	for _, p := range parents {
		if gns, gname, ok := gateway.ParentGateway(&p, ns); ok {
			g.addGateway(gns + "/" + gname)
		}
	}
}

// namespaceChanged queues the routes of Namespace name and the Gateways
// they name: a listener may select them by the Namespace's labels.
func (g *gatewayStatus) namespaceChanged(name string) {
	for _, kind := range allRouteKinds {
		for _, obj := range g.w.informers.sources[kind].byIndex(cache.NamespaceIndex, name) {
			g.changed(kind, obj)
		}
	}
}

// gatewayChanged queues Gateway obj and the routes that name it.
func (g *gatewayStatus) gatewayChanged(obj runtime.Object) {
	if k, err := keyOf(events.KindGateway, obj); err == nil {
		g.queue.Add(k)
		g.addRoutes(routeParentIndex, k.cacheKey())
	}
}

// recheck queues the Gateways that wait for the syncers, after a report.
func (g *gatewayStatus) recheck() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for k := range g.waiting {
		g.queue.Add(k)
	}
}

// sync brings the status of one object (and a Gateway's Service) to what
// it should be.
func (g *gatewayStatus) sync(ctx context.Context, k key) error {
	obj, ok := g.w.informers.sources[k.Kind].get(k)
	switch k.Kind {
	case events.KindGatewayClass:
		if c, isClass := obj.(*gatewayv1.GatewayClass); ok && isClass && gateway.ClassOurs(c, g.w.cfg.GatewayControllerName) {
			return g.writeClass(ctx, c)
		}
	case events.KindGateway:
		gw, _ := obj.(*gatewayv1.Gateway)
		return g.syncGateway(ctx, k, gw)
	case events.KindHTTPRoute:
		if r, isRoute := obj.(*gatewayv1.HTTPRoute); ok && isRoute {
			return g.writeRoute(ctx, r)
		}
	case events.KindBackendTLSPolicy:
		if p, isPolicy := obj.(*gatewayv1.BackendTLSPolicy); ok && isPolicy {
			return g.writePolicy(ctx, p)
		}
	case events.KindGRPCRoute:
		if r, isRoute := obj.(*gatewayv1.GRPCRoute); ok && isRoute {
			return g.writeGRPCRoute(ctx, r)
		}
	case events.KindTLSRoute, events.KindTCPRoute, events.KindUDPRoute:
		if ok {
			return g.writeStreamRoute(ctx, obj)
		}
	}
	return nil
}

// syncGateway keeps the Service of Gateway gw (nil: gone) and writes its
// status while it is ours; a Gateway gone or no longer ours loses its
// Service.
func (g *gatewayStatus) syncGateway(ctx context.Context, k key, gw *gatewayv1.Gateway) error {
	w := g.world()
	if gw == nil || !gateway.Ours(gw, w.Class, w.Controller) {
		g.settled(k)
		if g.svc == nil {
			return nil
		}
		return g.svc.remove(ctx, k.Namespace, k.Name)
	}
	var svc *corev1.Service
	var svcErr error
	if g.svc != nil {
		svc, svcErr = g.svc.ensure(ctx, gw)
	}
	prog := gateway.Programming{Addresses: gatewayAddresses(svc)}
	if len(prog.Addresses) > 0 {
		prog.Served, prog.Why = g.servedGateway(gw, svc)
		g.wait(k, !prog.Served)
	} else {
		g.settled(k)
	}
	w.Routes = g.routesOf(k)
	w.StreamRoutes = g.streamRoutesOf(k)
	if err := g.writeGateway(ctx, w, gw, prog); err != nil {
		return err
	}
	return svcErr
}

// wait records whether Gateway k waits for the syncers.
func (g *gatewayStatus) wait(k key, waiting bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if waiting {
		g.waiting[k] = true
	} else {
		delete(g.waiting, k)
	}
	g.w.metrics.gatewaysWaiting.Set(float64(len(g.waiting)))
}

func (g *gatewayStatus) settled(k key) { g.wait(k, false) }

// servedGateway says whether enough current syncers have applied the
// published versions of gw and of its Service and do not report gw
// unserved; why says what is missing.
func (g *gatewayStatus) servedGateway(gw *gatewayv1.Gateway, svc *corev1.Service) (bool, string) {
	seq := g.t.publishedAt(key{Kind: events.KindGateway, Namespace: gw.Namespace, Name: gw.Name}, gw)
	if svc != nil {
		s := g.t.publishedAt(key{Kind: events.KindService, Namespace: svc.Namespace, Name: svc.Name}, svc)
		seq = max(seq, s)
		if s == 0 {
			seq = 0
		}
	}
	if seq == 0 || g.t.events == nil {
		return false, "its latest version and its Service's are not in the stream yet"
	}
	v := g.t.events.serving(objectKey{Kind: events.KindGateway, Namespace: gw.Namespace, Name: gw.Name}, seq)
	need := g.w.cfg.StatusSyncers.needed(v.current)
	if v.served >= need {
		return true, ""
	}
	return false, fmt.Sprintf("%d of %d syncers serve it at stream sequence %d, --status-syncers=%s waits for %d",
		v.served, v.current, seq, g.w.cfg.StatusSyncers, need)
}

// routesOf returns the cached routes that name Gateway k, GRPCRoutes as
// their HTTPView.
func (g *gatewayStatus) routesOf(k key) []*gatewayv1.HTTPRoute {
	var out []*gatewayv1.HTTPRoute
	for _, kind := range routeKinds {
		for _, obj := range g.w.informers.sources[kind].byIndex(routeParentIndex, k.cacheKey()) {
			if r := httpView(obj); r != nil {
				out = append(out, r)
			}
		}
	}
	return out
}

// world is gateway.World over the caches (without Routes, which the
// caller sets when it needs them).
func (g *gatewayStatus) world() *gateway.World {
	var grants []*gatewayv1.ReferenceGrant
	for _, obj := range g.w.informers.sources[events.KindReferenceGrant].list() {
		if gr, ok := obj.(*gatewayv1.ReferenceGrant); ok {
			grants = append(grants, gr)
		}
	}
	return &gateway.World{
		Controller: g.w.cfg.GatewayControllerName,
		Class:      g.w.informers.gatewayClass,
		Gateway: func(ns, name string) *gatewayv1.Gateway {
			gw, _ := cached[*gatewayv1.Gateway](g.w.informers.sources[events.KindGateway], ns, name)
			return gw
		},
		Service: func(ns, name string) *corev1.Service {
			svc, _ := cached[*corev1.Service](g.w.informers.sources[events.KindService], ns, name)
			return svc
		},
		Secret: func(ns, name string) *corev1.Secret {
			s, _ := cached[*corev1.Secret](g.w.informers.sources[events.KindSecret], ns, name)
			return s
		},
		Namespace: func(name string) *corev1.Namespace {
			ns, _ := cached[*corev1.Namespace](g.w.informers.sources[events.KindNamespace], "", name)
			return ns
		},
		Grants:    grants,
		Policies:  g.policies(),
		ConfigMap: g.configMap,
	}
}

// cached returns the object ns/name of src's informers, published or not
// (a Secret the rule of secrets.go hides is still read).
func cached[T runtime.Object](src *source, ns, name string) (T, bool) {
	var zero T
	for _, inf := range src.current() {
		item, ok, err := inf.GetStore().GetByKey(key{Namespace: ns, Name: name}.cacheKey())
		if o, isT := item.(T); err == nil && ok && isT {
			return o, true
		}
	}
	return zero, false
}

// transitionTime is the lastTransitionTime of a condition that changes,
// in whole seconds as the API server stores it.
func transitionTime() metav1.Time { return metav1.NewTime(time.Now().Truncate(time.Second)) }

// semanticEqual compares statuses as the API server would store them.
func semanticEqual(a, b any) bool { return equality.Semantic.DeepEqual(a, b) }

// published queues the Gateway whose published state (or whose
// Service's) may have changed: its Programmed waits for the syncers to
// serve that version.
func (g *gatewayStatus) published(k key) {
	switch k.Kind {
	case events.KindGateway:
		g.queue.Add(k)
	case events.KindService:
		if g.svc != nil && k.Namespace == g.svc.ns {
			if svc, ok := cached[*corev1.Service](g.w.informers.sources[events.KindService], k.Namespace, k.Name); ok {
				if gk := g.svc.gatewayOf(svc); gk != "" {
					g.addGateway(gk)
				}
			}
		}
	}
}

// gatewayStatusOf queues what item, the old state of an updated object,
// named.
func (w *Watcher) gatewayStatusOf(kind events.Kind, item any) {
	if t := w.current.Load(); t != nil && t.gateways != nil {
		t.gateways.changed(kind, item)
	}
}

// chain returns a function calling a (when not nil), then b.
func chain(a, b func()) func() {
	return func() {
		if a != nil {
			a()
		}
		b()
	}
}
