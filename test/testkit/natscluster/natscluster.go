// Package natscluster runs a 3-node NATS JetStream cluster of real
// nats-server processes, configured from the files of deploy/'s NATS
// ConfigMap with every address and path rewritten for this machine, so that
// tests can SIGKILL and restart a node as a crash would (test/deploy,
// test/faults).
package natscluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ingress-sync/ingress-sync/test/testkit/freeport"
	"github.com/ingress-sync/ingress-sync/test/testkit/proc"
)

// Module is the module whose nats-server Build builds: the version go.mod
// pins.
const Module = "github.com/nats-io/nats-server/v2"

// Size is the number of servers of the cluster (the StatefulSet's replicas).
const Size = 3

// PidFile is the pid_file of the deployed nats.conf, rewritten per node.
const PidFile = "/var/run/nats/nats.pid"

// DefaultStartTimeout bounds the wait for a server to accept clients.
const DefaultStartTimeout = 30 * time.Second

// stopGrace is how long a server gets between SIGTERM and SIGKILL in Stop.
const stopGrace = 10 * time.Second

var (
	// ErrConfig is returned when a string to rewrite is not in the
	// configuration: the configuration changed under the caller.
	ErrConfig = errors.New("natscluster: the NATS configuration no longer has")
	// ErrNoServer is returned for a server name not in the cluster.
	ErrNoServer = errors.New("natscluster: no server")
)

// Build builds the nats-server binary of Module into dir and returns its path.
func Build(ctx context.Context, dir string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("natscluster: go toolchain for building nats-server: %w", err)
	}
	bin := filepath.Join(dir, "nats-server")
	out, err := exec.CommandContext(ctx, goBin, "build", "-o", bin, Module).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("natscluster: go build %s: %w\n%s", Module, err, out)
	}
	return bin, nil
}

// Options configure a Cluster.
type Options struct {
	Bin   string            // the nats-server binary
	Dir   string            // node i lives in Dir/nats-<i>
	Files map[string]string // the ConfigMap's files (nats.conf, cluster.conf, ...)
	// Env is added to every server's environment (the passwords of the
	// Secret); SERVER_NAME is set per node.
	Env []string
	// Replace holds more old, new pairs rewritten in every file; each old
	// string must be present.
	Replace []string
	// StartTimeout bounds each wait for a healthy server (0: the default).
	StartTimeout time.Duration
}

// Node is one nats-server process run as the pod runs it: nats-server
// --config nats.conf, the ConfigMap's files beside it.
type Node struct {
	Name                string
	Client, HTTP, Route int    // ports on 127.0.0.1
	Conf, PidFile, Dir  string // nats.conf, the pid file, the node's folder
	Bin                 string // the nats-server binary
	Proc                *proc.Process
	env                 []string
	timeout             time.Duration
}

// Cluster is Size Nodes routed to each other on 127.0.0.1.
type Cluster struct {
	Nodes []*Node
}

// Start writes every node's configuration, starts the servers and waits
// until each is healthy (JetStream enabled, client port open). On error
// it stops what it started.
func Start(ctx context.Context, o Options) (c *Cluster, err error) {
	ports, err := freeport.Ports(3 * Size)
	if err != nil {
		return nil, err
	}
	c = &Cluster{}
	for i := range Size {
		n := &Node{Name: fmt.Sprintf("nats-%d", i), Bin: o.Bin, Dir: filepath.Join(o.Dir, fmt.Sprintf("nats-%d", i)),
			Client: ports[3*i], HTTP: ports[3*i+1], Route: ports[3*i+2], timeout: o.StartTimeout}
		if n.timeout == 0 {
			n.timeout = DefaultStartTimeout
		}
		n.env = append(append([]string{}, o.Env...), "SERVER_NAME="+n.Name)
		c.Nodes = append(c.Nodes, n)
	}
	defer func() {
		if err != nil {
			_ = c.Stop()
		}
	}()
	for _, n := range c.Nodes {
		if err := n.writeConfig(o, c); err != nil {
			return nil, err
		}
	}
	for _, n := range c.Nodes {
		if err := n.Start(); err != nil {
			return nil, err
		}
	}
	for _, n := range c.Nodes {
		if err := n.WaitHealthy(ctx); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// writeConfig rewrites every address and path of the files for this node;
// each rewritten string must be present, so that a change of the
// configuration is noticed.
func (n *Node) writeConfig(o Options, c *Cluster) error {
	if err := os.MkdirAll(n.Dir, 0o755); err != nil {
		return err
	}
	n.PidFile = filepath.Join(n.Dir, "nats.pid")
	replace := []string{
		"listen: 0.0.0.0:4222", "listen: 127.0.0.1:" + strconv.Itoa(n.Client),
		"http: 0.0.0.0:8222", "http: 127.0.0.1:" + strconv.Itoa(n.HTTP),
		"listen: 0.0.0.0:6222", "listen: 127.0.0.1:" + strconv.Itoa(n.Route),
		"store_dir: /data/jetstream", fmt.Sprintf("store_dir: %q", filepath.Join(n.Dir, "jetstream")),
		"pid_file: " + PidFile, fmt.Sprintf("pid_file: %q", n.PidFile),
	}
	for i, peer := range c.Nodes {
		replace = append(replace, fmt.Sprintf("nats-%d.nats-headless:6222", i), "127.0.0.1:"+strconv.Itoa(peer.Route))
	}
	replace = append(replace, o.Replace...)
	var all strings.Builder
	for _, v := range o.Files {
		all.WriteString(v + "\n")
	}
	for i := 0; i < len(replace); i += 2 {
		if !strings.Contains(all.String(), replace[i]) {
			return fmt.Errorf("%w %q", ErrConfig, replace[i])
		}
	}
	r := strings.NewReplacer(replace...)
	for name, content := range o.Files {
		if err := os.WriteFile(filepath.Join(n.Dir, name), []byte(r.Replace(content)), 0o600); err != nil {
			return err
		}
	}
	n.Conf = filepath.Join(n.Dir, "nats.conf")
	return nil
}

// Start runs the server (again); its output goes to nats.log in its folder.
func (n *Node) Start() error {
	p, err := proc.Start(n.Name, n.Bin, filepath.Join(n.Dir, "nats.log"), []string{"--config", n.Conf}, n.env)
	if err != nil {
		return err
	}
	n.Proc = p
	return nil
}

// URL is the node's client URL.
func (n *Node) URL() string { return "nats://127.0.0.1:" + strconv.Itoa(n.Client) }

// WaitHealthy polls the StatefulSet's readiness probe and the client port
// (the probe can answer before the client listener is up), bounded by the
// start timeout, failing early with the log when the server exits.
func (n *Node) WaitHealthy(ctx context.Context) error {
	url := fmt.Sprintf("http://127.0.0.1:%d/healthz?js-enabled-only=true", n.HTTP)
	ctx, cancel := context.WithTimeout(ctx, n.timeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		if probeOK(ctx, client, url) && dialOK(n.URL()[len("nats://"):]) {
			return nil
		}
		if done, err := n.Proc.Exited(); done {
			return fmt.Errorf("natscluster: %s exited (%v):\n%s", n.Name, err, n.Proc.LogTail(2048))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("natscluster: %s not healthy at %s: %w", n.Name, url, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func probeOK(ctx context.Context, client *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func dialOK(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// Node returns the server named name.
func (c *Cluster) Node(name string) (*Node, error) {
	for _, n := range c.Nodes {
		if n.Name == name {
			return n, nil
		}
	}
	return nil, fmt.Errorf("%w %q", ErrNoServer, name)
}

// URLs are the client URLs of every server, comma-separated, as the
// Service nats offers them.
func (c *Cluster) URLs() string {
	urls := make([]string, 0, len(c.Nodes))
	for _, n := range c.Nodes {
		urls = append(urls, n.URL())
	}
	return strings.Join(urls, ",")
}

// Kill sends SIGKILL to the server and waits for it to end: a crash, no
// leadership handed over.
func (c *Cluster) Kill(name string) error {
	n, err := c.Node(name)
	if err != nil {
		return err
	}
	if err := n.Proc.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("natscluster: kill %s: %w", name, err)
	}
	<-n.Proc.Done()
	return nil
}

// Restart starts a stopped server again, on its ports and storage, and
// waits until it is healthy.
func (c *Cluster) Restart(ctx context.Context, name string) error {
	n, err := c.Node(name)
	if err != nil {
		return err
	}
	if err := n.Start(); err != nil {
		return err
	}
	return n.WaitHealthy(ctx)
}

// Stop stops every running server: SIGTERM, then SIGKILL after a grace
// period (the error then wraps proc.ErrKilled).
func (c *Cluster) Stop() error {
	var errs []error
	for _, n := range c.Nodes {
		if n.Proc != nil {
			errs = append(errs, n.Proc.Stop(stopGrace))
		}
	}
	return errors.Join(errs...)
}
