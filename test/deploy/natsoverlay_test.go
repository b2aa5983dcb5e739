package deploy

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestNATSConfigDev: the dev overlay's configuration runs one JetStream
// server without a cluster, and the watcher creates its stream with the
// overlay's STREAM_REPLICAS (1) there.
func TestNATSConfigDev(t *testing.T) {
	objs := render(t, "overlays/dev")
	pw := newPasswords(t)
	setNATSEnv(t, "nats-0", pw)
	opts := loadNATSOptions(t, writeNATSConfig(t, natsConfigFiles(t, objs)))
	if opts.Cluster.Port != 0 || len(opts.Routes) != 0 {
		t.Fatalf("dev config has a cluster: port %d, %d routes", opts.Cluster.Port, len(opts.Routes))
	}
	s := startNATS(t, opts)
	nc, err := connectAs(t, s.ClientURL(), "watcher", pw.watcher)
	if err != nil {
		t.Fatal(err)
	}
	replicas := envValue(t, container(t, workloadNamed(t, objs, watcherName), "watcher"), "STREAM_REPLICAS")
	if replicas != "1" {
		t.Fatalf("dev STREAM_REPLICAS=%s", replicas)
	}
	js, _ := watcherStream(t, nc, 1)
	publishEvent(t, js, "ingress.service.a.b", "1")
}

// TestNATSConfigTLS: the tls overlay's configuration, with a certificate
// like the one docs/deploy.md describes in the Secret nats-tls, requires TLS
// from clients and mutual TLS on routes; a client trusting the CA connects,
// a plain connection is refused.
func TestNATSConfigTLS(t *testing.T) {
	dir := writeTestPKI(t)
	pw := newPasswords(t)
	setNATSEnv(t, "nats-0", pw)
	conf := writeNATSConfig(t, natsConfigFiles(t, render(t, "overlays/tls")), "/etc/nats-tls/", dir+"/")
	opts := loadNATSOptions(t, conf)
	if opts.TLSConfig == nil || opts.Cluster.TLSConfig == nil {
		t.Fatalf("TLS missing: clients %t, routes %t", opts.TLSConfig != nil, opts.Cluster.TLSConfig != nil)
	}
	if opts.Cluster.TLSConfig.ClientAuth != tls.RequireAndVerifyClientCert {
		t.Errorf("routes do not require a client certificate: %v", opts.Cluster.TLSConfig.ClientAuth)
	}
	s := startNATS(t, withoutCluster(opts))
	port := s.Addr().(*net.TCPAddr).Port
	pool := x509.NewCertPool()
	ca, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil || !pool.AppendCertsFromPEM(ca) {
		t.Fatalf("ca: %v", err)
	}
	tlsURL := "tls://127.0.0.1:" + itoa(port)
	nc, err := connectAs(t, tlsURL, "syncer", pw.syncer, nats.Secure(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}))
	if err != nil {
		t.Fatalf("TLS client: %v", err)
	}
	if !nc.TLSRequired() {
		t.Errorf("connection is not TLS")
	}
	if _, err := connectAs(t, "nats://127.0.0.1:"+itoa(port), "syncer", pw.syncer, nats.NoReconnect()); err == nil {
		t.Errorf("a plain connection was accepted")
	}
	if _, err := connectAs(t, tlsURL, "syncer", pw.syncer, nats.NoReconnect()); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a client without the CA connected or failed otherwise: %v", err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// writeTestPKI writes ca.crt, tls.crt and tls.key (the keys of the Secret
// nats-tls) for 127.0.0.1, with server and client authentication.
func writeTestPKI(t *testing.T) string {
	dir := t.TempDir()
	caKey, caCert := newCert(t, nil, nil, &x509.Certificate{
		Subject: pkix.Name{CommonName: "ingress-sync test CA"}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign,
	})
	key, cert := newCert(t, caKey, caCert, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "nats"},
		DNSNames:    []string{"nats", "*.nats-headless"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	})
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for name, block := range map[string]*pem.Block{
		"ca.crt":  {Type: "CERTIFICATE", Bytes: caCert.Raw},
		"tls.crt": {Type: "CERTIFICATE", Bytes: cert.Raw},
		"tls.key": {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// newCert makes a key and a certificate from tmpl, signed by parent (self
// signed when parent is nil).
func newCert(t *testing.T, parentKey *ecdsa.PrivateKey, parent, tmpl *x509.Certificate) (*ecdsa.PrivateKey, *x509.Certificate) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return key, cert
}

// TestNATSEncryptionAtRest: a server on the base configuration stores an
// event in the clear; restarted on the same store with the configuration
// of overlays/encryption, it still serves that event, and neither it nor a
// new one can be found in the store's files any more.
func TestNATSEncryptionAtRest(t *testing.T) {
	pw := newPasswords(t)
	setNATSEnv(t, "nats-0", pw)
	store := t.TempDir()
	run := func(dir string, payload string) {
		opts := withoutCluster(loadNATSOptions(t, writeNATSConfig(t, natsConfigFiles(t, render(t, dir)))))
		opts.StoreDir = store
		s := startNATS(t, opts)
		nc, err := connectAs(t, s.ClientURL(), "watcher", pw.watcher)
		if err != nil {
			t.Fatal(err)
		}
		js, _ := watcherStream(t, nc, 1)
		publishPayload(t, js, "ingress.secret.a."+dir[len(dir)-3:], payload)
		nc.Close()
		stopNATS(s)
	}
	clear, secret := "clear-"+randomHex(t), "secret-"+randomHex(t)
	run("base", clear)
	if !storeContains(t, store, clear) {
		t.Fatalf("the unencrypted store does not hold the event: the check is blind")
	}
	run("overlays/encryption", secret)
	for _, p := range []string{clear, secret} {
		if storeContains(t, store, p) {
			t.Errorf("%s readable in the encrypted store", p[:6])
		}
	}
	opts := withoutCluster(loadNATSOptions(t, writeNATSConfig(t, natsConfigFiles(t, render(t, "overlays/encryption")))))
	opts.StoreDir = store
	s := startNATS(t, opts)
	nc, err := connectAs(t, s.ClientURL(), "syncer", pw.syncer)
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	msgs := readLastPerSubject(t, js, 2)
	if string(msgs[0].Data()) != clear || string(msgs[1].Data()) != secret {
		t.Errorf("read back %q, %q", msgs[0].Data(), msgs[1].Data())
	}
}

func publishPayload(t *testing.T, js jetstream.JetStream, subject, payload string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	if _, err := js.Publish(ctx, subject, []byte(payload)); err != nil {
		t.Fatalf("publish %s: %v", subject, err)
	}
}

// storeContains reports whether any file under dir contains s.
func storeContains(t *testing.T, dir, s string) bool {
	found := false
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		found = found || strings.Contains(string(data), s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
