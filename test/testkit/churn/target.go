package churn

import (
	"context"
	"sync"
)

// Target is where the churn writes: the Kubernetes API or the stream.
type Target interface {
	// Setup creates the namespaces (if the target has any) and writes the
	// setup changes, waiting until all are written.
	Setup(ctx context.Context, namespaces []string, changes []Change) error
	// Write makes one change and returns the resourceVersion under which
	// the change reaches the stream ("" when unknown, as for a delete
	// through the API). Writes of one object are never concurrent.
	Write(ctx context.Context, ch Change) (rv string, err error)
	// Workers is how many writes may run at once.
	Workers() int
	// Flush waits for the writes still in flight and returns how many
	// writes failed after Write returned, with the first such error.
	Flush(ctx context.Context) (failed int, err error)
}

// firstError keeps a count of failures and the first one.
type firstError struct {
	mu    sync.Mutex
	n     int
	first error
}

func (f *firstError) add(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	if f.first == nil {
		f.first = err
	}
}

func (f *firstError) get() (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n, f.first
}

// forEach runs fn on every change with at most workers at once, and
// returns the first error (the others still run).
func forEach(ctx context.Context, workers int, changes []Change, fn func(context.Context, Change) error) error {
	var errs firstError
	work := make(chan Change)
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Go(func() {
			for ch := range work {
				if err := fn(ctx, ch); err != nil {
					errs.add(err)
				}
			}
		})
	}
	for _, ch := range changes {
		work <- ch
	}
	close(work)
	wg.Wait()
	_, err := errs.get()
	return err
}
