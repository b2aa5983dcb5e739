package inspect

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/nginx"
	"github.com/ingress-sync/ingress-sync/test/testkit/golden"
)

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// fleetReports: three syncers on one checksum (one of them lagging), one on
// another, one stale on an old one with an error, one not ready yet.
func fleetReports() []events.SyncerStatus {
	ok := func(pod, sum string, seq uint64, ago time.Duration) events.SyncerStatus {
		return events.SyncerStatus{Pod: pod, Ready: true, CaughtUp: true, Checksum: sum, Sequence: seq, Time: now.Add(-ago)}
	}
	stale := ok("syncer-old", "0ld0ld", 80, 10*time.Minute)
	stale.LastError = "nginx reload failed:\n  nginx -t: [emerg] ..."
	starting := events.SyncerStatus{Pod: "syncer-new", Time: now.Add(-2 * time.Second)}
	return []events.SyncerStatus{ok("syncer-c", "a1b2c3", 120, 5*time.Second), ok("syncer-a", "a1b2c3", 120, 12*time.Second),
		ok("syncer-b", "a1b2c3", 117, 3*time.Second), ok("syncer-d", "ffee00", 120, 20*time.Second), stale, starting}
}

func TestFleet(t *testing.T) {
	f := NewFleet("INGRESS", fleetReports(), 120, now, DefaultStaleAfter)
	if f.Majority != "a1b2c3" || f.Agree != 3 || f.Fresh != 4 {
		t.Errorf("majority %q %d of %d; want a1b2c3, 3 of 4", f.Majority, f.Agree, f.Fresh)
	}
	want := map[string]string{"syncer-a": "ok", "syncer-b": "ok", "syncer-c": "ok", "syncer-d": "DISAGREES",
		"syncer-old": "STALE", "syncer-new": "not ready"}
	for _, s := range f.Syncers {
		if got := s.state(); got != want[s.Pod] {
			t.Errorf("%s: %q; want %q", s.Pod, got, want[s.Pod])
		}
	}
	if f.Syncers[1].Pod != "syncer-b" || f.Syncers[1].Lag != 3 {
		t.Errorf("syncer-b: %+v; want lag 3", f.Syncers[1])
	}
	var b bytes.Buffer
	if err := f.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "fleet", b.Bytes(), "")
	if strings.Count(b.String(), "\n") != 2+len(f.Syncers) {
		t.Errorf("a row spans lines:\n%s", &b)
	}
	empty := NewFleet("INGRESS", nil, 7, now, time.Minute)
	b.Reset()
	if err := empty.WriteTable(&b); err != nil || !strings.Contains(b.String(), "0 syncers, none fresh") {
		t.Errorf("no reports: %v\n%s", err, &b)
	}
}

// TestFleetTie: when two checksums have the most syncers there is no
// majority, and every fresh syncer disagrees.
func TestFleetTie(t *testing.T) {
	r := []events.SyncerStatus{{Pod: "b", Checksum: "bbb", Time: now}, {Pod: "a", Checksum: "aaa", Time: now}, {Pod: "c", Checksum: "aaa", Time: now.Add(-time.Hour)}}
	f := NewFleet("S", r, 0, now, time.Minute)
	if f.Majority != "" || !f.Syncers[0].Disagrees || !f.Syncers[1].Disagrees || f.Syncers[2].Disagrees {
		t.Errorf("tie: majority %q, %+v", f.Majority, f.Syncers)
	}
	var b bytes.Buffer
	if err := f.WriteTable(&b); err != nil || !strings.Contains(b.String(), "3 syncers, 2 fresh, no checksum has a majority") {
		t.Errorf("tie: %v\n%s", err, &b)
	}
}

func TestCertificates(t *testing.T) {
	ca, err := certs.Generate(certs.Options{CommonName: "Test CA", IsCA: true, NotBefore: now.Add(-24 * time.Hour), Validity: 3650 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	shop, err := certs.Generate(certs.Options{Hosts: []string{"shop.example.com", "www.shop.example.com"}, NotBefore: now.Add(-24 * time.Hour),
		Validity: 24*time.Hour + 10*24*time.Hour, Parent: ca.Cert, ParentKey: ca.Key})
	if err != nil {
		t.Fatal(err)
	}
	old, err := certs.Generate(certs.Options{Hosts: []string{"old.example.com"}, NotBefore: now.Add(-48 * time.Hour), Validity: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	held := nginx.Certificates{DefaultCertificate: "ingress-sync/default", Certificates: []nginx.CertificateInfo{
		{Name: "shop/shop-tls", Hosts: []string{"shop.example.com", "www.shop.example.com"}, Cert: string(shop.CertPEM)},
		{Name: "legacy/old-tls", Hosts: []string{"old.example.com"}, Cert: string(old.CertPEM)},
		{Name: "ingress-sync/default", Cert: "garbage"},
	}}
	routes := nginx.Routes{Hosts: []nginx.Host{
		{Name: "shop.example.com", Routes: []nginx.Route{{Path: "/", Ingress: "shop/web"}, {Path: "/api", Ingress: "shop/api"}, {Path: "/x", Ingress: "shop/web"}}},
		{Name: "www.shop.example.com", Routes: []nginx.Route{{Path: "/", Ingress: "shop/www"}}},
	}}
	got := NewCertificates(held, routes)
	var b bytes.Buffer
	if err := WriteCertificatesTable(&b, got, now); err != nil {
		t.Fatal(err)
	}
	// Keys and serial numbers differ per run: the table shows neither.
	golden.Check(t, "certificates", b.Bytes(), "")
	data, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("PRIVATE KEY")) || bytes.Contains(data, []byte("BEGIN")) {
		t.Errorf("the JSON view holds PEM: %s", data)
	}
	if s := got[2]; s.Name != "shop/shop-tls" || s.Issuer != "CN=Test CA,O=ingress-sync" || len(s.Ingresses) != 3 {
		t.Errorf("shop: %+v", s)
	}
}

func TestGeneral(t *testing.T) {
	g := General{
		Version: nginx.Version{Checksum: "conf-1234", Configuration: "abcd", PID: 42, RoutesVersion: 7, RoutesGeneration: 1,
			BackendsVersion: 7, BackendsGeneration: 1, CertificatesVersion: 3, CertificatesGeneration: 1},
		Settings: map[string]any{"checksum": "conf-1234", "max_tries": 3.0, "https_port": 443.0, "body_size": 1048576.0,
			"proxy_buffering": "off", "tls_profiles": map[string]any{}, "no_endpoints": "unix:/var/lib/ingress-sync/run/no-endpoints.sock"},
	}
	var b bytes.Buffer
	if err := g.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "general", b.Bytes(), "")
}
