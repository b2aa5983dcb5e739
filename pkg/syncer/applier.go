package syncer

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
)

// Applier changes what the data plane serves. It decides nothing about
// what changed: the loop has done that once (decide), and Apply acts on the
// Change it is given. Nginx is the real one; syncertest.Applier records
// the calls for tests.
type Applier interface {
	// Apply brings the data plane from the running Configuration (the last
	// one applied without error, nil before the first) to next, where ch
	// is config.Diff(running, next). It reports whether nginx reloaded to
	// do so (on failure: whether the apply took the reload path). On
	// failure the previous configuration keeps serving, and the next Apply
	// brings the data plane to its Configuration whatever it holds.
	Apply(ctx context.Context, next *config.Configuration, ch config.Change) (reloaded bool, err error)
}

// decide is the one place that says what changed from running to next:
// nothing when they are equal (the same checksum: the build is skipped,
// changed is false), else config.Diff(running, next), which the Applier
// acts on. pkg/replay answers "what changed, would it reload" with the
// same config.Diff.
func decide(running, next *config.Configuration) (ch config.Change, changed bool) {
	if running != nil && running.Equal(next) {
		return config.Change{}, false
	}
	return config.Diff(running, next), true
}
