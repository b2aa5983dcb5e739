package admission_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/pkg/admission"
	"github.com/ingress-sync/ingress-sync/test/testkit/freeport"
)

func TestServerOptions(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	garbage := filepath.Join(dir, "garbage")
	if err := os.WriteFile(garbage, []byte("not PEM"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := admission.NewHandler(admission.Options{})
	tests := []struct {
		name string
		srv  admission.Server
		want error
	}{
		{name: "no address", srv: admission.Server{CertFile: garbage, KeyFile: garbage, Handler: h}, want: admission.ErrInvalidServer},
		{name: "no handler", srv: admission.Server{Addr: "127.0.0.1:1", CertFile: garbage, KeyFile: garbage}, want: admission.ErrInvalidServer},
		{name: "no key file", srv: admission.Server{Addr: "127.0.0.1:1", CertFile: garbage, Handler: h}, want: admission.ErrInvalidServer},
		{name: "missing files", srv: admission.Server{Addr: "127.0.0.1:1", CertFile: missing, KeyFile: missing, Handler: h}, want: admission.ErrCertificate},
		{name: "not a key pair", srv: admission.Server{Addr: "127.0.0.1:1", CertFile: garbage, KeyFile: garbage, Handler: h}, want: admission.ErrCertificate},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.srv.Listen(); !errors.Is(err, tc.want) {
				t.Errorf("Listen() = %v, want %v", err, tc.want)
			}
		})
	}
}

// writePair writes a serving certificate for 127.0.0.1 signed by ca with
// modification time mod, and returns its serial number.
func writePair(t *testing.T, ca *certs.Pair, certFile, keyFile string, mod time.Time) string {
	t.Helper()
	leaf, err := certs.Generate(certs.Options{Hosts: []string{"127.0.0.1"}, Parent: ca.Cert, ParentKey: ca.Key})
	if err != nil {
		t.Fatal(err)
	}
	for f, b := range map[string][]byte{certFile: leaf.CertPEM, keyFile: leaf.KeyPEM} {
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(f, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	return leaf.Cert.SerialNumber.String()
}

// TestServerRotatesCertificate: a key pair rewritten in place (a
// rotated Secret) is served from the next handshake, and reviews are
// answered at Path.
func TestServerRotatesCertificate(t *testing.T) {
	ca, err := certs.Generate(certs.Options{CommonName: "test CA", IsCA: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	first := writePair(t, ca, certFile, keyFile, time.Unix(1_000_000, 0))
	ports, err := freeport.Ports(1)
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(ports[0])
	quiet := slog.New(slog.DiscardHandler)
	srv := &admission.Server{Addr: addr, CertFile: certFile, KeyFile: keyFile, Logger: quiet, Handler: admission.NewHandler(admission.Options{Logger: quiet})}
	if _, err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	}()
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	if got := servedSerial(t, addr, pool); got != first {
		t.Fatalf("served serial %s, want %s", got, first)
	}
	second := writePair(t, ca, certFile, keyFile, time.Unix(2_000_000, 0))
	if got := servedSerial(t, addr, pool); got != second {
		t.Errorf("served serial %s after the rotation, want %s", got, second)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Post("https://"+addr+admission.Path, "application/json", strings.NewReader("{"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a body that is no review: status %d, want 400", resp.StatusCode)
	}
}

func servedSerial(t *testing.T, addr string, pool *x509.CertPool) string {
	t.Helper()
	d := &tls.Dialer{Config: &tls.Config{RootCAs: pool}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.(*tls.Conn).ConnectionState().PeerCertificates[0].SerialNumber.String()
}
