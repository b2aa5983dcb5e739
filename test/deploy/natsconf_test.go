package deploy

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/ingress-sync/ingress-sync/test/testkit/freeport"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// natsStartTimeout bounds the wait for a server to accept clients.
const natsStartTimeout = 30 * time.Second

// natsPasswords are the values of the Secret nats-auth, made the way
// docs/deploy.md says (openssl rand -hex 32).
// jsKey is the JetStream encryption key of overlays/encryption.
type natsPasswords struct{ watcher, syncer, jsKey string }

func newPasswords(t testing.TB) natsPasswords {
	return natsPasswords{watcher: randomHex(t), syncer: randomHex(t), jsKey: randomHex(t)}
}

func randomHex(t testing.TB) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// setNATSEnv sets what the StatefulSet's env gives each server: its pod name
// and the passwords from the Secret (and the key of overlays/encryption).
func setNATSEnv(t *testing.T, serverName string, pw natsPasswords) {
	t.Setenv("SERVER_NAME", serverName)
	t.Setenv("WATCHER_PASSWORD", pw.watcher)
	t.Setenv("SYNCER_PASSWORD", pw.syncer)
	t.Setenv("JS_KEY", pw.jsKey)
}

// writeNATSConfig writes the files of the NATS ConfigMap into a fresh
// folder, as the ConfigMap volume does at /etc/nats, replacing each old
// string of replace by its new one, and returns the path of nats.conf.
func writeNATSConfig(t testing.TB, files map[string]string, replace ...string) string {
	t.Helper()
	dir := t.TempDir()
	r := strings.NewReplacer(replace...)
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(r.Replace(content)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "nats.conf")
}

// loadNATSOptions processes a configuration file like nats-server --config
// does, then moves everything that would touch the machine to 127.0.0.1,
// random ports and temporary folders. The cluster is left as configured;
// the caller rewrites or removes it.
func loadNATSOptions(t testing.TB, conf string) *server.Options {
	t.Helper()
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		t.Fatalf("nats config %s: %v", conf, err)
	}
	if !opts.JetStream {
		t.Fatalf("nats config: JetStream is off")
	}
	opts.Host, opts.Port = "127.0.0.1", server.RANDOM_PORT
	opts.HTTPHost, opts.HTTPPort = "127.0.0.1", server.RANDOM_PORT
	opts.StoreDir = t.TempDir()
	opts.PidFile = filepath.Join(t.TempDir(), "nats.pid")
	opts.NoSigs, opts.NoLog = true, true
	return opts
}

// withoutCluster turns opts into a single server.
func withoutCluster(opts *server.Options) *server.Options {
	opts.Cluster = server.ClusterOpts{}
	opts.Routes = nil
	return opts
}

// startNATS starts a server and shuts it down at the end of the test.
func startNATS(t testing.TB, opts *server.Options) *server.Server {
	t.Helper()
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatalf("nats server: %v", err)
	}
	if os.Getenv("DEPLOY_TEST_NATS_LOG") != "" {
		opts.NoLog = false
		s.ConfigureLogger()
	}
	s.Start()
	t.Cleanup(func() { stopNATS(s) })
	if !s.ReadyForConnections(natsStartTimeout) {
		t.Fatalf("nats server %s not ready within %s", opts.ServerName, natsStartTimeout)
	}
	return s
}

func stopNATS(s *server.Server) {
	s.Shutdown()
	s.WaitForShutdown()
}

// connectAs connects as user with the options every client of the test
// uses; extra options come last.
func connectAs(t testing.TB, url, user, password string, extra ...nats.Option) (*nats.Conn, error) {
	t.Helper()
	opts := append([]nats.Option{
		nats.Name("deploy-test-" + user),
		nats.Timeout(5 * time.Second),
		nats.ReconnectWait(100 * time.Millisecond),
		nats.MaxReconnects(100),
	}, extra...)
	if user != "" {
		opts = append(opts, nats.UserInfo(user, password))
	}
	nc, err := nats.Connect(url, opts...)
	if err == nil {
		t.Cleanup(nc.Close)
	}
	return nc, err
}

// asyncErrors collects the asynchronous errors of a connection, the way a
// permission violation arrives.
type asyncErrors chan error

func (ch asyncErrors) option() nats.Option {
	return nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		select {
		case ch <- err:
		default:
		}
	})
}

// expectViolation waits for the permission violation on subject that the
// server reports for a refused publish or subscribe. Other errors are
// skipped.
func (ch asyncErrors) expectViolation(t *testing.T, op, subject string) {
	t.Helper()
	want := fmt.Sprintf("%s to %q", op, subject)
	deadline := time.After(natsStartTimeout)
	for {
		select {
		case err := <-ch:
			if errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(err.Error(), want) {
				return
			}
		case <-deadline:
			t.Fatalf("no permission violation for %s", want)
		}
	}
}

// freePorts returns n distinct free ports on 127.0.0.1.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	ports, err := freeport.Ports(n)
	if err != nil {
		t.Fatal(err)
	}
	return ports
}
