package syncer

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ingress-sync/ingress-sync/pkg/model"
	"github.com/ingress-sync/ingress-sync/pkg/nginx"
)

// Nginx is the real Applier: pkg/nginx's Applier and Process together. nginx
// needs a configuration before it can start, so the first Reload writes
// nginx.conf and starts nginx; later ones reload it. After every (re)start
// the whole dynamic state is pushed again (the Process OnStart hook).
type Nginx struct {
	applier *nginx.Applier
	proc    *nginx.Process
	start   chan struct{} // closed by the first Reload

	mu      sync.Mutex
	started bool
}

// ErrNginxNotStarted is returned by Update before the first Reload.
var ErrNginxNotStarted = errors.New("syncer: nginx not started yet")

// NewNginx validates opts and prepares nginx's directory.
func NewNginx(opts nginx.Options) (*Nginx, error) {
	proc, err := nginx.NewProcess(opts)
	if err != nil {
		return nil, err
	}
	a, err := nginx.NewApplier(opts, proc)
	if err != nil {
		return nil, err
	}
	proc.OnStart(a.Restore)
	return &Nginx{applier: a, proc: proc, start: make(chan struct{})}, nil
}

// Start runs nginx once the first configuration is written, restarts it
// when it dies, and drains it when ctx is done.
func (n *Nginx) Start(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case <-n.start:
	}
	return n.proc.Start(ctx)
}

// Reload implements Applier.
func (n *Nginx) Reload(ctx context.Context, cfg *model.Configuration) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.started {
		return n.applier.Reload(ctx, cfg)
	}
	if err := n.applier.WriteConfig(ctx, cfg); err != nil {
		return err
	}
	n.started = true
	close(n.start)
	select {
	case <-n.proc.Ready():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("syncer: waiting for nginx to start: %w", ctx.Err())
	}
}

// Update implements Applier.
func (n *Nginx) Update(ctx context.Context, ch model.Change) error {
	n.mu.Lock()
	started := n.started
	n.mu.Unlock()
	if !started {
		return ErrNginxNotStarted
	}
	return n.applier.Update(ctx, ch)
}

// Healthy reports whether nginx runs (after the first configuration).
func (n *Nginx) Healthy() error {
	n.mu.Lock()
	started := n.started
	n.mu.Unlock()
	if started && n.proc.Pid() == 0 {
		return errors.New("nginx is not running")
	}
	return nil
}

// Client is the Lua endpoint client, for `syncer backends` and tests.
func (n *Nginx) Client() *nginx.Client { return n.applier.Client() }
