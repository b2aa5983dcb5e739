package testenv

import (
	"context"
	"errors"
	"github.com/ingress-sync/ingress-sync/test/testkit/freeport"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ingress-sync/ingress-sync/test/testkit/proc"
)

// startAttempts bounds the retries when a freshly chosen port was taken by
// someone else between choosing and binding it.
const startAttempts = 3

// stopGrace is how long a process gets between SIGTERM and SIGKILL.
const stopGrace = 10 * time.Second

// errPortTaken marks a start that failed because a port was in use.
var errPortTaken = errors.New("port already in use")

// ControlPlane is a running etcd plus kube-apiserver.
type ControlPlane struct {
	URL        string // https://127.0.0.1:<port>
	EtcdURL    string // http://127.0.0.1:<port>
	Dir        string // data, certificates, keys and logs
	CAData     []byte // serving certificate and its CA, PEM
	AdminToken string // bearer token of AdminUser (system:masters)
	// StartDuration is how long Run took until /readyz answered ok.
	StartDuration time.Duration

	etcd, apiserver *proc.Process
	opts            Options
	apiBin          string
	apiPort         int
	apiMu           sync.Mutex // StopAPIServer and StartAPIServer
	removeDir       bool
	stopOnce        sync.Once
	stopErr         error
}

// Start runs a control plane for the test and stops it in t.Cleanup. It
// fails the test (never skips) when the binaries are missing.
func Start(t testing.TB, opts ...Option) *ControlPlane {
	t.Helper()
	var o Options
	for _, opt := range opts {
		opt(&o)
	}
	cp, err := Run(t.Context(), o)
	if err != nil {
		t.Fatalf("control plane: %v", err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("stop control plane: %v", err)
		}
	})
	t.Logf("control plane %s ready in %s", cp.URL, cp.StartDuration.Round(time.Millisecond))
	return cp
}

// Run starts etcd and kube-apiserver and returns when /readyz answers ok.
// The processes outlive ctx, which only bounds the start: the caller must call
// Stop.
func Run(ctx context.Context, o Options) (*ControlPlane, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	etcdBin, apiBin, err := binaries(o.BinDir)
	if err != nil {
		return nil, err
	}
	cp := &ControlPlane{Dir: o.Dir, opts: o, apiBin: apiBin}
	if cp.Dir == "" {
		if cp.Dir, err = os.MkdirTemp("", "ingress-sync-controlplane-"); err != nil {
			return nil, err
		}
		cp.removeDir = true
	} else if err := os.MkdirAll(cp.Dir, 0o700); err != nil {
		return nil, err
	}
	began := time.Now()
	if err := cp.prepare(); err != nil {
		_ = cp.Stop()
		return nil, err
	}
	for attempt := 1; attempt <= startAttempts; attempt++ {
		err = cp.start(ctx, o, etcdBin, apiBin, attempt)
		if err == nil || !errors.Is(err, errPortTaken) {
			break
		}
		cp.stopProcesses()
	}
	if err != nil {
		_ = cp.Stop()
		return nil, err
	}
	cp.StartDuration = time.Since(began)
	return cp, nil
}

// prepare writes the service account key and the token file.
func (cp *ControlPlane) prepare() error {
	if err := writeServiceAccountKey(filepath.Join(cp.Dir, "sa.key")); err != nil {
		return err
	}
	token, err := writeTokenFile(filepath.Join(cp.Dir, "tokens.csv"))
	cp.AdminToken = token
	return err
}

// start is one attempt with fresh ports and a fresh etcd data dir.
func (cp *ControlPlane) start(ctx context.Context, o Options, etcdBin, apiBin string, attempt int) error {
	ctx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()
	ports, err := freeport.Ports(3)
	if err != nil {
		return err
	}
	cp.EtcdURL = "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	cp.URL = "https://127.0.0.1:" + strconv.Itoa(ports[2])
	cp.apiPort = ports[2]
	dataDir := filepath.Join(cp.Dir, "etcd-"+strconv.Itoa(attempt))
	cp.etcd, err = proc.Start("etcd", etcdBin, filepath.Join(cp.Dir, "etcd.log"), etcdArgs(dataDir, cp.EtcdURL, peerURL), nil)
	if err != nil {
		return err
	}
	if err := waitReady(ctx, cp.etcd, cp.EtcdURL+"/health", httpClient("")); err != nil {
		return err
	}
	certDir := filepath.Join(cp.Dir, "certs")
	cp.apiserver, err = proc.Start("kube-apiserver", apiBin, filepath.Join(cp.Dir, "kube-apiserver.log"),
		cp.apiserverArgs(o, ports[2], certDir), nil)
	if err != nil {
		return err
	}
	if err := waitReady(ctx, cp.apiserver, cp.URL+"/readyz", httpClient(cp.AdminToken)); err != nil {
		return err
	}
	cp.CAData, err = readCA(certDir)
	return err
}

// StopAPIServer stops kube-apiserver (SIGTERM, then SIGKILL after a grace
// period) and leaves etcd running: a kube-apiserver outage. Clients get
// connection refused until StartAPIServer.
func (cp *ControlPlane) StopAPIServer() error {
	cp.apiMu.Lock()
	defer cp.apiMu.Unlock()
	err := cp.apiserver.Stop(stopGrace)
	if errors.Is(err, proc.ErrKilled) {
		err = nil // the outage is what the caller wants
	}
	return err
}

// StartAPIServer starts kube-apiserver again after StopAPIServer, on the
// same port, with the same certificates and etcd (so the same data, URL
// and CAData), and returns when /readyz answers ok or ctx ends.
func (cp *ControlPlane) StartAPIServer(ctx context.Context) error {
	cp.apiMu.Lock()
	defer cp.apiMu.Unlock()
	if cp.apiserver != nil {
		if done, _ := cp.apiserver.Exited(); !done {
			return errors.New("testenv: kube-apiserver is running")
		}
	}
	ctx, cancel := context.WithTimeout(ctx, cp.opts.StartTimeout)
	defer cancel()
	p, err := proc.Start("kube-apiserver", cp.apiBin, filepath.Join(cp.Dir, "kube-apiserver.log"),
		cp.apiserverArgs(cp.opts, cp.apiPort, filepath.Join(cp.Dir, "certs")), nil)
	if err != nil {
		return err
	}
	cp.apiserver = p
	return waitReady(ctx, p, cp.URL+"/readyz", httpClient(cp.AdminToken))
}

func etcdArgs(dataDir, clientURL, peerURL string) []string {
	return []string{
		"--name=testenv",
		"--data-dir=" + dataDir,
		"--listen-client-urls=" + clientURL,
		"--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=testenv=" + peerURL,
		"--unsafe-no-fsync",
		"--log-level=warn",
	}
}

func (cp *ControlPlane) apiserverArgs(o Options, port int, certDir string) []string {
	saKey := filepath.Join(cp.Dir, "sa.key")
	args := []string{
		"--etcd-servers=" + cp.EtcdURL,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + certDir,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + saKey,
		"--service-account-signing-key-file=" + saKey,
		"--token-auth-file=" + filepath.Join(cp.Dir, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=10.96.0.0/16",
		"--disable-admission-plugins=ServiceAccount",
		"--endpoint-reconciler-type=none",
	}
	if o.AdvertiseAddress != "" {
		args = append(args, "--advertise-address="+o.AdvertiseAddress)
	}
	return append(args, o.APIServerFlags...)
}

// Config returns a new admin *rest.Config that verifies the apiserver's
// generated certificate.
func (cp *ControlPlane) Config() *rest.Config {
	return &rest.Config{
		Host:            cp.URL,
		BearerToken:     cp.AdminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: append([]byte(nil), cp.CAData...)},
		QPS:             1000,
		Burst:           2000,
	}
}

// Client returns an admin clientset or fails the test.
func (cp *ControlPlane) Client(t testing.TB) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(cp.Config())
	if err != nil {
		t.Fatalf("clientset: %v", err)
	}
	return c
}

// Stop stops kube-apiserver, then etcd (SIGTERM, then SIGKILL after a grace
// period) and removes the temporary folder. It is idempotent.
func (cp *ControlPlane) Stop() error {
	cp.stopOnce.Do(func() {
		cp.stopErr = cp.stopProcesses()
		if cp.removeDir && cp.Dir != "" {
			cp.stopErr = errors.Join(cp.stopErr, os.RemoveAll(cp.Dir))
		}
	})
	return cp.stopErr
}

func (cp *ControlPlane) stopProcesses() error {
	err := errors.Join(cp.apiserver.Stop(stopGrace), cp.etcd.Stop(stopGrace))
	cp.apiserver, cp.etcd = nil, nil
	return err
}

// portTaken reports whether a log says a listen failed on a used port.
func portTaken(log string) bool {
	return strings.Contains(log, "address already in use")
}
