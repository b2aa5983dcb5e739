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
	// Change is what Apply returned: config.Diff from the last applied
	// Configuration (nil before the first, so the first is a reload).
	Change config.Change
	// Err is the error Apply returned (see FailNext).
	Err error
}

// Applier records every Apply and keeps the last applied Configuration, as
// pkg/nginx's Applier does, without driving anything. Its methods are safe
// for concurrent use.
type Applier struct {
	mu       sync.Mutex
	running  *config.Configuration
	calls    []Call
	failNext error
	seen     chan struct{}
}

// New returns an Applier that has applied nothing yet.
func New() *Applier { return &Applier{seen: make(chan struct{}, 1)} }

// Apply returns config.Diff from the last applied Configuration to next and
// makes next the applied one, unless FailNext set an error: then it returns
// that error and keeps the previous one.
func (a *Applier) Apply(_ context.Context, next *config.Configuration) (config.Change, error) {
	a.mu.Lock()
	ch := config.Diff(a.running, next)
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
	return ch, err
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
