package faults

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/pkg/stream"
	"github.com/ingress-sync/ingress-sync/test/deploy"
	"github.com/ingress-sync/ingress-sync/test/testkit/churn"
	"github.com/ingress-sync/ingress-sync/test/testkit/natscluster"
	"github.com/ingress-sync/ingress-sync/test/testkit/natstest"
	"github.com/ingress-sync/ingress-sync/test/testkit/netns"
	"github.com/ingress-sync/ingress-sync/test/testkit/world"
)

// externalNginx says that the syncers run nginx as a separate process
// (the keeper) that outlives a SIGKILLed syncer: the syncer SIGKILL fault
// then asserts zero failed probes through its nginx.
const externalNginx = true

// The syncers' batching: under churn a syncer applies at least every
// maxHoldoff, the floor of most convergence times.
const (
	holdoff    = "300ms"
	maxHoldoff = "2s"
)

// setupTimeout bounds the start of the whole system.
const setupTimeout = 5 * time.Minute

// adminUser is a user of the suite's own, added to the deployed NATS
// configuration: the faults delete the stream and publish garbage, which
// neither the watcher's nor the syncer's user may.
const adminUser = "faults-admin"

// passwords of the NATS users.
type passwords struct{ watcher, syncer, admin string }

func newPasswords() passwords {
	return passwords{watcher: randomHex(), syncer: randomHex(), admin: randomHex()}
}

func randomHex() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// workDir is the run's folder, traversable by nginx's unprivileged workers.
func workDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "ingress-sync-faults-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if os.Getenv(envKeep) != "" || t.Failed() {
			t.Logf("keeping %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	return dir
}

// natsFiles are the files of deploy/base's NATS ConfigMap.
func natsFiles(t *testing.T) map[string]string {
	objs, err := deploy.Render(filepath.Join("..", "..", "deploy", "base"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() != "ConfigMap" || o.GetName() != "nats-config" {
			continue
		}
		var cm corev1.ConfigMap
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &cm); err != nil {
			t.Fatal(err)
		}
		return cm.Data
	}
	t.Fatal("deploy/base has no ConfigMap nats-config")
	return nil
}

// startNATS runs the 3-node cluster of deploy/base, with the suite's admin
// user added to the account INGRESS.
func (s *suite) startNATS(ctx context.Context) {
	c, err := natscluster.Start(ctx, natscluster.Options{
		Bin: filepath.Join(s.bin, "nats-server"), Dir: s.dir, Files: natsFiles(s.t),
		Env:     []string{"WATCHER_PASSWORD=" + s.pw.watcher, "SYNCER_PASSWORD=" + s.pw.syncer, "ADMIN_PASSWORD=" + s.pw.admin},
		Replace: []string{"users: [", "users: [\n          { user: " + adminUser + ", password: $ADMIN_PASSWORD }"},
	})
	if err != nil {
		s.t.Fatal(err)
	}
	s.nats = c
	s.t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			s.t.Errorf("stop NATS: %v", err)
		}
	})
}

// startWorld starts the control plane, two watchers and two syncers on
// the NATS cluster.
func (s *suite) startWorld(ctx context.Context) {
	w, err := world.Start(ctx, world.Options{
		BinDir: s.bin, Dir: s.dir, Syncers: 2, Watchers: 2,
		AdvertiseAddress: netns.AdvertiseAddress, StatusAddress: netns.AdvertiseAddress,
		NATSURL: s.nats.URLs(), NATSOptions: []nats.Option{nats.UserInfo(adminUser, s.pw.admin)},
		WatcherArgs:   []string{"--nats-user", "watcher", "--nats-password", s.pw.watcher, "--stream-replicas", "3"},
		SyncerArgs:    append(s.syncerNATSArgs(), "--holdoff", holdoff, "--max-holdoff", maxHoldoff),
		ExternalNginx: externalNginx,
	})
	if err != nil {
		s.t.Fatal(err)
	}
	s.w = w
	s.t.Cleanup(func() {
		if err := w.Stop(); err != nil {
			s.t.Errorf("stop the world: %v", err)
		}
	})
}

func (s *suite) syncerNATSArgs() []string {
	return []string{"--nats-user", "syncer", "--nats-password", s.pw.syncer}
}

// connect opens the suite's own NATS connection (the admin user).
func (s *suite) connect() {
	conn := natstest.Dial(s.t, s.nats.URLs(), stream.WithUserInfo(adminUser, s.pw.admin), stream.WithReconnectWait(200*time.Millisecond))
	s.nc, s.js = conn.NATS(), conn.JetStream()
}

// The churn: about 4 EndpointSlice changes and 1 Ingress change a second
// on a small cluster, for as long as the suite runs (bounded by churnMax).
const churnMax = 24 * time.Hour

func churnSpec(seed uint64) churn.Spec {
	return churn.Spec{
		Namespaces: 2, Ingresses: 6, MinEndpoints: 1, MaxEndpoints: 3, Addresses: churn.AddressRange(1, 60), Port: 8080,
		NamespacePrefix: "faults", Domain: "faults.test", IngressClass: world.IngressClass, MaxExtraIngresses: 6,
		EndpointRate: 4, IngressRate: 1, Duration: churnMax, Seed: seed,
	}
}

// startBackends starts an echo backend on every address of the churn.
func (s *suite) startBackends(spec churn.Spec) {
	b, err := churn.StartBackends(spec.Addresses, spec.Port)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { _ = b.Close() })
}

// baseHosts are the hosts of the base Ingresses, which the churn never
// deletes: the probes' hosts.
func baseHosts(spec churn.Spec) []string {
	out := make([]string, spec.Ingresses)
	for i := range out {
		out[i] = fmt.Sprintf("app-%d.%s", i, spec.Domain)
	}
	return out
}

// churnNamespaces are the namespaces of the churn.
func churnNamespaces(spec churn.Spec) []string {
	out := make([]string, spec.Namespaces)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", spec.NamespacePrefix, i)
	}
	return out
}
