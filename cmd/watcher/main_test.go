package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/tools/clientcmd/api/latest"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/pkg/admission"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/watch"
	"github.com/ingress-sync/ingress-sync/test/testkit/freeport"
	"github.com/ingress-sync/ingress-sync/test/testkit/natstest"
	"github.com/ingress-sync/ingress-sync/test/testkit/testenv"
)

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr error
	}{
		{name: "defaults"},
		{name: "help", args: []string{"-help"}, wantErr: flag.ErrHelp},
		{name: "unknown flag", args: []string{"--no-such-flag"}, wantErr: errAny},
		{name: "positional argument", args: []string{"extra"}, wantErr: errAny},
		{name: "bad log level", args: []string{"--log-level", "loud"}, wantErr: errAny},
		{name: "bad history", args: []string{"--stream-history", "many"}, wantErr: errAny},
		{name: "admission webhook", args: []string{"--admission-addr", ":8443", "--admission-cert-file", "tls.crt", "--admission-key-file", "tls.key"}},
		{name: "admission webhook without key", args: []string{"--admission-addr", ":8443", "--admission-cert-file", "tls.crt"}, wantErr: errAny},
		{name: "admission webhook without certificate", args: []string{"--admission-addr", ":8443"}, wantErr: errAny},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseFlags(tc.args, io.Discard)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("parseFlags() = %v", err)
			case tc.wantErr == errAny && err == nil:
				t.Fatal("parseFlags() accepted bad flags")
			case tc.wantErr != nil && tc.wantErr != errAny && !errors.Is(err, tc.wantErr):
				t.Fatalf("parseFlags() = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

// errAny stands for any error in TestParseFlags.
var errAny = errors.New("any error")

func TestConfigFromFlags(t *testing.T) {
	t.Setenv("POD_NAME", "watcher-0")
	t.Setenv("POD_NAMESPACE", "ingress")
	kubeconfig := writeKubeconfig(t, "https://127.0.0.1:6443", "token")
	f, err := parseFlags([]string{"--kubeconfig", kubeconfig, "--configmap", "ingress/config",
		"--udp-services-configmap", "ingress/udp", "--publish-status-address", "198.18.0.1, lb.example.com",
		"--status-syncers", "quorum", "--status-max-wait", "30s",
		"--lease-duration", "5s", "--renew-deadline", "3s", "--retry-period", "1s",
		"--gateway-controller-name", "example.com/gw", "--gateway-api-poll-interval", "3s",
		"--gateway-service-selector", "app=syncer", "--gateway-service-type", "ClusterIP", "--gateway-port-range", "30000-30099"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := f.config(nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.WatcherID != "watcher-0" || cfg.ElectionNamespace != "ingress" || !cfg.LeaderElect {
		t.Errorf("id %q, election namespace %q, leader elect %v: want the POD_* environment and election on",
			cfg.WatcherID, cfg.ElectionNamespace, cfg.LeaderElect)
	}
	if !slices.Equal(cfg.ConfigMaps, []string{"ingress/config", "ingress/udp"}) {
		t.Errorf("configmaps %v", cfg.ConfigMaps)
	}
	if !slices.Equal(cfg.PublishStatusAddress, []string{"198.18.0.1", "lb.example.com"}) {
		t.Errorf("status addresses %v", cfg.PublishStatusAddress)
	}
	if cfg.StatusSyncers != watch.StatusQuorum || cfg.StatusMaxWait != 30*time.Second {
		t.Errorf("status syncers %q, max wait %s", cfg.StatusSyncers, cfg.StatusMaxWait)
	}
	if cfg.GatewayClient == nil || cfg.GatewayControllerName != "example.com/gw" || cfg.GatewayAPIPollInterval != 3*time.Second {
		t.Errorf("gateway client %v, controller name %q, poll interval %s: want a client and the flags'",
			cfg.GatewayClient, cfg.GatewayControllerName, cfg.GatewayAPIPollInterval)
	}
	if cfg.GatewayServiceSelector != "app=syncer" || cfg.GatewayServiceType != "ClusterIP" || cfg.GatewayPortRange != "30000-30099" {
		t.Errorf("gateway service selector %q, type %q, port range %q: want the flags'",
			cfg.GatewayServiceSelector, cfg.GatewayServiceType, cfg.GatewayPortRange)
	}
	if cfg.LeaseDuration != 5*time.Second || cfg.RenewDeadline != 3*time.Second || cfg.RetryPeriod != time.Second {
		t.Errorf("lease %s, renew deadline %s, retry period %s: want the flags'", cfg.LeaseDuration, cfg.RenewDeadline, cfg.RetryPeriod)
	}
}

func TestRunRefusesBadFlags(t *testing.T) {
	kubeconfig := writeKubeconfig(t, "https://127.0.0.1:6443", "token")
	tests := []struct {
		name string
		args []string
	}{
		{name: "configmap without namespace", args: []string{"--configmap", "config"}},
		{name: "leader election without namespace", args: []string{"--watcher-id", "w"}},
		{name: "status service and addresses", args: []string{"--leader-elect=false", "--publish-service", "a/b", "--publish-status-address", "198.18.0.1"}},
		{name: "unknown status rule", args: []string{"--leader-elect=false", "--status-syncers", "most"}},
		{name: "gateway port range reversed", args: []string{"--leader-elect=false", "--gateway-port-range", "2000-1000"}},
		{name: "gateway service type NodePort", args: []string{"--leader-elect=false", "--gateway-service-type", "NodePort"}},
		{name: "gateway service selector without a namespace", args: []string{"--leader-elect=false", "--gateway-service-selector", "app=syncer"}},
		{name: "gateway service selector not a selector", args: []string{"--leader-elect=false", "--election-namespace", "ingress", "--gateway-service-selector", "app in (a"}},
		{name: "renew deadline over the lease", args: []string{"--watcher-id", "w", "--election-namespace", "ingress", "--renew-deadline", "5s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("POD_NAMESPACE", "")
			var stderr bytes.Buffer
			args := append([]string{"--kubeconfig", kubeconfig, "--metrics-addr", ""}, tc.args...)
			if code := run(t.Context(), args, &stderr); code != 2 {
				t.Errorf("exit code %d, want 2; stderr:\n%s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), "invalid configuration") {
				t.Errorf("stderr does not say what is wrong:\n%s", stderr.String())
			}
		})
	}
}

// TestRun runs the command as `make run` does, with an embedded NATS server,
// against the real control plane: a Service appears in the stream, /healthz
// answers, and cancelling (SIGTERM) stops it cleanly.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("needs kube-apiserver and etcd (make controlplane); not run with -short")
	}
	cp := testenv.Start(t)
	client := cp.Client(t)
	ns := testenv.NewNamespace(t, client)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := cp.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	natsAddr, metricsAddr, admissionAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	certFile, keyFile, pool := admissionPair(t)
	args := []string{"--kubeconfig", kubeconfig, "--embedded-nats", t.TempDir(), "--nats-url", "nats://" + natsAddr,
		"--watch-namespace", ns, "--election-namespace", ns, "--watcher-id", "watcher-test",
		"--metrics-addr", metricsAddr, "--log-level", "debug",
		"--admission-addr", admissionAddr, "--admission-cert-file", certFile, "--admission-key-file", keyFile}
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, &stderr) }()
	defer func() {
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("exit code %d, want 0", code)
			}
		case <-time.After(30 * time.Second):
			t.Error("watcher did not stop within 30s")
		}
		if t.Failed() {
			t.Logf("watcher log:\n%s", stderr.String())
		}
	}()

	if _, err := client.CoreV1().Services(ns).Create(t.Context(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the watcher's NATS server", func() bool {
		c, err := net.Dial("tcp", natsAddr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	_, js := natstest.Connect(t, "nats://"+natsAddr)
	subject := events.Subject("ingress", events.KindService, ns, "web")
	waitFor(t, "the Service in the stream", func() bool {
		s, err := js.Stream(t.Context(), "INGRESS")
		if err != nil {
			return false
		}
		msg, err := s.GetLastMsgForSubject(t.Context(), subject)
		return err == nil && msg.Header.Get(events.HeaderOp) == string(events.OpCreate)
	})
	waitFor(t, "/healthz ok", func() bool {
		resp, err := http.Get("http://" + metricsAddr + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	waitFor(t, "the admission webhook refusing a snippet", func() bool { return admissionRefuses(t, admissionAddr, pool) })
}

// admissionPair writes a serving certificate for 127.0.0.1 and its key,
// and returns their files and a pool that trusts it.
func admissionPair(t *testing.T) (string, string, *x509.CertPool) {
	t.Helper()
	pair, err := certs.Generate(certs.Options{Hosts: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, pair.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pair.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(pair.Cert)
	return certFile, keyFile, pool
}

// admissionRefuses posts the review of an Ingress of class nginx with a
// snippet to the webhook and reports whether it is refused.
func admissionRefuses(t *testing.T, addr string, pool *x509.CertPool) bool {
	class := "nginx"
	ing := networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web",
		Annotations: map[string]string{"nginx.ingress.kubernetes.io/server-snippet": "return 200;"}},
		Spec: networkingv1.IngressSpec{IngressClassName: &class}}
	raw, err := json.Marshal(&ing)
	if err != nil {
		t.Fatal(err)
	}
	review, err := json.Marshal(admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "u", Operation: admissionv1.Create,
			Kind: metav1.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}, Object: runtime.RawExtension{Raw: raw}}})
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Post("https://"+addr+admission.Path, "application/json", bytes.NewReader(review))
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var out admissionv1.AdmissionReview
	return json.NewDecoder(resp.Body).Decode(&out) == nil && out.Response != nil && !out.Response.Allowed
}

// writeKubeconfig writes a token kubeconfig for server.
func writeKubeconfig(t *testing.T, server, token string) string {
	t.Helper()
	c := clientcmdapi.NewConfig()
	c.Clusters["c"] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	c.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: token}
	c.Contexts["ctx"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	c.CurrentContext = "ctx"
	data, err := runtime.Encode(latest.Codec, c)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ports, err := freeport.Ports(1)
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0]))
}

// waitFor polls cond for up to 30 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
