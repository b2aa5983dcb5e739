// Package world runs the whole ingress-sync system on one machine: etcd and
// kube-apiserver, an embedded nats-server (or an external NATS such as a
// natscluster), the watcher binary (one, or a leader and standbys) and
// syncer binaries each with its own nginx on its own loopback ports.
// test/e2e, test/faults and `make run` use it. Backends that appear in EndpointSlices must not be
// loopback, so callers run it inside internal/netns.
package world

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/ingress-sync/ingress-sync/test/testkit/freeport"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"k8s.io/client-go/kubernetes"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/nginx"
	"github.com/ingress-sync/ingress-sync/pkg/stream/embedded"
	"github.com/ingress-sync/ingress-sync/test/testkit/proc"
	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"
)

// Options configure a World.
type Options struct {
	// BinDir holds the watcher and syncer binaries.
	BinDir string
	// Dir receives logs, NATS storage and the nginx directories.
	Dir string
	// Syncers is how many syncers (each with nginx) to start.
	Syncers int
	// AdvertiseAddress is the kube-apiserver's advertised address (inside a
	// netns: netns.AdvertiseAddress).
	AdvertiseAddress string
	// StatusAddress goes into Ingress status (--publish-status-address).
	StatusAddress string
	// HTTPPorts fixes the syncers' HTTP/HTTPS ports (demo); 0 picks free ones.
	HTTPPort, HTTPSPort int
	// ConfigMap is "namespace/name" of the controller ConfigMap (global
	// settings), given to the watcher and the syncers; "" means none.
	ConfigMap string
	// ExternalNginx runs every syncer's nginx in a Keeper process (see
	// SyncerOptions.ExternalNginx).
	ExternalNginx bool
	// WatcherArgs and SyncerArgs are appended to the default flags.
	WatcherArgs, SyncerArgs []string
	// Watchers is how many watchers to start (0: one), with the watcher
	// ids watcher-0, watcher-1, ...: one leads, the others stand by.
	Watchers int
	// NATSURL, when set, is an external NATS (comma-separated URLs, e.g. a
	// natscluster) that the World uses instead of starting the embedded
	// server; NATSOptions (credentials) go to the World's own connection.
	// Give the components their credentials in WatcherArgs and SyncerArgs.
	NATSURL     string
	NATSOptions []nats.Option
	// APIServerFlags are appended to kube-apiserver's command line.
	APIServerFlags []string
}

// Controller settings every part of the World agrees on (the defaults but
// for the ingress class, which is not ingress-nginx's).
const (
	ControllerClass = ingress.DefaultControllerClass
	IngressClass    = "ingress-sync"
	Stream          = events.DefaultStream
	Prefix          = events.DefaultSubjectPrefix
	// NginxWorkers is the worker_processes of every syncer's nginx.
	NginxWorkers = 2
)

// World is the running system.
type World struct {
	opts       Options
	CP         *testenv.ControlPlane
	Kube       kubernetes.Interface
	Kubeconfig string

	natsMu   sync.Mutex
	NATS     *server.Server
	NATSURL  string
	natsPort int

	// Watcher is Watchers[0].
	Watcher  *Component
	Watchers []*Component
	Syncers  []*Syncer
	status   *statusWatch
}

// Component is one of the World's binaries.
type Component struct {
	Name        string
	MetricsPort int
	bin         string
	args        []string
	log         string
	Proc        *proc.Process
}

// Syncer is a syncer binary with its nginx.
type Syncer struct {
	Component
	// Address is the loopback address its nginx listens on for HTTP,
	// HTTPS and the TCP and UDP services: each syncer of the World has its
	// own, as each pod has its own network, so that their listeners of a
	// TCP service's port do not collide.
	Address                         string
	HTTPPort, HTTPSPort, StatusPort int
	Dir                             string
	status                          *nginx.Client // its nginx's status server
	// Keeper is `syncer nginx`, which runs this syncer's nginx when the
	// syncer runs with --nginx-mode=external (SyncerOptions.ExternalNginx),
	// as the nginx container of a pod does; nil otherwise. Start and Stop
	// of the Syncer leave it alone, so that its nginx outlives the syncer.
	Keeper *Component
}

// Start brings the World up: control plane, NATS, watcher, syncers.
func Start(ctx context.Context, o Options) (w *World, err error) {
	if o.Syncers < 1 || o.BinDir == "" || o.Dir == "" {
		return nil, errors.New("world: need BinDir, Dir and at least one syncer")
	}
	w = &World{opts: o}
	// The returns below set w to nil: stop what was started through a
	// copy (a nil World's Stop would panic and hide err).
	started := w
	defer func() {
		if err != nil {
			_ = started.Stop()
		}
	}()
	if err := w.startControlPlane(ctx); err != nil {
		return nil, err
	}
	if err := w.startNATS(ctx); err != nil {
		return nil, err
	}
	if w.status, err = watchStatus(w.NATSURL, o.NATSOptions...); err != nil {
		return nil, err
	}
	// All ports at once: ports chosen by separate calls may coincide.
	nw := w.watcherCount()
	ports, err := freeport.Ports(nw + 4*o.Syncers)
	if err != nil {
		return nil, err
	}
	if err := w.startWatchers(ports[:nw]); err != nil {
		return nil, err
	}
	for i := range o.Syncers {
		s, err := w.newSyncer(i, ports[nw+4*i:nw+4+4*i])
		if err != nil {
			return nil, err
		}
		w.Syncers = append(w.Syncers, s)
		if err := s.StartKeeper(); err != nil {
			return nil, err
		}
		if err := s.Start(); err != nil {
			return nil, err
		}
	}
	for _, c := range append(append([]*Component{}, w.Watchers...), w.components()...) {
		if err := c.WaitHealthy(ctx); err != nil {
			return nil, err
		}
	}
	return w, nil
}

func (w *World) components() []*Component {
	out := make([]*Component, 0, len(w.Syncers))
	for _, s := range w.Syncers {
		out = append(out, &s.Component)
	}
	return out
}

// WaitHealthy waits until the component's /healthz answers 200, failing
// early with its log when it exits.
func (c *Component) WaitHealthy(ctx context.Context) error {
	return c.wait(ctx, "/healthz", 100*time.Millisecond)
}

// WaitReady waits until the component's /readyz answers 200, polling every
// 10ms (the churn scenarios time it), failing early when it exits.
func (c *Component) WaitReady(ctx context.Context) error {
	return c.wait(ctx, "/readyz", 10*time.Millisecond)
}

func (c *Component) wait(ctx context.Context, path string, every time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second}
	url := fmt.Sprintf("http://127.0.0.1:%d%s", c.MetricsPort, path)
	for {
		if done, err := c.Proc.Exited(); done {
			return fmt.Errorf("world: %s exited (%v):\n%s", c.Name, err, c.LogTail())
		}
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("world: %s: no 200 from %s: %w\n%s", c.Name, path, ctx.Err(), c.LogTail())
		case <-time.After(every):
		}
	}
}

func (w *World) startControlPlane(ctx context.Context) error {
	cp, err := testenv.Run(ctx, testenv.Options{
		Dir: filepath.Join(w.opts.Dir, "controlplane"), AdvertiseAddress: w.opts.AdvertiseAddress,
		APIServerFlags: w.opts.APIServerFlags})
	if err != nil {
		return fmt.Errorf("world: control plane: %w", err)
	}
	w.CP = cp
	w.Kubeconfig = filepath.Join(w.opts.Dir, "kubeconfig")
	if err := cp.WriteKubeconfig(w.Kubeconfig); err != nil {
		return err
	}
	w.Kube, err = kubernetes.NewForConfig(cp.Config())
	return err
}

// StartNATS starts (or restarts, on the same port and storage) the
// embedded nats-server.
func (w *World) StartNATS(ctx context.Context) error {
	w.natsMu.Lock()
	defer w.natsMu.Unlock()
	port := w.natsPort
	if port == 0 {
		port = -1
	}
	s, err := embedded.Start(ctx, embedded.Options{StoreDir: filepath.Join(w.opts.Dir, "nats"), Port: port})
	if err != nil {
		return fmt.Errorf("world: nats: %w", err)
	}
	w.NATS, w.NATSURL = s, s.ClientURL()
	w.natsPort = s.Addr().(*net.TCPAddr).Port
	return nil
}

// StopNATS shuts the nats-server down.
func (w *World) StopNATS() {
	w.natsMu.Lock()
	defer w.natsMu.Unlock()
	if w.NATS != nil {
		w.NATS.Shutdown()
		w.NATS.WaitForShutdown()
		w.NATS = nil
	}
}

func (w *World) newWatcher(i, port int) *Component {
	args := []string{
		"--kubeconfig", w.Kubeconfig, "--nats-url", w.NATSURL, "--stream", Stream, "--subject-prefix", Prefix,
		"--controller-class", ControllerClass, "--ingress-class", IngressClass,
		"--election-namespace", "default", "--watcher-id", fmt.Sprintf("watcher-%d", i),
		"--metrics-addr", "127.0.0.1:" + strconv.Itoa(port),
	}
	if w.opts.StatusAddress != "" {
		args = append(args, "--publish-status-address", w.opts.StatusAddress)
	}
	args = append(args, w.configMapArgs()...)
	name := "watcher"
	if i > 0 {
		name = fmt.Sprintf("watcher-%d", i)
	}
	return &Component{Name: name, MetricsPort: port, bin: filepath.Join(w.opts.BinDir, "watcher"), args: append(args, w.opts.WatcherArgs...),
		log: filepath.Join(w.opts.Dir, name+".log")}
}

func (w *World) newSyncer(i int, ports []int) (*Syncer, error) {
	o := SyncerOptions{Bin: filepath.Join(w.opts.BinDir, "syncer"), Dir: w.opts.Dir, Name: fmt.Sprintf("syncer-%d", i),
		NATSURL: w.NATSURL, Ports: ports, Args: append(w.configMapArgs(), w.opts.SyncerArgs...),
		Address: fmt.Sprintf("127.0.0.%d", i+1), ExternalNginx: w.opts.ExternalNginx}
	if w.opts.HTTPPort != 0 && i == 0 {
		o.Ports = []int{w.opts.HTTPPort, w.opts.HTTPSPort, ports[2], ports[3]}
	}
	return NewSyncer(o)
}

// configMapArgs is the --configmap flag the watcher and syncers share.
func (w *World) configMapArgs() []string {
	if w.opts.ConfigMap == "" {
		return nil
	}
	return []string{"--configmap", w.opts.ConfigMap}
}

// SyncerOptions describe one syncer binary with its nginx.
type SyncerOptions struct {
	Bin     string // the syncer binary
	Dir     string // its nginx directory is Dir/<Name>-nginx, its log Dir/<Name>.log
	Name    string // pod name
	NATSURL string
	// Ports: HTTP, HTTPS, status and metrics, on 127.0.0.1; nil picks free ones.
	Ports []int
	Args  []string // appended to the defaults
	// Address is the loopback address nginx listens on ("": 127.0.0.1).
	Address string
	// ExternalNginx runs nginx in a Keeper process (`syncer nginx`) and
	// the syncer with --nginx-mode=external, as deploy/ runs them.
	ExternalNginx bool
}

// NewSyncer prepares (does not start) a syncer: the World's, or a lone one
// on a stream without a control plane (the churn scenarios).
func NewSyncer(o SyncerOptions) (*Syncer, error) {
	if o.Ports == nil {
		var err error
		if o.Ports, err = freeport.Ports(4); err != nil {
			return nil, err
		}
	}
	s := &Syncer{Address: cmp.Or(o.Address, "127.0.0.1"), HTTPPort: o.Ports[0], HTTPSPort: o.Ports[1], StatusPort: o.Ports[2],
		Dir: filepath.Join(o.Dir, o.Name+"-nginx"), status: nginx.NewClient(o.Ports[2], 5*time.Second)}
	s.Name, s.MetricsPort, s.bin = o.Name, o.Ports[3], o.Bin
	s.log = filepath.Join(o.Dir, s.Name+".log")
	s.args = append([]string{"run",
		"--nats-url", o.NATSURL, "--stream", Stream, "--subject-prefix", Prefix, "--pod-name", s.Name,
		"--controller-class", ControllerClass, "--ingress-class", IngressClass,
		"--listen-address", s.Address, "--http-port", strconv.Itoa(s.HTTPPort),
		"--https-port", strconv.Itoa(s.HTTPSPort), "--status-port", strconv.Itoa(s.StatusPort),
		"--metrics-addr", "127.0.0.1:" + strconv.Itoa(s.MetricsPort), "--nginx-dir", s.Dir,
		"--worker-processes", strconv.Itoa(NginxWorkers), "--worker-shutdown-timeout", "5s",
	}, o.Args...)
	if o.ExternalNginx {
		s.args = append(s.args, "--nginx-mode", "external")
		s.Keeper = &Component{Name: s.Name + "-nginx", bin: o.Bin, log: filepath.Join(o.Dir, s.Name+"-nginx.log"),
			args: []string{"nginx", "--nginx-dir", s.Dir, "--status-port", strconv.Itoa(s.StatusPort), "--worker-shutdown-timeout", "5s"}}
	}
	return s, os.MkdirAll(s.Dir, 0o755)
}

// StartKeeper starts the Keeper, if there is one.
func (s *Syncer) StartKeeper() error {
	if s.Keeper == nil {
		return nil
	}
	return s.Keeper.Start()
}

// StopAll stops the syncer, then its Keeper (which drains nginx).
func (s *Syncer) StopAll() error {
	err := s.Stop()
	if s.Keeper != nil {
		err = errors.Join(err, s.Keeper.Stop())
	}
	return err
}

// MetricsURL is the component's /metrics.
func (c *Component) MetricsURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/metrics", c.MetricsPort)
}

// Start starts the component's binary (again).
func (c *Component) Start() error {
	if c.Proc != nil {
		if done, _ := c.Proc.Exited(); !done {
			return fmt.Errorf("world: %s is running", c.Name)
		}
	}
	p, err := proc.Start(c.Name, c.bin, c.log, c.args, nil)
	if err != nil {
		return err
	}
	c.Proc = p
	return nil
}

// Stop stops the component gracefully (SIGTERM, then SIGKILL after 20s).
func (c *Component) Stop() error {
	if c == nil || c.Proc == nil {
		return nil
	}
	return c.Proc.Stop(20 * time.Second)
}

// LogTail is the end of the component's log, for failure messages.
func (c *Component) LogTail() string {
	if c.Proc == nil {
		return ""
	}
	return c.Proc.LogTail(4000)
}

// Stop stops everything the World started, in reverse order.
func (w *World) Stop() error {
	var errs []error
	for _, s := range w.Syncers {
		errs = append(errs, s.StopAll())
	}
	for _, c := range w.Watchers {
		errs = append(errs, c.Stop())
	}
	if w.status != nil {
		w.status.close()
	}
	w.StopNATS()
	if w.CP != nil {
		errs = append(errs, w.CP.Stop())
	}
	return errors.Join(errs...)
}

// statusWatch keeps the latest status report of every syncer.
type statusWatch struct {
	nc   *nats.Conn
	mu   sync.Mutex
	last map[string]events.SyncerStatus
}

func watchStatus(url string, opts ...nats.Option) (*statusWatch, error) {
	opts = append([]nats.Option{nats.MaxReconnects(-1), nats.ReconnectWait(200 * time.Millisecond), nats.Timeout(5 * time.Second)}, opts...)
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, fmt.Errorf("world: status connection: %w", err)
	}
	sw := &statusWatch{nc: nc, last: map[string]events.SyncerStatus{}}
	_, err = nc.Subscribe(events.StatusFilter(Prefix), func(m *nats.Msg) {
		st, err := events.DecodeStatus(m.Data)
		if err != nil {
			return
		}
		sw.mu.Lock()
		sw.last[st.Pod] = st
		sw.mu.Unlock()
	})
	if err != nil {
		nc.Close()
		return nil, err
	}
	return sw, nil
}

func (sw *statusWatch) close() { sw.nc.Close() }

// Status returns the latest status report of the named syncer.
func (w *World) Status(name string) (events.SyncerStatus, bool) {
	w.status.mu.Lock()
	defer w.status.mu.Unlock()
	st, ok := w.status.last[name]
	return st, ok
}
