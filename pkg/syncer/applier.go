package syncer

import (
	"context"

	"github.com/ingress-sync/ingress-sync/pkg/model"
)

// Applier changes what nginx serves. pkg/nginx provides the real one.
type Applier interface {
	// Update applies the dynamic part of a change (backends, certificates)
	// through the Lua endpoints, without a reload.
	Update(ctx context.Context, ch model.Change) error
	// Reload makes nginx serve cfg as a whole: nginx.conf and the dynamic
	// state. It returns only once the new workers serve cfg.Checksum; on
	// failure the previous configuration keeps serving.
	Reload(ctx context.Context, cfg *model.Configuration) error
}

// apply brings nginx from running to next: by a reload when nothing is known
// to run (the first apply) or when nginx.conf must change, otherwise through
// the Lua endpoints.
func apply(ctx context.Context, a Applier, running, next *model.Configuration) (model.Change, error) {
	ch := model.Diff(running, next)
	if running == nil || ch.Reload {
		return ch, a.Reload(ctx, next)
	}
	return ch, a.Update(ctx, ch)
}
