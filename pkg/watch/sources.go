package watch

import (
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// key identifies one object of one kind.
type key struct {
	Kind      events.Kind
	Namespace string // "" for IngressClass
	Name      string
}

// cacheKey is the informer store key: "namespace/name" or "name".
func (k key) cacheKey() string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

func (k key) String() string { return string(k.Kind) + " " + k.cacheKey() }

// keyOf is the key of obj, of kind.
func keyOf(kind events.Kind, obj runtime.Object) (key, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return key{}, fmt.Errorf("%s without metadata: %w", kind, err)
	}
	return key{Kind: kind, Namespace: m.GetNamespace(), Name: m.GetName()}, nil
}

// source is the informer cache of one kind; ConfigMaps have one informer for
// the watched namespaces and one per configured name outside them. keep,
// when set, hides cached objects that must not be published now (Secrets no
// Ingress references, ConfigMaps nothing references: configmaps.go).
//
// The informers of the Gateway API kinds come and go with their CRDs
// (gateway.go): those sources are dynamic, their informers swapped under
// mu and read through current, and synced says whether they have synced.
// The informers of the other sources never change after New.
type source struct {
	kind      events.Kind
	informers []cache.SharedIndexInformer
	keep      func(runtime.Object) bool

	dynamic bool
	mu      sync.RWMutex
	synced  func() bool
}

// current returns the informers of the source now.
func (s *source) current() []cache.SharedIndexInformer {
	if !s.dynamic {
		return s.informers
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.informers
}

// setInformers replaces the informers of a dynamic source.
func (s *source) setInformers(infs []cache.SharedIndexInformer) {
	s.mu.Lock()
	s.informers = infs
	s.mu.Unlock()
}

// byIndex returns the cached objects that index names value, visible or
// not (an informer without the index contributes nothing).
func (s *source) byIndex(index, value string) []runtime.Object {
	var out []runtime.Object
	for _, inf := range s.current() {
		items, err := inf.GetIndexer().ByIndex(index, value)
		if err != nil {
			continue
		}
		for _, item := range items {
			if obj, ok := item.(runtime.Object); ok {
				out = append(out, obj)
			}
		}
	}
	return out
}

// indexValues returns every value of index in the cache.
func (s *source) indexValues(index string) []string {
	var out []string
	for _, inf := range s.current() {
		out = append(out, inf.GetIndexer().ListIndexFuncValues(index)...)
	}
	return out
}

// visible reports whether obj may be published now.
func (s *source) visible(obj runtime.Object) bool {
	return published(obj) && (s.keep == nil || s.keep(obj))
}

// get returns the cached object of k, if any.
func (s *source) get(k key) (runtime.Object, bool) {
	for _, inf := range s.current() {
		item, ok, err := inf.GetStore().GetByKey(k.cacheKey())
		if err == nil && ok {
			if obj, isObj := item.(runtime.Object); isObj && s.visible(obj) {
				return obj, true
			}
		}
	}
	return nil, false
}

// list returns every cached object.
func (s *source) list() []runtime.Object {
	var out []runtime.Object
	for _, inf := range s.current() {
		for _, item := range inf.GetStore().List() {
			if obj, ok := item.(runtime.Object); ok && s.visible(obj) {
				out = append(out, obj)
			}
		}
	}
	return out
}

func (s *source) hasSynced() bool {
	if s.synced != nil {
		return s.synced()
	}
	for _, inf := range s.current() {
		if !inf.HasSynced() {
			return false
		}
	}
	return true
}

// published reports whether obj may ever be published: every object but a
// Secret that is not of type kubernetes.io/tls or Opaque (auth-secret). The
// informers already select those types by field selector; this guards
// against anything else.
func published(obj runtime.Object) bool {
	if s, ok := obj.(*corev1.Secret); ok {
		return s.Type == corev1.SecretTypeTLS || authSecret(s)
	}
	return true
}

// informerSet holds the factories and sources of one watcher.
type informerSet struct {
	factories []informers.SharedInformerFactory
	sources   map[events.Kind]*source
	// publishService is the single-object informer of --publish-service.
	publishService cache.SharedIndexInformer
	// gatewayController is the spec.controllerName of our GatewayClasses
	// (the Secret rule of gateway_secrets.go).
	gatewayController string
}

// newInformerSet builds (but does not start) the informers of cfg, which
// list and watch through client.
func newInformerSet(cfg Config, client kubernetes.Interface) (*informerSet, error) {
	s := &informerSet{sources: make(map[events.Kind]*source, len(events.Kinds))}
	main := s.factory(client, cfg.WatchNamespace, "")
	secrets := s.factory(client, cfg.WatchNamespace, fields.OneTermEqualSelector("type", string(corev1.SecretTypeTLS)).String())
	ingresses := main.Networking().V1().Ingresses().Informer()
	if err := ingresses.AddIndexers(cache.Indexers{tlsSecretIndex: tlsSecretKeys, authSecretIndex: authSecretKeys, configMapRefIndex: configMapRefKeysOf}); err != nil {
		return nil, err
	}
	s.add(events.KindIngress, ingresses)
	s.add(events.KindIngressClass, main.Networking().V1().IngressClasses().Informer())
	s.add(events.KindService, main.Core().V1().Services().Informer())
	s.add(events.KindEndpointSlice, main.Discovery().V1().EndpointSlices().Informer())
	s.add(events.KindSecret, secrets.Core().V1().Secrets().Informer())
	opaque := s.factory(client, cfg.WatchNamespace, fields.OneTermEqualSelector("type", string(corev1.SecretTypeOpaque)).String())
	s.add(events.KindSecret, opaque.Core().V1().Secrets().Informer())
	s.add(events.KindNamespace, s.namespaces(cfg, client))
	for _, k := range events.GatewayKinds {
		s.sources[k] = &source{kind: k, dynamic: true}
	}
	s.gatewayController = cfg.GatewayControllerName
	s.addGatewayServices(cfg, client)
	s.sources[events.KindSecret].keep = s.secretReferenced(cfg.DefaultSSLCertificate, cfg.PublishAllTLSSecrets)
	named := make(map[string]bool, len(cfg.ConfigMaps))
	for _, nn := range cfg.ConfigMaps {
		named[nn] = true
	}
	if err := s.addConfigMaps(cfg, client, named); err != nil {
		return nil, err
	}
	if cfg.PublishService != "" {
		ns, name, err := splitNamespacedName(cfg.PublishService)
		if err != nil {
			return nil, err
		}
		f := s.factory(client, ns, fields.OneTermEqualSelector("metadata.name", name).String())
		s.publishService = f.Core().V1().Services().Informer()
		if err := s.publishService.SetTransform(dropManagedFields); err != nil {
			return nil, err
		}
	}
	for _, src := range s.sources {
		for _, inf := range src.informers {
			if err := inf.SetTransform(dropManagedFields); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

// namespaces is the informer of the watched Namespaces: every one, or
// --watch-namespace's alone. Their labels are what Gateway listeners
// select routes' namespaces by (published trimmed to name and labels).
func (s *informerSet) namespaces(cfg Config, client kubernetes.Interface) cache.SharedIndexInformer {
	sel := ""
	if cfg.WatchNamespace != "" {
		sel = fields.OneTermEqualSelector("metadata.name", cfg.WatchNamespace).String()
	}
	return s.factory(client, "", sel).Core().V1().Namespaces().Informer()
}

// factory returns a new informer factory without resync, limited to ns
// (if not "") and to objects matching fieldSelector (if not "").
func (s *informerSet) factory(client kubernetes.Interface, ns, fieldSelector string) informers.SharedInformerFactory {
	opts := []informers.SharedInformerOption{informers.WithNamespace(ns)}
	if fieldSelector != "" {
		opts = append(opts, informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = fieldSelector }))
	}
	f := informers.NewSharedInformerFactoryWithOptions(client, 0, opts...)
	s.factories = append(s.factories, f)
	return f
}

func (s *informerSet) add(kind events.Kind, inf cache.SharedIndexInformer) {
	src := s.sources[kind]
	if src == nil {
		src = &source{kind: kind}
		s.sources[kind] = src
	}
	src.informers = append(src.informers, inf)
}

// start starts every informer; they stop when stop is closed.
func (s *informerSet) start(stop <-chan struct{}) {
	for _, f := range s.factories {
		f.Start(stop)
	}
}

// shutdown waits for the informer goroutines after stop was closed.
func (s *informerSet) shutdown() {
	for _, f := range s.factories {
		f.Shutdown()
	}
}

// hasSynced reports whether every informer has synced.
func (s *informerSet) hasSynced() bool {
	for _, src := range s.sources {
		if !src.hasSynced() {
			return false
		}
	}
	return s.publishService == nil || s.publishService.HasSynced()
}

// dropManagedFields keeps managedFields out of the caches: the watcher never
// reads them and they are often the largest part of an object.
func dropManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
