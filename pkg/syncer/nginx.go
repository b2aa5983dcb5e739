package syncer

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/ingress-sync/ingress-sync/pkg/nginx"
)

// NginxMode says who runs nginx.
type NginxMode string

const (
	// NginxChild: the syncer runs nginx as its child, which stops with it.
	NginxChild NginxMode = "child"
	// NginxExternal: `syncer nginx` runs nginx (another container of the
	// pod, sharing its process namespace) and the syncer follows it
	// (nginx.Attached): nginx keeps serving through a syncer crash, and
	// the restarted syncer adopts it and sends only what differs.
	NginxExternal NginxMode = "external"
)

// ErrNginxMode is returned for a mode that is neither child nor external.
var ErrNginxMode = errors.New("nginx mode must be child or external")

// Set implements flag.Value.
func (m *NginxMode) Set(s string) error {
	switch NginxMode(s) {
	case NginxChild, NginxExternal:
		*m = NginxMode(s)
		return nil
	}
	return fmt.Errorf("%w: %q", ErrNginxMode, s)
}

func (m *NginxMode) String() string { return string(*m) }

// Nginx is the real Applier: pkg/nginx's Applier and a Runner together.
// nginx needs a configuration before it can start, so the first Apply
// writes nginx.conf and then starts nginx (or waits for the one `syncer
// nginx` starts from it, or adopts the one that already runs). After every
// new nginx master the Applier's Restore brings it to the running state.
type Nginx struct {
	applier *nginx.Applier
	proc    nginx.Runner
	start   chan struct{} // closed by the first Apply

	mu      sync.Mutex  // serialises Apply
	started atomic.Bool // the first Apply wrote nginx.conf
}

// NewNginx validates opts and prepares nginx's directory.
func NewNginx(opts nginx.Options, mode NginxMode) (*Nginx, error) {
	var proc nginx.Runner
	var err error
	switch mode {
	case NginxChild, "":
		proc, err = nginx.NewProcess(opts)
	case NginxExternal:
		proc, err = nginx.NewAttached(opts)
	default:
		err = fmt.Errorf("%w: %q", ErrNginxMode, mode)
	}
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
// when it dies, and drains it when ctx is done (in NginxExternal mode it
// follows the masters `syncer nginx` runs and leaves nginx running).
func (n *Nginx) Start(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case <-n.start:
	}
	return n.proc.Start(ctx)
}

// Apply implements Applier. The first one writes nginx.conf for next and
// starts nginx, whose start hook (Restore) pushes next whole, so it counts
// as a reload; later ones go to the nginx Applier with ch.
func (n *Nginx) Apply(ctx context.Context, next *config.Configuration, ch config.Change) (bool, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.started.Load() {
		return n.applier.Apply(ctx, next, ch)
	}
	if err := n.applier.WriteConfig(ctx, next); err != nil {
		return true, err
	}
	n.started.Store(true)
	close(n.start)
	select {
	case <-n.proc.Ready():
		return true, nil
	case <-ctx.Done():
		return true, fmt.Errorf("syncer: waiting for nginx to start: %w", ctx.Err())
	}
}

// Healthy reports whether nginx runs (after the first configuration):
// nginx.ErrNotRunning when it does not. It does not wait for an Apply under
// way.
func (n *Nginx) Healthy() error {
	if n.started.Load() && n.proc.Pid() == 0 {
		return nginx.ErrNotRunning
	}
	return nil
}

// Client is the Lua endpoint client, for `syncer backends` and tests.
func (n *Nginx) Client() *nginx.Client { return n.applier.Client() }

// CanListen tells whether nginx can listen on svc's port (a
// syncer.Options.ListenCheck; a Gateway listener's port comes as a TCP
// service): nil when the running nginx.conf already has that listener,
// otherwise whether this process, which runs nginx with its
// own identity in its own network, can bind the port on nginx's listen
// address. A port taken by another process, or below 1024 without the
// privilege, would fail the reload that adds it, and with it every later
// change.
func (n *Nginx) CanListen(svc config.L4Service) error {
	if running := n.applier.Running(); running != nil && (slices.ContainsFunc(running.L4, func(r config.L4Service) bool {
		return r.Protocol == svc.Protocol && r.Port == svc.Port
	}) || svc.Protocol == config.L4TCP && slices.ContainsFunc(running.Listeners, func(l config.Listener) bool { return l.Port == svc.Port })) {
		return nil
	}
	return bindable(svc.Protocol, net.JoinHostPort(n.applier.Renderer().Options().ListenAddress, strconv.Itoa(svc.Port)))
}

// bindable binds addr with proto and closes it at once.
func bindable(proto config.L4Protocol, addr string) error {
	if proto == config.L4UDP {
		c, err := net.ListenPacket("udp", addr)
		if err != nil {
			return err
		}
		return c.Close()
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return l.Close()
}
