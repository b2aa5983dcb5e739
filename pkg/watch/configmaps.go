package watch

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// Besides the ConfigMaps named by flags (Config.ConfigMaps), a ConfigMap of
// the watched namespaces is published only while something references it,
// as ingress-nginx reads them by name:
//
//   - an Ingress's custom-headers annotation ("namespace/name" of a
//     ConfigMap in the Ingress's own namespace: the model refuses others),
//     or its auth-proxy-set-headers ("name" or "namespace/name", the same);
//   - the proxy-set-headers or add-headers key of a ConfigMap named by
//     flags (the controller ConfigMap);
//   - a BackendTLSPolicy's caCertificateRefs (backendtls.go).
//
// One informer watches the ConfigMaps of the watched namespaces; the named
// ones it covers are not watched a second time. When a reference appears or
// goes, the ConfigMap's key is queued and the usual decision publishes it or
// its delete, as for TLS Secrets (secrets.go). Named ConfigMaps outside the
// watched namespaces keep an informer of their own; a ConfigMap they
// reference must be in the watched namespaces.

// configMapRefIndex indexes Ingresses by the "namespace/name" of the
// ConfigMap their custom-headers annotation names.
const configMapRefIndex = "configMapRef"

// ConfigMap keys and the annotation whose values name ConfigMaps.
const customHeadersAnnotation = ingress.AnnotationPrefix + "custom-headers"

var configMapRefKeys = []string{"proxy-set-headers", "add-headers"}

func configMapRefKeysOf(obj any) ([]string, error) {
	ing, ok := obj.(*networkingv1.Ingress)
	if !ok {
		return nil, nil
	}
	var refs []string
	ref := ing.Annotations[customHeadersAnnotation]
	if ns, _, found := strings.Cut(ref, "/"); found && ns == ing.Namespace {
		refs = append(refs, ref)
	}
	if ref := authProxySetHeadersRef(ing); ref != "" && !slices.Contains(refs, ref) {
		refs = append(refs, ref)
	}
	return refs, nil
}

// authProxySetHeadersAnnotation names a ConfigMap of headers for the
// external auth request: "name" or "namespace/name", in the Ingress's
// namespace (the model refuses others).
const authProxySetHeadersAnnotation = ingress.AnnotationPrefix + "auth-proxy-set-headers"

// authProxySetHeadersRef returns the "namespace/name" the Ingress's
// auth-proxy-set-headers names in its own namespace, or "".
func authProxySetHeadersRef(ing *networkingv1.Ingress) string {
	ref := ing.Annotations[authProxySetHeadersAnnotation]
	if ref == "" {
		return ""
	}
	ns, name, found := strings.Cut(ref, "/")
	if !found {
		return ing.Namespace + "/" + ref
	}
	if ns != ing.Namespace || name == "" {
		return ""
	}
	return ref
}

// inWatched reports whether namespace ns is watched.
func inWatched(cfg Config, ns string) bool {
	return cfg.WatchNamespace == "" || ns == cfg.WatchNamespace
}

// addConfigMaps adds the ConfigMap informers: one for the watched
// namespaces, and one per named ConfigMap outside them.
func (s *informerSet) addConfigMaps(cfg Config, client kubernetes.Interface, named map[string]bool) error {
	s.sources[events.KindConfigMap] = &source{kind: events.KindConfigMap}
	for nn := range named {
		ns, name, err := splitNamespacedName(nn)
		if err != nil {
			return err
		}
		if !inWatched(cfg, ns) {
			f := s.factory(client, ns, fields.OneTermEqualSelector("metadata.name", name).String())
			s.add(events.KindConfigMap, f.Core().V1().ConfigMaps().Informer())
		}
	}
	s.add(events.KindConfigMap, s.factory(client, cfg.WatchNamespace, "").Core().V1().ConfigMaps().Informer())
	s.sources[events.KindConfigMap].keep = s.configMapReferenced(named)
	return nil
}

// configMapReferenced returns the keep rule of the ConfigMap source.
func (s *informerSet) configMapReferenced(named map[string]bool) func(runtime.Object) bool {
	return func(obj runtime.Object) bool {
		m, err := meta.Accessor(obj)
		if err != nil {
			return false
		}
		k := m.GetNamespace() + "/" + m.GetName()
		if named[k] || s.policyNamesConfigMap(k) {
			return true
		}
		for _, inf := range s.sources[events.KindIngress].informers {
			if refs, err := inf.GetIndexer().ByIndex(configMapRefIndex, k); err == nil && len(refs) > 0 {
				return true
			}
		}
		for nn := range named {
			for _, ref := range s.namedRefs(nn) {
				if ref == k {
					return true
				}
			}
		}
		return false
	}
}

// namedRefs returns the ConfigMaps that the named ConfigMap nn references
// now (from the cache).
func (s *informerSet) namedRefs(nn string) []string {
	for _, inf := range s.sources[events.KindConfigMap].informers {
		if item, ok, err := inf.GetStore().GetByKey(nn); err == nil && ok {
			return refsOfConfigMap(item)
		}
	}
	return nil
}

// refsOfConfigMap returns the ConfigMap references of a named ConfigMap.
func refsOfConfigMap(item any) []string {
	cm, ok := item.(*corev1.ConfigMap)
	if !ok {
		return nil
	}
	var out []string
	for _, key := range configMapRefKeys {
		if v := strings.TrimSpace(cm.Data[key]); strings.Contains(v, "/") {
			out = append(out, v)
		}
	}
	return out
}

// configMapsOf queues the ConfigMaps that item (an Ingress, or a named
// ConfigMap) references, so that a ConfigMap is published when its first
// reference appears and deleted from the stream when its last one goes.
func (t *term) configMapsOf(item any) {
	var refs []string
	switch o := item.(type) {
	case *networkingv1.Ingress:
		refs, _ = configMapRefKeysOf(o)
	case *corev1.ConfigMap:
		if !t.w.configMaps[o.Namespace+"/"+o.Name] {
			return
		}
		refs = refsOfConfigMap(o)
	case *gatewayv1.BackendTLSPolicy:
		refs = policyConfigMapKeys(o)
	case cache.DeletedFinalStateUnknown:
		t.configMapsOf(o.Obj)
		return
	}
	for _, k := range refs {
		if ns, name, err := splitNamespacedName(k); err == nil {
			t.notify(key{Kind: events.KindConfigMap, Namespace: ns, Name: name}, nil)
		}
	}
}

// configMapScope reports whether the watcher is responsible for the
// ConfigMap k: a named one, or any of the watched namespaces (those not
// referenced are deleted from the stream by the reconcile).
func (w *Watcher) configMapScope(k key) bool {
	return w.configMaps[k.cacheKey()] || inWatched(w.cfg, k.Namespace)
}
