package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/internal/certs"
)

// testCA issues certificates for the TLS tests.
type testCA struct {
	ca   *certs.Pair
	pool *x509.CertPool
}

func newTestCA(t testing.TB) *testCA {
	t.Helper()
	ca, err := certs.Generate(certs.Options{CommonName: "ingress-sync test CA", IsCA: true, Validity: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	return &testCA{ca: ca, pool: pool}
}

// issue returns a config.Certificate for hosts and its serial number.
func (ca *testCA) issue(t testing.TB, name string, hosts ...string) (config.Certificate, string) {
	t.Helper()
	p, err := certs.Generate(certs.Options{Hosts: hosts, Validity: 24 * time.Hour, Parent: ca.ca.Cert, ParentKey: ca.ca.Key})
	if err != nil {
		t.Fatal(err)
	}
	serial := p.Cert.SerialNumber.String()
	return config.Certificate{Name: name, Hosts: hosts, Cert: p.CertPEM, Key: p.KeyPEM, Checksum: "serial-" + serial}, serial
}

// served returns the serial of the certificate nginx presents for sni,
// verified against the CA for verifyHost, or an error.
func (h *harness) served(ca *testCA, sni, verifyHost string) (string, error) {
	return h.servedOn(ca, h.opts.HTTPSPort, sni, verifyHost)
}

// servedOn is served on port port.
func (h *harness) servedOn(ca *testCA, port int, sni, verifyHost string) (string, error) {
	cfg := &tls.Config{ServerName: sni, RootCAs: ca.pool, InsecureSkipVerify: true} //nolint:gosec // verified below
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second}, Config: cfg}
	conn, err := d.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return "", err
	}
	defer conn.Close()
	chain := conn.(*tls.Conn).ConnectionState().PeerCertificates
	leaf := chain[0]
	inter := x509.NewCertPool()
	for _, c := range chain[1:] {
		inter.AddCert(c)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: verifyHost, Roots: ca.pool, Intermediates: inter}); err != nil {
		return leaf.SerialNumber.String(), fmt.Errorf("verify %s: %w", verifyHost, err)
	}
	return leaf.SerialNumber.String(), nil
}

func TestCertificatesWithoutReload(t *testing.T) {
	ca := newTestCA(t)
	backend := startEcho(t, "secure")
	cfg := configOf("certs-1", []config.Server{
		{Hostname: "secure.test", TLS: true, SSLRedirect: true, Locations: []config.Location{prefixLoc("/", "secure")}},
		{Hostname: "*.wild.test", TLS: true, SSLRedirect: true, Locations: []config.Location{prefixLoc("/", "secure")}},
	}, backendOf("secure", backend))
	h := startNginx(t, cfg, nil)
	master := h.proc.Pid()
	workers := workerPIDs(t, master)

	if _, err := h.served(ca, "secure.test", "secure.test"); err == nil {
		t.Fatal("before any certificate was posted, the placeholder verified against the test CA")
	}

	secure, serial1 := ca.issue(t, "default/secure", "secure.test")
	wild, wildSerial := ca.issue(t, "default/wild", "*.wild.test")
	def, defSerial := ca.issue(t, "default/default", "default.test")
	ch := config.Change{CertificatesUpserted: []config.Certificate{def, secure, wild}, DefaultCertificate: "default/default"}
	if err := h.update(t.Context(), ch); err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name, sni, verify, serial string
	}{
		{"exact host", "secure.test", "secure.test", serial1},
		{"exact host, upper case SNI", "SECURE.TEST", "secure.test", serial1},
		{"wildcard, one label", "a.wild.test", "a.wild.test", wildSerial},
		{"wildcard does not cover two labels: default", "a.b.wild.test", "default.test", defSerial},
		{"unknown SNI: default", "other.test", "default.test", defSerial},
		{"no SNI: default", "", "default.test", defSerial},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			got, err := h.served(ca, c.sni, c.verify)
			if err != nil || got != c.serial {
				t.Fatalf("SNI %q: serial %s, %v; want %s", c.sni, got, err, c.serial)
			}
		})
	}

	t.Run("HTTPS request and HTTP redirect", func(t *testing.T) {
		if r := h.mustGet("https://secure.test/x"); r.Status != 200 || r.Reply.Headers.Get("X-Forwarded-Proto") != "https" {
			t.Fatalf("HTTPS: %d, X-Forwarded-Proto %q", r.Status, r.Reply.Headers.Get("X-Forwarded-Proto"))
		}
		r := h.mustGet("http://secure.test/x?y=1")
		want := "https://secure.test/x?y=1" // no port: use-port-in-redirects is off
		if r.Status != 308 || r.Header.Get("Location") != want {
			t.Fatalf("HTTP: %d to %q, want 308 to %q", r.Status, r.Header.Get("Location"), want)
		}
	})

	t.Run("rotation", func(t *testing.T) {
		rotated, serial2 := ca.issue(t, "default/secure", "secure.test")
		if err := h.update(t.Context(), config.Change{CertificatesUpserted: []config.Certificate{rotated}}); err != nil {
			t.Fatal(err)
		}
		// Every worker serves the new certificate right after the POST.
		for i := range 8 {
			if got, err := h.served(ca, "secure.test", "secure.test"); err != nil || got != serial2 {
				t.Fatalf("handshake %d after rotation: serial %s, %v; want %s", i, got, err, serial2)
			}
		}
	})

	t.Run("removal falls back to the default", func(t *testing.T) {
		if err := h.update(t.Context(), config.Change{CertificatesRemoved: []string{"default/wild"}}); err != nil {
			t.Fatal(err)
		}
		if got, err := h.served(ca, "a.wild.test", "default.test"); err != nil || got != defSerial {
			t.Fatalf("serial %s, %v; want the default %s", got, err, defSerial)
		}
	})

	t.Run("GET certs lists names and hosts, never keys", func(t *testing.T) {
		got, err := h.lua.GetCertificates(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range got.Certificates {
			names = append(names, c.Name)
		}
		if !slices.Equal(names, []string{"default/default", "default/secure"}) || got.DefaultCertificate != "default/default" {
			t.Fatalf("certificates = %+v", got)
		}
	})

	t.Run("GET certs?pem=1 adds the chains, never keys", func(t *testing.T) {
		plain, err := h.lua.GetCertificates(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		chains, err := h.lua.GetCertificateChains(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range chains.Certificates {
			if plain.Certificates[i].Cert != "" || !strings.HasPrefix(c.Cert, "-----BEGIN CERTIFICATE-----") || strings.Contains(c.Cert, "PRIVATE KEY") {
				t.Errorf("%s: chain %.40q (without pem=1: %.40q)", c.Name, c.Cert, plain.Certificates[i].Cert)
			}
		}
	})

	checkNotReloaded(t, h, workers)
}
