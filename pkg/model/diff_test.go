package model

import (
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"

	"github.com/ingress-sync/ingress-sync/test/testkit/check"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

// diffBase is a small hand-built Configuration for Diff cases.
func diffBase(t *testing.T) *config.Configuration {
	return &config.Configuration{
		Global: config.DefaultGlobal(),
		Servers: []config.Server{
			srv("_", catchAll("")),
			tlsSrv("a.com", true, loc("/x", config.PathPrefix, "ns-web-80", "ns/ing"), catchAll("")),
		},
		Backends: ptrs(be("ns", "api", "80"), be("ns", "web", "80", ep("10.0.0.1", 80))),
		Certificates: []config.Certificate{
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
	Servers         []string
	ServersRemoved  []string
	Backends        []string
	BackendsRemoved []string
	Certs           []string
	CertsRemoved    []string
	DefaultCert     string
}

func summarize(c config.Change) changeSummary {
	s := changeSummary{Reload: c.Reload, Reasons: c.ReloadReasons, ServersRemoved: c.ServersRemoved,
		BackendsRemoved: c.BackendsRemoved, CertsRemoved: c.CertificatesRemoved, DefaultCert: c.DefaultCertificate}
	for _, srv := range c.ServersUpserted {
		s.Servers = append(s.Servers, srv.Hostname)
	}
	for _, b := range c.BackendsUpserted {
		s.Backends = append(s.Backends, b.Name)
	}
	for _, cert := range c.CertificatesUpserted {
		s.Certs = append(s.Certs, cert.Name)
	}
	return s
}

func reload(reasons ...string) changeSummary { return changeSummary{Reload: true, Reasons: reasons} }

// servers is a dynamic change of the route tables of hosts only.
func servers(hosts ...string) changeSummary { return changeSummary{Servers: hosts} }

// checkUpsertedServers wants every upserted Server to be new's Server of
// that Hostname, whole.
func checkUpsertedServers(t *testing.T, ch config.Change, new *config.Configuration) {
	t.Helper()
	for _, u := range ch.ServersUpserted {
		i := slices.IndexFunc(new.Servers, func(s config.Server) bool { return s.Hostname == u.Hostname })
		if i < 0 || !config.ServerEqual(&u, &new.Servers[i]) {
			t.Errorf("upserted server %s is not the new one", u.Hostname)
		}
	}
}

func TestDiff(t *testing.T) {
	web := 1 // index of ns-web-80 in diffBase
	tests := map[string]struct {
		mutate func(c *config.Configuration)
		want   changeSummary
	}{
		"unchanged":     {func(c *config.Configuration) {}, changeSummary{}},
		"problems only": {func(c *config.Configuration) { c.Problems = []config.Problem{{Kind: "Ingress", Reason: "x"}} }, changeSummary{}},
		"endpoint added": {func(c *config.Configuration) {
			c.Backends.At(web).Endpoints = append(c.Backends.At(web).Endpoints, ep("10.0.0.2", 80))
		}, changeSummary{Backends: []string{"ns-web-80"}}},
		"endpoint port changed": {func(c *config.Configuration) {
			c.Backends.At(web).Endpoints = []config.Endpoint{ep("10.0.0.1", 81)}
		}, changeSummary{Backends: []string{"ns-web-80"}}},
		"balancing changed": {func(c *config.Configuration) { c.Backends.At(web).LoadBalance = config.LoadBalanceEWMA },
			changeSummary{Backends: []string{"ns-web-80"}}},
		"affinity changed": {func(c *config.Configuration) { c.Backends.At(web).Affinity = &config.Affinity{CookieName: "x"} },
			changeSummary{Backends: []string{"ns-web-80"}}},
		"hash by changed": {func(c *config.Configuration) { c.Backends.At(0).UpstreamHashBy = "$host" },
			changeSummary{Backends: []string{"ns-api-80"}}},
		"backend added": {func(c *config.Configuration) {
			c.Backends = config.NewBackendList(append(c.Backends.Slice(), ptrs(be("ns", "zzz", "80")).Slice()...))
		},
			changeSummary{Backends: []string{"ns-zzz-80"}}},
		"backend removed": {func(c *config.Configuration) { c.Backends = config.NewBackendList(c.Backends.Slice()[1:]) },
			changeSummary{BackendsRemoved: []string{"ns-api-80"}}},
		"certificate content changed": {func(c *config.Configuration) { c.Certificates[1].Cert = c.Certificates[0].Cert },
			changeSummary{Certs: []string{"ns/cert"}}},
		"certificate hosts changed": {func(c *config.Configuration) { c.Certificates[1].Hosts = []string{"a.com", "b.com"} },
			changeSummary{Certs: []string{"ns/cert"}}},
		"certificate added": {func(c *config.Configuration) {
			c.Certificates = append(c.Certificates, config.Certificate{Name: "ns/new", Hosts: []string{"n.com"}})
		}, changeSummary{Certs: []string{"ns/new"}}},
		"certificate removed": {func(c *config.Configuration) { c.Certificates = c.Certificates[:1] },
			changeSummary{CertsRemoved: []string{"ns/cert"}}},
		// The content of the generated fallback certificate is left out of
		// the checksum on purpose (see TestFallbackCertificateContentNotInChecksum).
		"default certificate content": {func(c *config.Configuration) {
			c.DefaultCertificate = "ns/cert"
			c.Certificates[1].Key = c.Certificates[0].Key
		}, changeSummary{Certs: []string{"ns/cert"}, DefaultCert: "ns/cert"}},
		"default certificate renamed is dynamic": {func(c *config.Configuration) { c.DefaultCertificate = "ns/cert" },
			changeSummary{Certs: []string{"ns/cert"}, DefaultCert: "ns/cert"}},
		"global settings": {func(c *config.Configuration) { c.Global.UpstreamKeepalive = 61 }, reload("global settings changed")},
		// The proxy timeouts and body size act through the routes Build
		// makes (withGlobalDefaults).
		"global proxy timeout alone applies nothing": {func(c *config.Configuration) { c.Global.ProxyReadTimeout = 61 }, changeSummary{}},
		// The default backend reaches the data plane as the catch-all
		// routes that Build points at it.
		"default backend": {func(c *config.Configuration) {
			c.DefaultBackend = "ns-api-80"
			c.Servers[0].Locations[0].Backend = "ns-api-80"
			c.Servers[1].Locations[1].Backend = "ns-api-80"
		}, servers("_", "a.com")},
		"server added":     {func(c *config.Configuration) { c.Servers = append(c.Servers, srv("b.com")) }, servers("b.com")},
		"server removed":   {func(c *config.Configuration) { c.Servers = c.Servers[:1] }, changeSummary{ServersRemoved: []string{"a.com"}}},
		"server tls":       {func(c *config.Configuration) { c.Servers[1].TLS = false }, servers("a.com")},
		"server redirect":  {func(c *config.Configuration) { c.Servers[1].SSLRedirect = false }, servers("a.com")},
		"location backend": {func(c *config.Configuration) { c.Servers[1].Locations[0].Backend = "ns-api-80" }, servers("a.com")},
		"location ingress": {func(c *config.Configuration) { c.Servers[1].Locations[0].Ingress = "ns/other" }, servers("a.com")},
		"location settings": {func(c *config.Configuration) {
			c.Servers[1].Locations[0].Settings.AllowSourceRange = []string{"10.0.0.0/8"}
		},
			servers("a.com")},
		"location redirect": {func(c *config.Configuration) { c.Servers[1].Locations[0].Settings.SSLRedirect = ptr(false) },
			servers("a.com")},
		"location body size": {func(c *config.Configuration) { c.Servers[1].Locations[0].Settings.ProxyBodySize = "1k" },
			servers("a.com")},
		"location added and removed": {func(c *config.Configuration) {
			c.Servers[1].Locations[0] = loc("/y", config.PathExact, "ns-web-80", "ns/ing")
		}, servers("a.com")},
		"path type changed": {func(c *config.Configuration) { c.Servers[1].Locations[0].PathType = config.PathExact }, servers("a.com")},
		"path type regex":   {func(c *config.Configuration) { c.Servers[1].Locations[0].PathType = config.PathRegex }, servers("a.com")},
		"default server changed": {func(c *config.Configuration) {
			c.Servers[0].Locations = append([]config.Location{loc("/z", config.PathPrefix, "ns-web-80", "ns/ing")}, c.Servers[0].Locations...)
		}, servers("_")},
		"servers in hostname order, the default first": {func(c *config.Configuration) {
			c.Servers[0].Locations[0].Backend = "ns-api-80"
			c.Servers = append(c.Servers, srv("b.com"), srv("*.a.com"))
		}, servers("_", "*.a.com", "b.com")},
		"added, changed and removed at once": {func(c *config.Configuration) {
			c.Servers[0].Locations[0].Backend = "ns-web-80"
			c.Servers[1] = srv("c.com")
		}, changeSummary{Servers: []string{"_", "c.com"}, ServersRemoved: []string{"a.com"}}},
		"many servers are all listed": {func(c *config.Configuration) {
			for i := range 12 {
				c.Servers = append(c.Servers, srv(fmt.Sprintf("s%02d.com", i)))
			}
		}, servers("s00.com", "s01.com", "s02.com", "s03.com", "s04.com", "s05.com",
			"s06.com", "s07.com", "s08.com", "s09.com", "s10.com", "s11.com")},
		"reload and dynamic together": {func(c *config.Configuration) {
			c.Global.UpstreamKeepalive = 61
			c.Backends = config.NewBackendList(c.Backends.Slice()[1:])
		}, changeSummary{Reload: true, Reasons: []string{"global settings changed"}, BackendsRemoved: []string{"ns-api-80"}}},
		// ssl-redirect and allow-snippet-annotations act through the routes
		// Build makes, not through nginx.conf.
		"global ssl-redirect is route changes": {func(c *config.Configuration) {
			c.Global.SSLRedirect = false
			c.Servers[1].SSLRedirect = false
		}, servers("a.com")},
		"global snippets alone apply nothing": {func(c *config.Configuration) { c.Global.AllowSnippets = true }, changeSummary{}},
		"unsorted input is handled": {func(c *config.Configuration) {
			c.Servers[0], c.Servers[1] = c.Servers[1], c.Servers[0]
			bs := c.Backends.Slice()
			bs[0], bs[1] = bs[1], bs[0]
			c.Backends = config.NewBackendList(bs)
			c.Certificates[0], c.Certificates[1] = c.Certificates[1], c.Certificates[0]
		}, changeSummary{}},
	}
	// The checksums of these differ although nothing is to apply.
	unequal := map[string]bool{"global snippets alone apply nothing": true, "unsorted input is handled": true,
		"global proxy timeout alone applies nothing": true}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			old, new := diffBase(t), diffBase(t)
			tc.mutate(new)
			ch := config.Diff(old, new)
			check.Equal(t, "change", summarize(ch), tc.want)
			checkUpsertedServers(t, ch, new)
			if ch.Empty() != (tc.want.Reload == false && !ch.Dynamic()) {
				t.Errorf("Empty() = %v, Dynamic() = %v", ch.Empty(), ch.Dynamic())
			}
			if ch.Empty() != (old.Equal(new) || unequal[name]) {
				t.Errorf("Empty() = %v but Equal() = %v", ch.Empty(), old.Equal(new))
			}
		})
	}
}

func TestDiffInitial(t *testing.T) {
	c := diffBase(t)
	ch := config.Diff(nil, c)
	check.Equal(t, "initial", summarize(ch), changeSummary{Reload: true, Reasons: []string{"initial configuration"},
		Servers: []string{"_", "a.com"}, Backends: []string{"ns-api-80", "ns-web-80"}, Certs: []string{"_fallback", "ns/cert"}, DefaultCert: "_fallback"})
	if !config.Diff(c, nil).Empty() {
		t.Error("Diff(c, nil) is not empty")
	}
}

// TestDiffBuilt checks Diff on Configurations from Build, with the stored
// checksums, one store changed step by step: endpoints are a backend
// change only; paths, hosts and the default backend are route table
// changes (the catch-alls of hosts without their own "/"); only global
// settings that nginx.conf holds reload.
func TestDiffBuilt(t *testing.T) {
	base := objs(webService(), one(
		service("default", "api", svcPort("", 80)),
		newIngress("default", "ing", rule("a.example.com", prefix("/", "web", 80)), rule("b.example.com", prefix("/x", "web", 80))),
		newIngress("default", "tls", created(2), tlsFor("", "a.example.com"))))
	steps := []struct {
		name   string
		change runtime.Object
		opts   func(*Options)
		want   changeSummary
	}{
		{name: "endpoints", change: slice("default", "web-1", "web", "", 8080, ready("10.0.0.1"), ready("10.0.0.2")),
			want: changeSummary{Backends: []string{web80}}},
		{name: "exact path added", change: newIngress("default", "ing", rule("a.example.com", prefix("/", "web", 80), exact("/z", "web", 80)),
			rule("b.example.com", prefix("/x", "web", 80))), want: servers("a.example.com")},
		{name: "default backend", change: newIngress("default", "dflt", created(1), defaultBackend("api", 80)),
			want: changeSummary{Servers: []string{"_", "b.example.com"}, Backends: []string{"default-api-80"}}},
		{name: "host removed", change: newIngress("default", "ing", rule("a.example.com", prefix("/", "web", 80), exact("/z", "web", 80))),
			want: changeSummary{ServersRemoved: []string{"b.example.com"}}},
		{name: "a global proxy timeout changes every route", change: fixtures.ConfigMap("ingress", "config", "proxy-read-timeout", "30"),
			opts: func(o *Options) { o.ConfigMap = "ingress/config" }, want: servers("_", "a.example.com")},
		{name: "a global setting of nginx.conf reloads", change: fixtures.ConfigMap("ingress", "config", "proxy-read-timeout", "30", "worker-processes", "2"),
			want: reload("global settings changed")},
		{name: "global ssl-redirect changes the routes of TLS hosts",
			change: fixtures.ConfigMap("ingress", "config", "proxy-read-timeout", "30", "worker-processes", "2", "ssl-redirect", "false"), want: servers("a.example.com")},
	}
	s := newTestStore(t, base...)
	opts := testOptions()
	old := Build(s, opts)
	for _, step := range steps {
		if _, err := s.Apply(upsertEvent(step.change)); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if step.opts != nil {
			step.opts(&opts)
		}
		new := Build(s, opts)
		ch := config.Diff(old, new)
		check.Equal(t, step.name, summarize(ch), step.want)
		checkUpsertedServers(t, ch, new)
		if old.Equal(new) {
			t.Errorf("%s: Equal after a change", step.name)
		}
		old = new
	}
}
