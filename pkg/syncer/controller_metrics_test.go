package syncer

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ingress-sync/ingress-sync/internal/certs"
)

// TestControllerMetrics: the applies the loop reports as reloads (the
// first, and those that change nginx.conf) count as successes, failures of
// those as errors; dynamic applies count as neither; the certificates'
// expiry is shown per host.
func TestControllerMetrics(t *testing.T) {
	c, err := certs.Generate(certs.Options{CommonName: "shop", Hosts: []string{"a.test"}})
	if err != nil {
		t.Fatal(err)
	}
	fail := errors.New("nginx -t failed")
	reg := prometheus.NewPedanticRegistry()
	m := NewControllerMetrics(reg, ControllerLabels{Namespace: "ingress", Class: "k8s.io/ingress-sync", Pod: "p"})
	cfg := &config.Configuration{Checksum: "c1",
		Certificates: []config.Certificate{{Name: "shop/tls", Hosts: []string{"a.test", "b.test"}, Cert: c.CertPEM, Checksum: "x"}}}
	steps := []struct {
		name                  string
		reload                bool
		err                   error
		success, errs, lastOK float64
	}{
		{"first apply starts nginx", true, nil, 1, 0, 1},
		{"dynamic update", false, nil, 1, 0, 1},
		{"failed reload", true, fail, 1, 1, 0},
		{"reload", true, nil, 2, 1, 1},
	}
	for _, s := range steps {
		m.Observe(cfg, s.reload, s.err)
		if got := testutil.ToFloat64(m.success); got != s.success {
			t.Errorf("%s: success %v, want %v", s.name, got, s.success)
		}
		if got := testutil.ToFloat64(m.errors); got != s.errs {
			t.Errorf("%s: errors %v, want %v", s.name, got, s.errs)
		}
		if got := testutil.ToFloat64(m.lastOK); got != s.lastOK {
			t.Errorf("%s: last reload successful %v, want %v", s.name, got, s.lastOK)
		}
	}
	if got := testutil.ToFloat64(m.hash); got != configHash("c1") || got == 0 {
		t.Errorf("config_hash %v", got)
	}
	if n := testutil.CollectAndCount(m.sslExpire); n != 2 {
		t.Errorf("ssl_expire_time_seconds: %d series, want one per host", n)
	}
	leaf := firstCertificate(c.CertPEM)
	got := testutil.ToFloat64(m.sslExpire.WithLabelValues("shop", "k8s.io/ingress-sync", "a.test", "tls", leaf.SerialNumber.String()))
	if got != float64(leaf.NotAfter.Unix()) {
		t.Errorf("ssl_expire_time_seconds of a.test: %v, want %d", got, leaf.NotAfter.Unix())
	}
}
