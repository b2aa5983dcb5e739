package stream

import (
	"context"
	"time"

	"github.com/ingress-sync/ingress-sync/internal/retry"
)

// DefaultTimeout bounds a single JetStream API call (stream and consumer
// management, info requests) whose context has no deadline of its own.
const DefaultTimeout = 10 * time.Second

// bounded returns ctx unchanged (but cancelable) when it has a deadline, and
// ctx with timeout d otherwise, so that no network call waits forever.
func bounded(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// sleep is retry.Sleep.
func sleep(ctx context.Context, done <-chan struct{}, d time.Duration) bool {
	return retry.Sleep(ctx, done, d)
}

// backoff is the wait before retry number attempt (1-based): retry.Backoff's
// base doubled each time, at most max, with up to 20% jitter taken off so
// that many waiters do not retry in lockstep.
func backoff(attempt int, base, max time.Duration, jitter func(int64) int64) time.Duration {
	return retry.Backoff{Base: base, Max: max, Jitter: jitter}.Delay(attempt)
}
