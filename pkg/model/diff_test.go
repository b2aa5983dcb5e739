package model

import (
	"fmt"
	"testing"
)

// diffBase is a small hand-built Configuration for Diff cases.
func diffBase(t *testing.T) *Configuration {
	return &Configuration{
		Global: DefaultGlobal(),
		Servers: []Server{
			srv("_", catchAll("")),
			tlsSrv("a.com", true, loc("/x", PathPrefix, "ns-web-80", "ns/ing"), catchAll("")),
		},
		Backends: []Backend{be("ns", "api", "80"), be("ns", "web", "80", ep("10.0.0.1", 80))},
		Certificates: []Certificate{
			{Name: "_fallback", Hosts: []string{}, Cert: testdata(t, "other.crt"), Key: testdata(t, "other.key")},
			{Name: "ns/cert", Hosts: []string{"a.com"}, Cert: testdata(t, "example.crt"), Key: testdata(t, "example.key")},
		},
		DefaultCertificate: "_fallback",
	}
}

// changeSummary is Change with names only.
type changeSummary struct {
	Reload          bool
	Reasons         []string
	Backends        []string
	BackendsRemoved []string
	Certs           []string
	CertsRemoved    []string
	DefaultCert     string
}

func summarize(c Change) changeSummary {
	s := changeSummary{Reload: c.Reload, Reasons: c.ReloadReasons, BackendsRemoved: c.BackendsRemoved,
		CertsRemoved: c.CertificatesRemoved, DefaultCert: c.DefaultCertificate}
	for _, b := range c.BackendsUpserted {
		s.Backends = append(s.Backends, b.Name)
	}
	for _, cert := range c.CertificatesUpserted {
		s.Certs = append(s.Certs, cert.Name)
	}
	return s
}

func reload(reasons ...string) changeSummary { return changeSummary{Reload: true, Reasons: reasons} }

func TestDiff(t *testing.T) {
	web := 1 // index of ns-web-80 in diffBase
	tests := map[string]struct {
		mutate func(c *Configuration)
		want   changeSummary
	}{
		"unchanged":     {func(c *Configuration) {}, changeSummary{}},
		"problems only": {func(c *Configuration) { c.Problems = []Problem{{Kind: "Ingress", Reason: "x"}} }, changeSummary{}},
		"endpoint added": {func(c *Configuration) {
			c.Backends[web].Endpoints = append(c.Backends[web].Endpoints, ep("10.0.0.2", 80))
		}, changeSummary{Backends: []string{"ns-web-80"}}},
		"endpoint port changed": {func(c *Configuration) {
			c.Backends[web].Endpoints = []Endpoint{ep("10.0.0.1", 81)}
		}, changeSummary{Backends: []string{"ns-web-80"}}},
		"balancing changed": {func(c *Configuration) { c.Backends[web].LoadBalance = LoadBalanceEWMA },
			changeSummary{Backends: []string{"ns-web-80"}}},
		"affinity changed": {func(c *Configuration) { c.Backends[web].Affinity = &Affinity{CookieName: "x"} },
			changeSummary{Backends: []string{"ns-web-80"}}},
		"hash by changed": {func(c *Configuration) { c.Backends[0].UpstreamHashBy = "$host" },
			changeSummary{Backends: []string{"ns-api-80"}}},
		"backend added": {func(c *Configuration) { c.Backends = append(c.Backends, be("ns", "zzz", "80")) },
			changeSummary{Backends: []string{"ns-zzz-80"}}},
		"backend removed": {func(c *Configuration) { c.Backends = c.Backends[1:] },
			changeSummary{BackendsRemoved: []string{"ns-api-80"}}},
		"certificate content changed": {func(c *Configuration) { c.Certificates[1].Cert = c.Certificates[0].Cert },
			changeSummary{Certs: []string{"ns/cert"}}},
		"certificate hosts changed": {func(c *Configuration) { c.Certificates[1].Hosts = []string{"a.com", "b.com"} },
			changeSummary{Certs: []string{"ns/cert"}}},
		"certificate added": {func(c *Configuration) {
			c.Certificates = append(c.Certificates, Certificate{Name: "ns/new", Hosts: []string{"n.com"}})
		}, changeSummary{Certs: []string{"ns/new"}}},
		"certificate removed": {func(c *Configuration) { c.Certificates = c.Certificates[:1] },
			changeSummary{CertsRemoved: []string{"ns/cert"}}},
		// The content of the generated fallback certificate is left out of
		// the checksum on purpose (see TestFallbackCertificateContentNotInChecksum).
		"default certificate content": {func(c *Configuration) {
			c.DefaultCertificate = "ns/cert"
			c.Certificates[1].Key = c.Certificates[0].Key
		}, changeSummary{Certs: []string{"ns/cert"}, DefaultCert: "ns/cert"}},
		"default certificate renamed is dynamic": {func(c *Configuration) { c.DefaultCertificate = "ns/cert" },
			changeSummary{Certs: []string{"ns/cert"}, DefaultCert: "ns/cert"}},
		"global settings":  {func(c *Configuration) { c.Global.ProxyReadTimeout = 61 }, reload("global settings changed")},
		"default backend":  {func(c *Configuration) { c.DefaultBackend = "ns-api-80" }, reload("default backend changed")},
		"server added":     {func(c *Configuration) { c.Servers = append(c.Servers, srv("b.com")) }, reload("server b.com added")},
		"server removed":   {func(c *Configuration) { c.Servers = c.Servers[:1] }, reload("server a.com removed")},
		"server tls":       {func(c *Configuration) { c.Servers[1].TLS = false }, reload("server a.com tls changed")},
		"server redirect":  {func(c *Configuration) { c.Servers[1].SSLRedirect = false }, reload("server a.com ssl-redirect changed")},
		"location backend": {func(c *Configuration) { c.Servers[1].Locations[0].Backend = "ns-api-80" }, reload("server a.com location /x changed")},
		"location ingress": {func(c *Configuration) { c.Servers[1].Locations[0].Ingress = "ns/other" }, reload("server a.com location /x changed")},
		"location settings": {func(c *Configuration) { c.Servers[1].Locations[0].Settings.AllowSourceRange = []string{"10.0.0.0/8"} },
			reload("server a.com location /x changed")},
		"location redirect": {func(c *Configuration) { c.Servers[1].Locations[0].Settings.SSLRedirect = ptr(false) },
			reload("server a.com location /x changed")},
		"location added and removed": {func(c *Configuration) {
			c.Servers[1].Locations[0] = loc("/y", PathExact, "ns-web-80", "ns/ing")
		}, reload("server a.com location /x removed", "server a.com location = /y added")},
		"path type changed": {func(c *Configuration) { c.Servers[1].Locations[0].PathType = PathExact },
			reload("server a.com location = /x added", "server a.com location /x removed")},
		"many reasons are capped": {func(c *Configuration) {
			for i := range 12 {
				c.Servers = append(c.Servers, srv(fmt.Sprintf("s%02d.com", i)))
			}
		}, reload("server s00.com added", "server s01.com added", "server s02.com added", "server s03.com added",
			"server s04.com added", "server s05.com added", "server s06.com added", "server s07.com added",
			"server s08.com added", "server s09.com added", "and 2 more")},
		"reload and dynamic together": {func(c *Configuration) {
			c.Global.SSLRedirect = false
			c.Backends = c.Backends[1:]
		}, changeSummary{Reload: true, Reasons: []string{"global settings changed"}, BackendsRemoved: []string{"ns-api-80"}}},
		"unsorted input is handled": {func(c *Configuration) {
			c.Servers[0], c.Servers[1] = c.Servers[1], c.Servers[0]
			c.Backends[0], c.Backends[1] = c.Backends[1], c.Backends[0]
			c.Certificates[0], c.Certificates[1] = c.Certificates[1], c.Certificates[0]
		}, changeSummary{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			old, new := diffBase(t), diffBase(t)
			tc.mutate(new)
			ch := Diff(old, new)
			checkEqual(t, "change", summarize(ch), tc.want)
			if ch.Empty() != (tc.want.Reload == false && !ch.Dynamic()) {
				t.Errorf("Empty() = %v, Dynamic() = %v", ch.Empty(), ch.Dynamic())
			}
			if ch.Empty() != old.Equal(new) && name != "unsorted input is handled" {
				t.Errorf("Empty() = %v but Equal() = %v", ch.Empty(), old.Equal(new))
			}
		})
	}
}

func TestDiffInitial(t *testing.T) {
	c := diffBase(t)
	ch := Diff(nil, c)
	checkEqual(t, "initial", summarize(ch), changeSummary{Reload: true, Reasons: []string{"initial configuration"},
		Backends: []string{"ns-api-80", "ns-web-80"}, Certs: []string{"_fallback", "ns/cert"}, DefaultCert: "_fallback"})
	if !Diff(c, nil).Empty() {
		t.Error("Diff(c, nil) is not empty")
	}
}

// TestDiffBuilt checks Diff on Configurations from Build, with the stored
// checksums: an endpoint change is dynamic only.
func TestDiffBuilt(t *testing.T) {
	objects := objs(webService(), one(ingress("default", "ing", rule("a.example.com", prefix("/", "web", 80)))))
	s := newTestStore(t, objects...)
	old := Build(s, testOptions())
	if err := s.Apply(upsertEvent(slice("default", "web-1", "web", "", 8080, ready("10.0.0.1"), ready("10.0.0.2")))); err != nil {
		t.Fatal(err)
	}
	new := Build(s, testOptions())
	checkEqual(t, "change", summarize(Diff(old, new)), changeSummary{Backends: []string{web80}})
	if old.Equal(new) {
		t.Error("Equal after an endpoint change")
	}
	if err := s.Apply(upsertEvent(ingress("default", "ing", rule("a.example.com", prefix("/", "web", 80), exact("/z", "web", 80))))); err != nil {
		t.Fatal(err)
	}
	checkEqual(t, "change", summarize(Diff(new, Build(s, testOptions()))), reload("server a.example.com location = /z added"))
}
