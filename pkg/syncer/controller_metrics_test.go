package syncer

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ingress-sync/ingress-sync/internal/certs"
)

// scriptedApplier answers each Apply with the next change and error (a
// unit-test fake; the real Applier is tested in pkg/nginx).
type scriptedApplier struct {
	changes []config.Change
	errs    []error
}

func (a *scriptedApplier) Apply(context.Context, *config.Configuration) (config.Change, error) {
	ch, err := a.changes[0], a.errs[0]
	a.changes, a.errs = a.changes[1:], a.errs[1:]
	return ch, err
}

// TestControllerMetrics: the first apply and the ones that change
// nginx.conf count as reloads, failures of those as errors; dynamic
// applies count as neither; the certificates' expiry is shown per host.
func TestControllerMetrics(t *testing.T) {
	c, err := certs.Generate(certs.Options{CommonName: "shop", Hosts: []string{"a.test"}})
	if err != nil {
		t.Fatal(err)
	}
	fail := errors.New("nginx -t failed")
	app := &scriptedApplier{
		changes: []config.Change{{}, {}, {Reload: true}, {Reload: true}},
		errs:    []error{nil, nil, fail, nil},
	}
	reg := prometheus.NewPedanticRegistry()
	m := NewControllerMetrics(app, reg, ControllerLabels{Namespace: "ingress", Class: "k8s.io/ingress-sync", Pod: "p"})
	cfg := &config.Configuration{Checksum: "c1",
		Certificates: []config.Certificate{{Name: "shop/tls", Hosts: []string{"a.test", "b.test"}, Cert: c.CertPEM, Checksum: "x"}}}
	steps := []struct {
		name                  string
		success, errs, lastOK float64
		wantErr               bool
	}{
		{"first apply starts nginx", 1, 0, 1, false},
		{"dynamic update", 1, 0, 1, false},
		{"failed reload", 1, 1, 0, true},
		{"reload", 2, 1, 1, false},
	}
	for _, s := range steps {
		if _, err := m.Apply(t.Context(), cfg); (err != nil) != s.wantErr {
			t.Fatalf("%s: Apply: %v", s.name, err)
		}
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
