package nginx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ingress-sync/ingress-sync/internal/retry"
)

// hooks runs the start hooks after each start of an nginx master and
// closes ready after the first start whose hooks all succeeded: what
// Process (nginx as a child) and Attached (nginx run by another process)
// share.
type hooks struct {
	log     *slog.Logger
	client  *Client
	timeout time.Duration // StartTimeout: the wait for the status server

	mu      sync.Mutex
	list    []StartHook
	ready   chan struct{}
	readyOK bool
	started bool
}

func newHooks(o Options, component string) hooks {
	return hooks{
		log:     o.Logger.With("component", component),
		client:  NewClient(o.StatusPort, o.RequestTimeout),
		timeout: o.StartTimeout,
		ready:   make(chan struct{}),
	}
}

// OnStart registers a hook run after every (re)start; register before Start.
func (h *hooks) OnStart(hook StartHook) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.list = append(h.list, hook)
}

// begin fails when Start was called before: a Runner starts only once.
func (h *hooks) begin() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.started {
		return errors.New("nginx: already started")
	}
	h.started = true
	return nil
}

// Ready is closed after the first start whose hooks all succeeded.
func (h *hooks) Ready() <-chan struct{} { return h.ready }

// afterStart waits for the status server of the master pid, then runs the
// hooks until they all succeed or ctx ends (that nginx exited or Start's
// context ended). It reports whether they all succeeded.
func (h *hooks) afterStart(ctx context.Context, pid int) bool {
	if err := waitHealthy(ctx, h.client, h.timeout); err != nil {
		if ctx.Err() == nil {
			h.log.Error("nginx did not become healthy", "pid", pid, "err", err)
		}
		return false
	}
	h.mu.Lock()
	list := append([]StartHook(nil), h.list...)
	h.mu.Unlock()
	for _, hook := range list {
		if err := h.retry(ctx, func() error { return hook(ctx) }); err != nil {
			return false
		}
	}
	h.mu.Lock()
	if !h.readyOK {
		h.readyOK = true
		close(h.ready)
	}
	h.mu.Unlock()
	h.log.Info("nginx ready", "pid", pid)
	return true
}

// retry runs fn until it succeeds or ctx ends, with backoff.
func (h *hooks) retry(ctx context.Context, fn func() error) error {
	return retry.Until(ctx, restartBackoff, fn, func(_ int, backoff time.Duration, err error) {
		h.log.Error("nginx start hook failed; retrying", "err", err, "backoff", backoff)
	})
}

// healthPoll paces waitHealthy: every 10 ms.
var healthPoll = retry.Backoff{Base: 10 * time.Millisecond, Max: 10 * time.Millisecond}

// waitHealthy polls /healthz until it answers or timeout passes.
func waitHealthy(ctx context.Context, c *Client, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	if err := retry.Until(ctx, healthPoll, func() error { last = c.Healthz(ctx); return last }, nil); err != nil {
		return fmt.Errorf("status server: %w (last error: %w)", err, last)
	}
	return nil
}
