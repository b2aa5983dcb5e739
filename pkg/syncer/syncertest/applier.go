// Package syncertest provides a recording syncer.Applier for tests that run
// a Syncer without nginx. The real Applier is pkg/nginx's, tested against a
// real nginx there and in test/e2e.
package syncertest

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"sync"
)

// Call is one Apply the Applier saw.
type Call struct {
	// Checksum is that of the Configuration asked for.
	Checksum string
	// Change is the Change Apply was given: the syncer's config.Diff from
	// the running Configuration (nil before the first, so the first is a
	// reload).
	Change config.Change
	// Err is the error Apply returned (see FailNext).
	Err error
}

// Applier records every Apply and keeps the last applied Configuration,
// without driving anything. Like the real one it decides nothing: it
// reports the reload its Change asks for. Its methods are safe for
// concurrent use.
type Applier struct {
	mu       sync.Mutex
	running  *config.Configuration
	calls    []Call
	failNext error
	seen     chan struct{}
}

// New returns an Applier that has applied nothing yet.
func New() *Applier { return &Applier{seen: make(chan struct{}, 1)} }

// Apply records next and ch, and makes next the applied Configuration
// unless FailNext set an error: then it returns that error and keeps the
// previous one. It reports ch.Reload as the reload.
func (a *Applier) Apply(_ context.Context, next *config.Configuration, ch config.Change) (bool, error) {
	a.mu.Lock()
	err := a.failNext
	a.failNext = nil
	if err == nil {
		a.running = next
	}
	a.calls = append(a.calls, Call{Checksum: next.Checksum, Change: ch, Err: err})
	a.mu.Unlock()
	select {
	case a.seen <- struct{}{}:
	default:
	}
	return ch.Reload, err
}

// FailNext makes the next Apply fail with err.
func (a *Applier) FailNext(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.failNext = err
}

// Calls returns a copy of the calls so far, oldest first.
func (a *Applier) Calls() []Call {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Call(nil), a.calls...)
}

// Running returns the last Configuration applied without error.
func (a *Applier) Running() *config.Configuration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.running
}

// Seen receives a value after Apply calls (coalesced): wait on it between
// looks at Calls instead of sleeping.
func (a *Applier) Seen() <-chan struct{} { return a.seen }
