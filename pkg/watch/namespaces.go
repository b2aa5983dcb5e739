package watch

import (
	"context"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// toleratesNamespacesDenied keeps a watcher whose RBAC predates the
// Namespaces (no list and watch on them) from waiting forever for their
// cache: once the API server refuses the list, it is logged, the source
// counts as synced with no Namespace in it, and the other inputs go on
// being published. Gateway listeners that select namespaces by label then
// attach no route.
func (w *Watcher) toleratesNamespacesDenied() error {
	src := w.informers.sources[events.KindNamespace]
	inf := src.informers[0]
	var denied atomic.Bool
	src.synced = func() bool { return denied.Load() || inf.HasSynced() }
	return inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		if apierrors.IsForbidden(err) {
			if !denied.Swap(true) {
				w.log.Error("not allowed to list and watch namespaces: grant list and watch on them (deploy/ has the rules); publishing none",
					"err", err)
			}
			return
		}
		cache.DefaultWatchErrorHandler(ctx, r, err)
	})
}
