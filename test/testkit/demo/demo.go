// Package demo is `make run`: the whole system on this machine, in a private
// network namespace, reachable from the user's shell through loopback ports
// that the demo opens in the host namespace before it enters its own. The
// user's network is never changed: the namespace dies with the demo.
package demo

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/ingress-sync/ingress-sync/test/testkit/netns"
	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"
	"github.com/ingress-sync/ingress-sync/test/testkit/world"
)

// Options are the demo's flags.
type Options struct {
	HTTP, HTTPS, NATS, API string // host loopback addresses to forward
	Metrics                string // host loopback address forwarded to the syncer's /metrics
	Gateway                string // host loopback address forwarded to the example Gateway's listener
	Dir                    string // state and logs
	BinDir                 string // watcher and syncer binaries
	Examples               string // manifests applied at start
}

func (o *Options) register(fs *flag.FlagSet, root string) {
	fs.StringVar(&o.HTTP, "http", "127.0.0.1:8080", "host address forwarded to nginx HTTP")
	fs.StringVar(&o.HTTPS, "https", "127.0.0.1:8443", "host address forwarded to nginx HTTPS")
	fs.StringVar(&o.NATS, "nats", "127.0.0.1:4222", "host address forwarded to nats-server")
	fs.StringVar(&o.API, "api", "127.0.0.1:6443", "host address forwarded to kube-apiserver")
	fs.StringVar(&o.Metrics, "metrics", "127.0.0.1:10254", "host address forwarded to the syncer's metrics endpoint")
	fs.StringVar(&o.Gateway, "gateway", "127.0.0.1:8081", "host address forwarded to the port nginx serves the example Gateway's HTTP listener on")
	fs.StringVar(&o.Dir, "dir", filepath.Join(root, ".cache", "demo"), "state and logs")
	fs.StringVar(&o.BinDir, "bin", filepath.Join(root, "bin"), "folder holding the watcher and syncer binaries")
	fs.StringVar(&o.Examples, "examples", filepath.Join(root, "deploy", "examples"), "manifests to apply")
}

// Main runs the demo and returns the process exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	wd, _ := os.Getwd()
	root, err := testenv.RepoRoot(wd)
	if err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		return 1
	}
	var o Options
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o.register(fs, root)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if netns.Inside() {
		return inside(o, stdout, stderr)
	}
	return outside(o, stderr)
}

// outside opens the host listeners and runs the demo again in a new
// network namespace, handing the listeners over as fds 3 to 8.
func outside(o Options, stderr io.Writer) int {
	var files []*os.File
	for _, addr := range []string{o.HTTP, o.HTTPS, o.NATS, o.API, o.Metrics, o.Gateway} {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			fmt.Fprintf(stderr, "demo: %v (is another demo running? change it with the flags)\n", err)
			return 1
		}
		f, err := l.(*net.TCPListener).File()
		if err != nil {
			fmt.Fprintln(stderr, "demo:", err)
			return 1
		}
		_ = l.Close()
		files = append(files, f)
	}
	code, err := netns.Reexec(files...)
	if err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		return 1
	}
	return code
}

func inside(o Options, stdout, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, log, stdout); err != nil {
		fmt.Fprintln(stderr, "demo:", err)
		return 1
	}
	return 0
}

func run(ctx context.Context, o Options, log *slog.Logger, stdout io.Writer) error {
	if err := netns.Setup(); err != nil {
		return err
	}
	listeners, err := inherited(6)
	if err != nil {
		return err
	}
	if err := prepareDir(o.Dir); err != nil {
		return err
	}
	began := time.Now()
	sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	// nginx listens inside on the same ports as the host side, so that
	// redirects and X-Forwarded-Port name the ports the user sees.
	httpPort, httpsPort, err := ports(o.HTTP, o.HTTPS)
	if err != nil {
		return err
	}
	gwPort, _, err := ports(o.Gateway, o.Gateway)
	if err != nil {
		return err
	}
	w, err := world.Start(sctx, world.Options{BinDir: o.BinDir, Dir: o.Dir, Syncers: 1,
		AdvertiseAddress: netns.AdvertiseAddress, StatusAddress: "127.0.0.1", HTTPPort: httpPort, HTTPSPort: httpsPort,
		WatcherArgs: gatewayArgs(gwPort)})
	if err != nil {
		return err
	}
	defer func() {
		fmt.Fprintln(stdout, "stopping…")
		if err := w.Stop(); err != nil {
			log.Error("stop", "err", err)
		}
	}()
	backends, err := startBackends(sctx, w, o.Examples)
	if err != nil {
		return err
	}
	defer backends.close()
	if err := waitGateway(sctx, w); err != nil {
		return err
	}
	s := w.Syncers[0]
	apiPort := w.CP.URL[len("https://127.0.0.1:"):]
	targets := []string{port(s.HTTPPort), port(s.HTTPSPort), w.NATSURL[len("nats://"):], "127.0.0.1:" + apiPort, port(s.MetricsPort), port(gwPort)}
	for i, l := range listeners {
		go forward(ctx, log, l, targets[i])
	}
	if err := writeHostKubeconfig(w, o); err != nil {
		return err
	}
	printHowTo(stdout, o, time.Since(began))
	<-ctx.Done()
	return nil
}

func port(p int) string { return "127.0.0.1:" + strconv.Itoa(p) }

// gatewayArgs make the watcher keep the Gateways' Services (ClusterIP:
// no load balancer here) and give the first Gateway listener the port
// the user's --gateway address has, the only one of its range.
func gatewayArgs(p int) []string {
	r := fmt.Sprintf("%d-%d", p, p)
	return []string{"--gateway-service-selector", "app.kubernetes.io/component=syncer", "--gateway-service-type", "ClusterIP",
		"--gateway-port-range", r, "--gateway-api-poll-interval", "1s"}
}

// ports returns the port numbers of host:port addresses.
func ports(addrs ...string) (int, int, error) {
	var out [2]int
	for i, a := range addrs[:2] {
		_, p, err := net.SplitHostPort(a)
		if err == nil {
			out[i], err = strconv.Atoi(p)
		}
		if err != nil {
			return 0, 0, fmt.Errorf("demo: address %q: %w", a, err)
		}
	}
	return out[0], out[1], nil
}

// inherited turns fds 3.. into listeners.
func inherited(n int) ([]net.Listener, error) {
	out := make([]net.Listener, 0, n)
	for i := range n {
		f := os.NewFile(uintptr(3+i), "listener-"+strconv.Itoa(i))
		if f == nil {
			return nil, errors.New("demo: missing inherited listener; run it through `make run`")
		}
		l, err := net.FileListener(f)
		_ = f.Close()
		if err != nil {
			return nil, fmt.Errorf("demo: inherited listener %d: %w", i, err)
		}
		out = append(out, l)
	}
	return out, nil
}

// prepareDir starts from an empty state folder that nginx workers (which
// run unprivileged) can traverse.
func prepareDir(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for d := dir; d != "/"; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			return err
		}
		if st.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("demo: nginx workers cannot traverse %s (mode %v); use --dir elsewhere", d, st.Mode().Perm())
		}
	}
	return nil
}
