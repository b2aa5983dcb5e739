package stream

import (
	"context"
	"time"
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

// sleep waits for d or until done is closed or ctx is done; it reports
// whether the whole wait elapsed.
func sleep(ctx context.Context, done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-done:
		return false
	}
}

// backoff is the wait before retry number attempt (1-based): base doubled
// each time, at most max, with up to 20% jitter taken off so that many
// waiters do not retry in lockstep.
func backoff(attempt int, base, max time.Duration, jitter func(int64) int64) time.Duration {
	d := base
	for i := 1; i < attempt && d < max; i++ {
		d *= 2
	}
	d = min(d, max)
	if j := int64(d) / 5; j > 0 && jitter != nil {
		d -= time.Duration(jitter(j))
	}
	return d
}
