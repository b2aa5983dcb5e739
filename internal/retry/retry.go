// Package retry is the one exponential backoff of ingress-sync: the wait
// before each retry of the watcher's and the syncer's NATS calls, of nginx's
// restarts and start hooks, of the sync loop's failed applies and of the
// polls that confirm a reload.
//
// Backoff says how long to wait; Sleep waits, cut short by a context or a
// done channel; Until and Poll are the loop most callers want. A caller that
// waits in a select of its own (the sync loop) uses Backoff.Delay alone.
package retry

import (
	"context"
	"errors"
	"time"
)

// Backoff is an exponential backoff: Base before the first retry, doubled
// for each further one, at most Max.
type Backoff struct {
	Base, Max time.Duration
	// Jitter, when set, takes up to a fifth off each delay so that many
	// waiters do not retry in lockstep: Jitter(n) returns a number in
	// [0, n), as math/rand/v2's Int64N does. nil takes nothing off.
	Jitter func(n int64) int64
}

// Delay is the wait before retry number attempt (1-based; below 1 counts
// as 1).
func (b Backoff) Delay(attempt int) time.Duration {
	d := b.Base
	for i := 1; i < attempt && d > 0 && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	if j := int64(d) / 5; j > 0 && b.Jitter != nil {
		d -= time.Duration(b.Jitter(j))
	}
	return d
}

// Sleep waits for d, or until ctx is done or done is closed (nil: never);
// it reports whether the whole wait elapsed.
func Sleep(ctx context.Context, done <-chan struct{}, d time.Duration) bool {
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

// Until calls try until it returns nil. After failure number attempt it
// calls onRetry (when not nil) with attempt, the wait b.Delay(attempt) and
// the error, then waits. It returns nil once try succeeds, and ctx.Err()
// as soon as ctx is done: a try that fails after that is not retried nor
// reported to onRetry.
func Until(ctx context.Context, b Backoff, try func() error, onRetry func(attempt int, wait time.Duration, err error)) error {
	for attempt := 1; ; attempt++ {
		err := try()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		wait := b.Delay(attempt)
		if onRetry != nil {
			onRetry(attempt, wait, err)
		}
		if !Sleep(ctx, nil, wait) {
			return ctx.Err()
		}
	}
}

// errNotYet is the failure Poll hands Until while cond is false.
var errNotYet = errors.New("retry: condition not met yet")

// Poll calls cond, waiting b.Delay(n) after its n-th false, until it
// returns true (Poll then reports true) or ctx is done (false).
func Poll(ctx context.Context, b Backoff, cond func() bool) bool {
	return Until(ctx, b, func() error {
		if cond() {
			return nil
		}
		return errNotYet
	}, nil) == nil
}
