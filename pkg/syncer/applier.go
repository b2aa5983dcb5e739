package syncer

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
)

// Applier changes what nginx serves. pkg/nginx provides the real one, which
// owns the running Configuration: it diffs, pushes deltas or reloads, and
// restores its state after an nginx restart.
type Applier interface {
	// Apply makes nginx serve next and returns what changed (Change.Reload
	// when nginx.conf had to change). On failure the previous
	// configuration keeps serving, and the next Apply pushes everything.
	Apply(ctx context.Context, next *config.Configuration) (config.Change, error)
}
