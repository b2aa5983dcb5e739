package model

import (
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"

	"github.com/ingress-sync/ingress-sync/test/testkit/check"

	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"encoding/pem"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

func TestParseProxySSLValues(t *testing.T) {
	tests := []struct {
		name, value, want, err string
		parse                  func(string) (string, error)
	}{
		{"protocols sorted and unique", "TLSv1.3 TLSv1.2  TLSv1.3", "TLSv1.2 TLSv1.3", "", config.ParseProxySSLProtocols},
		{"protocols one", "TLSv1.3", "TLSv1.3", "", config.ParseProxySSLProtocols},
		{"protocols of ingress-nginx's e2e test", "TLSv1.2 TLSv1.3", "TLSv1.2 TLSv1.3", "", config.ParseProxySSLProtocols},
		{"protocols old version", "TLSv1.1 TLSv1.2", "", "TLSv1.2 and/or TLSv1.3", config.ParseProxySSLProtocols},
		{"protocols empty", " ", "", "must name", config.ParseProxySSLProtocols},
		{"protocols injection", "TLSv1.2;", "", "TLSv1.2 and/or", config.ParseProxySSLProtocols},
		{"ciphers keywords", "HIGH:!aNULL:!MD5", "HIGH:!aNULL:!MD5", "", config.ParseProxySSLCiphers},
		{"ciphers names and +", "ECDHE-RSA-AES128-GCM-SHA256:ECDHE+AESGCM:+AES256:@STRENGTH:@SECLEVEL=2", "ECDHE-RSA-AES128-GCM-SHA256:ECDHE+AESGCM:+AES256:@STRENGTH:@SECLEVEL=2", "", config.ParseProxySSLCiphers},
		{"ciphers removing RC4", "DEFAULT:!RC4:-3DES", "DEFAULT:!RC4:-3DES", "", config.ParseProxySSLCiphers},
		{"ciphers of ingress-nginx's e2e test", "HIGH:!AES", "HIGH:!AES", "", config.ParseProxySSLCiphers},
		{"ciphers adding RC4 only", "RC4", "", "not an OpenSSL cipher", config.ParseProxySSLCiphers},
		{"ciphers removing only", "!aNULL:-MD5", "", "adds no cipher", config.ParseProxySSLCiphers},
		{"ciphers unknown", "HIGH:FOO", "", `"FOO" is not`, config.ParseProxySSLCiphers},
		{"ciphers space", "HIGH !MD5", "", "is not", config.ParseProxySSLCiphers},
		{"ciphers injection", "HIGH;include", "", "is not", config.ParseProxySSLCiphers},
		{"ciphers empty element", "HIGH::MD5", "", "is not", config.ParseProxySSLCiphers},
		{"ciphers seclevel 9", "HIGH:@SECLEVEL=9", "", "is not", config.ParseProxySSLCiphers},
		{"name lower-cased", "Backend.Example.com", "backend.example.com", "", config.ParseProxySSLName},
		{"name with a variable", "$host", "", "DNS name", config.ParseProxySSLName},
		{"name wildcard", "*.example.com", "", "DNS name", config.ParseProxySSLName},
		{"name empty label", "a..b", "", "DNS name", config.ParseProxySSLName},
		{"name leading hyphen", "-a.b", "", "DNS name", config.ParseProxySSLName},
		{"name long label", strings.Repeat("a", 64) + ".b", "", "DNS name", config.ParseProxySSLName},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.parse(tc.value)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %q, %v; want error %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	for v, want := range map[string]int{"0": 1, "1": 1, "3": 3, "100": 100, "101": -1, "-1": -1, "+2": -1, "x": -1} {
		got, err := ingress.ParseProxySSLVerifyDepth(v)
		if want < 0 && err == nil || want >= 0 && (err != nil || got != want) {
			t.Errorf("verify depth %q: %d, %v; want %d", v, got, err, want)
		}
	}
}

// proxySSLSecret returns an Opaque Secret with the given keys of the test
// pair "example": "ca.crt" (its certificate as a CA), "tls.crt", "tls.key".
func proxySSLSecret(t *testing.T, name string, keys ...string) runtime.Object {
	var kv []string
	for _, k := range keys {
		switch k {
		case "ca.crt":
			kv = append(kv, k, string(testdata(t, "example.crt")))
		case "tls.crt":
			kv = append(kv, k, string(testdata(t, "other.crt")))
		case "tls.key":
			kv = append(kv, k, string(testdata(t, "other.key")))
		default: // "key=value"
			key, v, _ := strings.Cut(k, "=")
			kv = append(kv, key, v)
		}
	}
	return opaqueSecret("default", name, kv...)
}

// TestProxySSLAnnotations: the profile and ProxySSL of an Ingress's
// locations, and fail closed.
func TestProxySSLAnnotations(t *testing.T) {
	secret := func(v string) ingOpt { return nginx("proxy-ssl-secret", v) }
	down := &config.ProxySSL{Unavailable: true}
	ca := proxySSLSecret(t, "ca", "ca.crt")
	full := proxySSLSecret(t, "full", "ca.crt", "tls.crt", "tls.key")
	tests := []struct {
		name     string
		opts     []ingOpt
		secrets  []runtime.Object
		want     *config.ProxySSL
		profile  *config.UpstreamTLS // Name, CA, Cert and Key not compared
		problems []string
	}{
		{"none", nil, nil, nil, nil, nil},
		{"CA, defaults", []ingOpt{secret("default/ca")}, []runtime.Object{ca}, &config.ProxySSL{},
			&config.UpstreamTLS{VerifyDepth: 1, Protocols: "TLSv1.2", Ciphers: "DEFAULT"}, nil},
		{"everything", []ingOpt{secret("full"), nginx("proxy-ssl-verify", "on"), nginx("proxy-ssl-verify-depth", "2"),
			nginx("proxy-ssl-name", "b.example.com"), nginx("proxy-ssl-server-name", "on"),
			nginx("proxy-ssl-protocols", "TLSv1.3"), nginx("proxy-ssl-ciphers", "HIGH:!aNULL")}, []runtime.Object{full},
			&config.ProxySSL{Name: "b.example.com"},
			&config.UpstreamTLS{Verify: true, VerifyDepth: 2, Protocols: "TLSv1.3", Ciphers: "HIGH:!aNULL", ServerName: true, PeerName: "b.example.com"}, nil},
		{"client certificate only", []ingOpt{secret("c")}, []runtime.Object{proxySSLSecret(t, "c", "tls.crt", "tls.key")},
			&config.ProxySSL{}, &config.UpstreamTLS{VerifyDepth: 1, Protocols: "TLSv1.2", Ciphers: "DEFAULT"}, nil},
		{"verify without a Secret", []ingOpt{nginx("proxy-ssl-verify", "on")}, nil, down, nil,
			[]string{"proxy-ssl-verify=on without proxy-ssl-secret (no CA to verify with); the Ingress's routes answer 503"}},
		{"name without a Secret: ignored", []ingOpt{nginx("proxy-ssl-name", "b.example.com")}, nil, nil, nil,
			[]string{"need nginx.ingress.kubernetes.io/proxy-ssl-secret; ignored"}},
		{"missing Secret", []ingOpt{secret("ca")}, nil, down, nil, []string{"Secret default/ca not found; the Ingress's routes answer 503"}},
		{"verify without ca.crt", []ingOpt{secret("c"), nginx("proxy-ssl-verify", "on")},
			[]runtime.Object{proxySSLSecret(t, "c", "tls.crt", "tls.key")}, down, nil, []string{"Secret default/c has no ca.crt"}},
		{"Secret with nothing usable", []ingOpt{secret("x")}, []runtime.Object{proxySSLSecret(t, "x", "auth=x")}, down, nil,
			[]string{"has neither ca.crt nor tls.crt"}},
		{"bad ca.crt", []ingOpt{secret("x")}, []runtime.Object{proxySSLSecret(t, "x", "ca.crt=junk")}, down, nil, []string{"ca.crt holds no PEM certificate"}},
		{"tls.crt without tls.key", []ingOpt{secret("x")}, []runtime.Object{proxySSLSecret(t, "x", "ca.crt", "tls.crt")}, down, nil,
			[]string{"only one of tls.crt and tls.key"}},
		{"another namespace", []ingOpt{secret("other/ca")}, nil, down, nil, []string{"must be in the Ingress's namespace default"}},
		{"invalid verify", []ingOpt{secret("ca"), nginx("proxy-ssl-verify", "true")}, []runtime.Object{ca}, down, nil, []string{"must be on or off"}},
		{"invalid protocols", []ingOpt{secret("ca"), nginx("proxy-ssl-protocols", "SSLv3")}, []runtime.Object{ca}, down, nil, []string{"TLSv1.2 and/or"}},
		{"invalid ciphers", []ingOpt{secret("ca"), nginx("proxy-ssl-ciphers", "X")}, []runtime.Object{ca}, down, nil, []string{"not an OpenSSL"}},
		{"invalid value without a Secret", []ingOpt{nginx("proxy-ssl-verify-depth", "x")}, nil, down, nil, []string{"proxy-ssl-verify-depth"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := append([]ingOpt{rule("a.example.com", prefix("/", "web", 80))}, tc.opts...)
			objs := append([]runtime.Object{newIngress("default", "web", opts...), service("default", "web", svcPort("http", 80))}, tc.secrets...)
			cfg := Build(newTestStore(t, objs...), testOptions())
			checkProblems(t, cfg.Problems, tc.problems)
			l := locationOf(t, cfg, "a.example.com", "default/web")
			if tc.profile == nil {
				check.Equal(t, "ProxySSL", l.Settings.ProxySSL, tc.want)
				check.Equal(t, "UpstreamTLS", len(cfg.UpstreamTLS), 0)
				return
			}
			if len(cfg.UpstreamTLS) != 1 {
				t.Fatalf("%d profiles, want 1", len(cfg.UpstreamTLS))
			}
			p := cfg.UpstreamTLS[0]
			want := *tc.want
			want.Profile = p.Name
			check.Equal(t, "ProxySSL", l.Settings.ProxySSL, &want)
			got := p
			got.Name, got.CA, got.Cert, got.Key = "", nil, nil, nil
			check.Equal(t, "profile", &got, tc.profile)
			for _, pemData := range [][]byte{p.CA, p.Cert, p.Key} {
				if pemData != nil {
					if b, _ := pem.Decode(pemData); b == nil {
						t.Errorf("profile file is not PEM: %q", pemData)
					}
				}
			}
		})
	}
}

func locationOf(t *testing.T, cfg *config.Configuration, host, ing string) config.Location {
	t.Helper()
	i := slices.IndexFunc(cfg.Servers, func(s config.Server) bool { return s.Hostname == host })
	if i < 0 {
		t.Fatalf("no server %s", host)
	}
	for _, l := range cfg.Servers[i].Locations {
		if l.Ingress == ing {
			return l
		}
	}
	t.Fatalf("no location of %s on %s", ing, host)
	return config.Location{}
}

// TestProxySSLProfiles: Ingresses with the same settings share one
// profile, the bound fails the youngest closed, and the host's other
// locations take the oldest CA profile unless proxy-ssl-location-only.
func TestProxySSLProfiles(t *testing.T) {
	ca := proxySSLSecret(t, "ca", "ca.crt")
	ca2 := proxySSLSecret(t, "ca2", "ca.crt")
	cert := proxySSLSecret(t, "cert", "tls.crt", "tls.key")
	ing := func(name, host, path string, age int, opts ...ingOpt) runtime.Object {
		return newIngress("default", name, append([]ingOpt{created(age), rule(host, prefix(path, "web", 80))}, opts...)...)
	}
	sec := func(s string) ingOpt { return nginx("proxy-ssl-secret", s) }
	objs := []runtime.Object{service("default", "web", svcPort("http", 80)), ca, ca2, cert,
		ing("a", "a.example.com", "/a", 1, sec("ca"), nginx("proxy-ssl-name", "a.example.com")),
		ing("b", "b.example.com", "/b", 2, sec("ca2")), // same CA content: same profile
		ing("c", "a.example.com", "/c", 3),             // takes a's profile (server level)
		ing("d", "c.example.com", "/d", 4, sec("ca"), nginx("proxy-ssl-verify", "on")),
		ing("e", "c.example.com", "/e", 5, sec("cert")),
		newIngress("other", "f", created(6), rule("a.example.com", prefix("/f", "web", 80))),
		service("other", "web", svcPort("http", 80)),
	}
	opts := testOptions()
	opts.MaxUpstreamTLSProfiles = 2
	cfg := Build(newTestStore(t, objs...), opts)
	checkProblems(t, cfg.Problems, []string{"more than 2 distinct backend TLS profiles"})
	if len(cfg.UpstreamTLS) != 2 {
		t.Fatalf("profiles %v, want 2", cfg.UpstreamTLS)
	}
	pa := locationOf(t, cfg, "a.example.com", "default/a").Settings.ProxySSL
	check.Equal(t, "a", pa, &config.ProxySSL{Profile: pa.Profile, Name: "a.example.com"})
	check.Equal(t, "b", locationOf(t, cfg, "b.example.com", "default/b").Settings.ProxySSL, &config.ProxySSL{Profile: pa.Profile})
	check.Equal(t, "c inherits a", locationOf(t, cfg, "a.example.com", "default/c").Settings.ProxySSL, pa)
	check.Equal(t, "the catch-all does not inherit", locationOf(t, cfg, "a.example.com", "").Settings.ProxySSL, (*config.ProxySSL)(nil))
	check.Equal(t, "another namespace does not inherit", locationOf(t, cfg, "a.example.com", "other/f").Settings.ProxySSL, (*config.ProxySSL)(nil))
	pd := locationOf(t, cfg, "c.example.com", "default/d").Settings.ProxySSL
	if pd.Profile == pa.Profile || pd.Profile == "" {
		t.Fatalf("d's profile %q, a's %q", pd.Profile, pa.Profile)
	}
	check.Equal(t, "e beyond the bound", locationOf(t, cfg, "c.example.com", "default/e").Settings.ProxySSL, &config.ProxySSL{Unavailable: true})

	objs = append(objs, fixtures.ConfigMap("ingress", "cfg", "proxy-ssl-location-only", "true"))
	opts.ConfigMap = "ingress/cfg"
	cfg = Build(newTestStore(t, objs...), opts)
	check.Equal(t, "location only: c", locationOf(t, cfg, "a.example.com", "default/c").Settings.ProxySSL, (*config.ProxySSL)(nil))
	check.Equal(t, "location only: a", locationOf(t, cfg, "a.example.com", "default/a").Settings.ProxySSL, pa)
}

// FuzzProxySSLValues: an accepted protocols, ciphers or name value holds
// only the characters of its constants (nothing that ends an nginx
// directive, quotes or expands a variable).
func FuzzProxySSLValues(f *testing.F) {
	for _, s := range []string{"TLSv1.2 TLSv1.3", "HIGH:!aNULL:+AES:@SECLEVEL=1", "a.example.com", "x;y", "$host", "ECDHE+AESGCM"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		for name, parse := range map[string]func(string) (string, error){
			"protocols": config.ParseProxySSLProtocols, "ciphers": config.ParseProxySSLCiphers, "name": config.ParseProxySSLName,
		} {
			got, err := parse(v)
			if err != nil {
				continue
			}
			allowed := "abcdefghijklmnopqrstuvwxyz0123456789.-"
			switch name {
			case "protocols":
				allowed = "TLSv1.23 "
			case "ciphers":
				allowed = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.-+!:@="
			}
			if got == "" || strings.Trim(got, allowed) != "" || len(got) > 1024 {
				t.Fatalf("%s accepted %q as %q", name, v, got)
			}
		}
	})
}

// FuzzCAPEM: accepted CA data re-encodes to certificates only.
func FuzzCAPEM(f *testing.F) {
	f.Add([]byte("-----BEGIN CERTIFICATE-----\nMA==\n-----END CERTIFICATE-----\n"))
	f.Add([]byte("junk"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := intent.ParseCAPEM(data)
		if err != nil {
			return
		}
		for rest := out; len(rest) > 0; {
			var b *pem.Block
			b, rest = pem.Decode(rest)
			if b == nil || b.Type != "CERTIFICATE" || len(b.Headers) > 0 {
				t.Fatalf("re-encoded %q", out)
			}
		}
	})
}

// proxySSL: what lua/router.lua takes as upstreamTLS: a profile of the
// Configuration and a DNS name (its PeerName when the profile verifies or
// sends one), or unavailable alone.
func (c *contract) proxySSL(where string, p *config.ProxySSL) {
	if p == nil {
		return
	}
	i := slices.IndexFunc(c.cfg.UpstreamTLS, func(u config.UpstreamTLS) bool { return u.Name == p.Profile })
	_, nameErr := config.ParseProxySSLName(p.Name)
	u := config.UpstreamTLS{}
	if i >= 0 {
		u = c.cfg.UpstreamTLS[i]
	}
	sni := (u.Verify || u.ServerName) && u.PeerName != p.Name
	if p.Unavailable && (p.Profile != "" || p.Name != "") || !p.Unavailable && (i < 0 || sni || p.Name != "" && nameErr != nil) {
		c.fail("%s: proxy SSL %+v", where, *p)
	}
}
