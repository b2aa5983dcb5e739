package watch

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// addHandlers connects every informer to the watcher. Handlers only queue
// keys, and only while this replica leads.
func (w *Watcher) addHandlers() error {
	for kind, src := range w.informers.sources {
		for _, inf := range src.informers {
			if _, err := inf.AddEventHandler(w.handler(kind)); err != nil {
				return err
			}
		}
	}
	if ps := w.informers.publishService; ps != nil {
		all := func() {
			if t := w.current.Load(); t != nil && t.status != nil {
				t.status.enqueueAll()
			}
		}
		_, err := ps.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { all() },
			UpdateFunc: func(any, any) { all() },
			DeleteFunc: func(any) { all() },
		})
		return err
	}
	return nil
}

func (w *Watcher) handler(kind events.Kind) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { w.changed(kind, obj, false) },
		UpdateFunc: func(old, cur any) {
			if sameVersion(old, cur) {
				return
			}
			if kind == events.KindIngress || kind == events.KindGateway {
				w.secretRefs(old) // a Secret it no longer names may be unreferenced now
			}
			if kind == events.KindIngress || kind == events.KindConfigMap || kind == events.KindBackendTLSPolicy {
				w.configMapRefs(old) // so may a ConfigMap
			}
			if kind == events.KindHTTPRoute || kind == events.KindGRPCRoute || streamRouteKinds[kind] {
				w.gatewayStatusOf(kind, old) // a Gateway it no longer names counts it no more
			}
			w.changed(kind, cur, false)
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				w.deletedUnknown(kind, d)
				return
			}
			w.changed(kind, obj, true)
		},
	}
}

// changed queues the key of item for publishing (and for status).
func (w *Watcher) changed(kind events.Kind, item any, deleted bool) {
	obj, ok := item.(runtime.Object)
	if !ok || !published(obj) {
		return
	}
	k, err := keyOf(kind, obj)
	if err != nil {
		return
	}
	t := w.current.Load()
	if t == nil {
		return
	}
	var tomb runtime.Object
	if deleted {
		tomb = obj
	}
	t.notify(k, tomb)
	if kind == events.KindIngress || kind == events.KindGateway {
		t.secretsOf(obj)
	}
	t.gatewayRefsChanged(obj)
	t.configMapsOf(obj)
	if t.gateways != nil {
		t.gateways.changed(kind, obj)
	}
	if t.status == nil {
		return
	}
	switch kind {
	case events.KindIngress:
		t.status.enqueue(k.cacheKey())
	case events.KindIngressClass:
		t.status.enqueueAll()
	}
}

// secretRefs queues the Secrets an Ingress or a Gateway named (see
// term.secretsOf).
func (w *Watcher) secretRefs(item any) {
	if t := w.current.Load(); t != nil {
		t.secretsOf(item)
	}
}

// configMapRefs queues the ConfigMaps an Ingress or a named ConfigMap
// referenced (see term.configMapsOf).
func (w *Watcher) configMapRefs(item any) {
	if t := w.current.Load(); t != nil {
		t.configMapsOf(item)
	}
}

// deletedUnknown handles a delete the informer missed the watch event of.
func (w *Watcher) deletedUnknown(kind events.Kind, d cache.DeletedFinalStateUnknown) {
	if obj, ok := d.Obj.(runtime.Object); ok && obj != nil {
		w.changed(kind, obj, true)
		return
	}
	ns, name, err := cache.SplitMetaNamespaceKey(d.Key)
	if t := w.current.Load(); err == nil && t != nil {
		t.notify(key{Kind: kind, Namespace: ns, Name: name}, nil)
	}
}

// sameVersion reports whether an update is an informer resync of the same
// resourceVersion.
func sameVersion(old, cur any) bool {
	o, err1 := meta.Accessor(old)
	c, err2 := meta.Accessor(cur)
	return err1 == nil && err2 == nil && o.GetResourceVersion() == c.GetResourceVersion()
}
