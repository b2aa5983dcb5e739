// Package group runs the long-running parts of a command together: each is
// a Start(ctx) error; when one fails or ctx ends, all are stopped.
package group

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
)

// Part is a named long-running component.
type Part struct {
	Name  string
	Start func(ctx context.Context) error
}

// Run runs every part until ctx is done or one fails. A part that returns
// nil is done (a one-shot preparation step, say) and the others go on; a
// part that fails stops the others. Run waits for all parts and returns the
// first failure.
func Run(ctx context.Context, log *slog.Logger, parts ...Part) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for _, p := range parts {
		wg.Go(func() {
			err := p.Start(ctx)
			if err == nil || ctx.Err() != nil {
				return
			}
			log.Error("component failed, stopping the others", "component", p.Name, "err", err)
			mu.Lock()
			if first == nil {
				first = fmt.Errorf("%s: %w", p.Name, err)
			}
			mu.Unlock()
			cancel()
		})
	}
	wg.Wait()
	return first
}

// Names lists the part names, sorted, for logs.
func Names(parts ...Part) []string {
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}
