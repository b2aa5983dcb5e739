package harness

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os/exec"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ingress-sync/ingress-sync/test/testkit/netns"
)

// The address ranges of the harness, all routed to lo inside the network
// namespace only. PodRange leaves out netns.TestRange (198.18.0.0/24: the
// apiserver's advertised address and the tests' own backends); ServiceRange
// is testenv's --service-cluster-ip-range.
var (
	PodRange          = netip.MustParsePrefix("198.18.0.0/16")
	LoadBalancerRange = netip.MustParsePrefix("198.19.0.0/24")
	ServiceRange      = netip.MustParsePrefix("10.96.0.0/16")
)

// EnvEnable turns on the tests that need root, a network namespace and a
// control plane (this package's and test/conformance's): `make
// conformance` sets it. Without it only the unit tests run; the others say
// why they skip.
const EnvEnable = "INGRESS_SYNC_CONFORMANCE"

// DefaultInterval is how often the reconcile loop looks at the cluster.
const DefaultInterval = 200 * time.Millisecond

// IPAnnotation on a Pod asks the kubelet for that IP (in the namespace:
// where a process of the test, e.g. nginx, listens) instead of a fresh one
// of PodRange.
const IPAnnotation = "harness.ingress-sync.io/pod-ip"

// ErrOutside: the harness changes routes and iptables rules, which it does
// only inside the network namespace that netns.Reexec made.
var ErrOutside = errors.New("harness: routes and iptables only inside the test's network namespace")

// Cluster is the harness of one control plane.
type Cluster struct {
	kube     kubernetes.Interface
	dyn      dynamic.Interface
	log      *slog.Logger
	interval time.Duration

	pods   *allocator // Pod IPs
	lbs    *allocator // LoadBalancer addresses
	echoes map[string]*echoPod
	book   *logBook // the echo Pods' logs, when a Kubelet serves them
	rules  string   // the last iptables rules applied

	mu     sync.Mutex
	rounds int
}

// New returns the harness of the API server cfg talks to. Start it with
// Run, after Setup.
func New(cfg *rest.Config, log *slog.Logger) (*Cluster, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	quiet := rest.CopyConfig(cfg) // the namespace controller lists deprecated kinds too
	quiet.WarningHandler = rest.NoWarnings{}
	dyn, err := dynamic.NewForConfig(quiet)
	if err != nil {
		return nil, err
	}
	return &Cluster{kube: kube, dyn: dyn, log: log, interval: DefaultInterval,
		pods:   newAllocator(PodRange, 256), // past netns.TestRange
		lbs:    newAllocator(LoadBalancerRange, 1),
		echoes: map[string]*echoPod{}}, nil
}

// ServeLogs makes the echo Pods log to k, which serves their logs.
// Call it before Run.
func (c *Cluster) ServeLogs(k *Kubelet) { c.book = k.book }

// Setup routes the harness's ranges to lo and hooks its nat chain into
// OUTPUT; once, inside the network namespace.
func Setup() error {
	if !netns.Inside() {
		return ErrOutside
	}
	for _, p := range []netip.Prefix{PodRange, LoadBalancerRange, ServiceRange} {
		if err := run("ip", "route", "replace", "local", p.String(), "dev", "lo"); err != nil {
			return err
		}
	}
	if err := run("iptables", "-t", "nat", "-N", chain); err != nil {
		return err
	}
	return run("iptables", "-t", "nat", "-A", "OUTPUT", "-j", chain)
}

// Run reconciles until ctx ends, then stops the echo servers.
func (c *Cluster) Run(ctx context.Context) {
	defer c.stopEchoes()
	if err := c.ensureNode(ctx); err != nil {
		c.log.Warn("harness node not registered", "node", nodeName, "err", err)
	}
	t := time.NewTicker(c.interval)
	defer t.Stop()
	for {
		c.round(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Rounds is how many reconcile rounds have finished.
func (c *Cluster) Rounds() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rounds
}

// round is one pass of every controller, in the order a change flows.
func (c *Cluster) round(ctx context.Context) {
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"deployments", c.syncDeployments},
		{"pods", c.syncPods},
		{"loadbalancers", c.syncLoadBalancers},
		{"endpointslices", c.syncEndpointSlices},
		{"proxy", c.syncProxy},
		{"namespaces", c.syncNamespaces},
	}
	for _, s := range steps {
		if ctx.Err() != nil {
			return
		}
		if err := s.fn(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("harness step failed", "step", s.name, "err", err)
		}
	}
	c.mu.Lock()
	c.rounds++
	c.mu.Unlock()
}

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("harness: %s %s: %w: %s", name, strings.Join(args, " "), err, out)
	}
	return nil
}
