// Package e2e tests the whole system on one machine: a real etcd and
// kube-apiserver, a real nats-server, the watcher binary and two syncer
// binaries with their own nginx, and Go echo backends, all inside a private
// network namespace made by the test (test/testkit/netns).
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/test/testkit/netns"
	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"
	"github.com/ingress-sync/ingress-sync/test/testkit/world"
)

// envBin passes the binaries built outside the namespace to the tests inside.
const envBin = "INGRESS_SYNC_E2E_BIN"

// The controller ConfigMap (global settings) of the World. Tests that write
// it put it back.
const (
	configMapNamespace = "default"
	configMapName      = "ingress-sync-e2e"
)

// gatewayPortRange are the syncers' ports the watcher gives the Gateways'
// listeners: below freeport's range, so no other listener of the World
// takes one.
// gatewayServiceNamespace is the World watcher's --election-namespace,
// where it keeps them.
const (
	gatewayPortRange        = "10000-10999"
	gatewayServiceNamespace = "default"
)

// w is the World shared by the tests; each test uses its own namespace.
var w *world.World

func TestMain(m *testing.M) {
	os.Exit(mainE2E(m))
}

func mainE2E(m *testing.M) int {
	if !netns.Inside() {
		return outside()
	}
	if err := netns.Setup(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "ingress-sync-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	if os.Getenv("INGRESS_SYNC_E2E_KEEP") == "" {
		defer os.RemoveAll(dir)
	} else {
		fmt.Fprintln(os.Stderr, "e2e: keeping", dir)
	}
	// nginx workers run unprivileged and must traverse to their directory.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w, err = world.Start(ctx, world.Options{
		BinDir: os.Getenv(envBin), Dir: dir, Syncers: 2,
		AdvertiseAddress: netns.AdvertiseAddress, StatusAddress: statusAddress,
		ConfigMap: configMapNamespace + "/" + configMapName,
		// SSL passthrough is on for every test: HTTPS then reaches nginx's
		// HTTPS server through the stream listener, with the client address.
		// The Gateway API CRDs are installed by the tests that use them:
		// the watcher notices within a second.
		// The watcher keeps a Service per Gateway (ClusterIP: the
		// control plane runs no load balancer) in its namespace, with
		// targetPorts of the syncers from gatewayPortRange.
		WatcherArgs: append(l4Args(), "--gateway-api-poll-interval", "1s",
			"--gateway-service-selector", "app.kubernetes.io/component=syncer", "--gateway-service-type", "ClusterIP",
			"--gateway-port-range", gatewayPortRange),
		SyncerArgs: append([]string{"--holdoff", "300ms", "--max-holdoff", "2s", "--enable-ssl-passthrough"}, l4Args()...),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: start world:", err)
		return 1
	}
	code := m.Run()
	if code != 0 {
		dumpLogs(dir)
	}
	if err := w.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: stop world:", err)
	}
	return code
}

// outside builds the binaries, then runs the tests again in a new network
// namespace. It never skips: without root or unshare, the suite fails.
func outside() int {
	bin, err := os.MkdirTemp("", "ingress-sync-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(bin)
	if err := testenv.BuildBinaries(bin); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	os.Setenv(envBin, bin)
	code, err := netns.Reexec()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	return code
}

func dumpLogs(dir string) {
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			continue
		}
		if len(b) > 6000 {
			b = b[len(b)-6000:]
		}
		fmt.Fprintf(os.Stderr, "\n===== %s (tail) =====\n%s\n", filepath.Base(l), b)
	}
}
