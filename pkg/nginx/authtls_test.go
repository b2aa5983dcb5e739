package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// mtlsWorld is the CAs and client certificates of the client certificate
// tests.
type mtlsWorld struct {
	ca, other, inter                         *mtlsIssuer
	alice, bob, mallory, self, deep, revoked *mtlsCert
	expired                                  *mtlsCert
}

func newMTLSWorld(t testing.TB) *mtlsWorld {
	w := &mtlsWorld{ca: newMTLSIssuer(t, "test client CA", nil), other: newMTLSIssuer(t, "other client CA", nil)}
	w.inter = newMTLSIssuer(t, "test intermediate CA", w.ca)
	inter2 := newMTLSIssuer(t, "test second intermediate CA", w.inter)
	w.alice = w.ca.client(t, "alice", false)
	w.bob = w.ca.client(t, "bob", false)
	w.revoked = w.ca.client(t, "revoked", false)
	w.expired = w.ca.client(t, "expired", true)
	w.mallory = w.other.client(t, "mallory", false)
	w.self = (*mtlsIssuer)(nil).client(t, "self", false)
	// Two intermediates: verify depth 2 (OpenSSL's depth counts the CAs
	// above the certificate but for the trust anchor).
	w.deep = inter2.client(t, "deep", false, inter2, w.inter)
	return w
}

// mtlsIngress is an Ingress of host with the auth-tls annotations given as
// name, value pairs (without the prefix).
func mtlsIngress(name, host string, kv ...string) *networkingv1.Ingress {
	opts := []fixtures.IngressOption{fixtures.Rule(host, fixtures.Prefix("/", "web", 80), fixtures.Prefix("/error", "web", 80))}
	for i := 0; i+1 < len(kv); i += 2 {
		opts = append(opts, ann(kv[i], kv[i+1]))
	}
	return fixtures.Ingress("default", name, opts...)
}

// TestClientCertificates: auth-tls-* through a real nginx, with the facts
// of ingress-nginx's e2e tests (annotations/authtls.go): 400 without or
// with a bad certificate (on), the verification result passed upstream
// (optional, optional_no_ca), the error page's 302, 403 for a CN that does
// not match, the ssl-client-* headers.
func TestClientCertificates(t *testing.T) {
	web := startEcho(t, "web")
	w := newMTLSWorld(t)
	secrets := []*corev1.Secret{
		caSecret("ca", w.ca.pem, nil),
		caSecret("other", w.other.pem, nil),
		caSecret("crl", w.ca.pem, w.ca.crl(t, w.revoked)),
	}
	cfg := buildWithSecrets(t, map[string]int{"web": web.Port()}, secrets, nil,
		mtlsIngress("on", "on.test", "auth-tls-secret", "default/ca", "auth-tls-pass-certificate-to-upstream", "true"),
		mtlsIngress("optional", "optional.test", "auth-tls-secret", "ca", "auth-tls-verify-client", "optional"),
		mtlsIngress("noca", "noca.test", "auth-tls-secret", "ca", "auth-tls-verify-client", "optional_no_ca"),
		mtlsIngress("off", "off.test", "auth-tls-secret", "ca", "auth-tls-verify-client", "off", "auth-tls-verify-depth", "2"),
		mtlsIngress("depth1", "depth1.test", "auth-tls-secret", "ca"),
		mtlsIngress("depth2", "depth2.test", "auth-tls-secret", "ca", "auth-tls-verify-depth", "2"),
		mtlsIngress("errurl", "errurl.test", "auth-tls-secret", "ca", "auth-tls-error-page", "http://errors.test/cert-error"),
		mtlsIngress("errpath", "errpath.test", "auth-tls-secret", "ca", "auth-tls-error-page", "/error"),
		mtlsIngress("cn", "cn.test", "auth-tls-secret", "ca", "auth-tls-match-cn", "CN=(carol|alice)"),
		mtlsIngress("cnbad", "cnbad.test", "auth-tls-secret", "ca", "auth-tls-match-cn", "CN=notgonnamatch"),
		mtlsIngress("crl", "crl.test", "auth-tls-secret", "crl"),
		mtlsIngress("other", "other.test", "auth-tls-secret", "other"),
		fixtures.Ingress("default", "plain", fixtures.Rule("plain.test", fixtures.Prefix("/", "web", 80))),
	)
	h := startNginx(t, cfg, nil)
	tests := []struct {
		name, host, path string
		cert             *mtlsCert
		status           int
		verify, subject  string
	}{
		{"on: valid certificate", "on.test", "/", w.alice, 200, "SUCCESS", "CN=alice"},
		{"on: no certificate", "on.test", "/", nil, 400, "", ""},
		{"on: another CA", "on.test", "/", w.mallory, 400, "", ""},
		{"on: self-signed", "on.test", "/", w.self, 400, "", ""},
		{"on: expired", "on.test", "/", w.expired, 400, "", ""},
		{"optional: valid", "optional.test", "/", w.alice, 200, "SUCCESS", "CN=alice"},
		{"optional: none passes", "optional.test", "/", nil, 200, "NONE", ""},
		{"optional: another CA", "optional.test", "/", w.mallory, 400, "", ""},
		{"optional_no_ca: valid", "noca.test", "/", w.alice, 200, "SUCCESS", "CN=alice"},
		{"optional_no_ca: none", "noca.test", "/", nil, 200, "NONE", ""},
		{"optional_no_ca: another CA passes", "noca.test", "/", w.mallory, 200, "FAILED:", "CN=mallory"},
		{"optional_no_ca: self-signed passes", "noca.test", "/", w.self, 200, "FAILED:", "CN=self"},
		{"optional_no_ca: expired fails", "noca.test", "/", w.expired, 400, "", ""},
		{"off: no certificate asked", "off.test", "/", w.alice, 200, "NONE", ""},
		{"depth 1: two intermediates", "depth1.test", "/", w.deep, 400, "", ""},
		{"depth 2: two intermediates", "depth2.test", "/", w.deep, 200, "SUCCESS", "CN=deep"},
		{"error page URL", "errurl.test", "/x", nil, 302, "", ""},
		{"error page URL, valid certificate", "errurl.test", "/x", w.alice, 200, "SUCCESS", "CN=alice"},
		{"match-cn: matches one option", "cn.test", "/", w.alice, 200, "SUCCESS", "CN=alice"},
		{"match-cn: no match", "cn.test", "/", w.bob, 403, "", ""},
		{"match-cn: no match (e2e)", "cnbad.test", "/", w.alice, 403, "", ""},
		{"crl: revoked", "crl.test", "/", w.revoked, 400, "", ""},
		{"crl: not revoked", "crl.test", "/", w.alice, 200, "SUCCESS", "CN=alice"},
		{"other CA's host", "other.test", "/", w.mallory, 200, "SUCCESS", "CN=mallory"},
		{"host without client certificates", "plain.test", "/", nil, 200, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &mtlsClient{h: h, sni: tc.host, cert: tc.cert}
			r := c.get(t, tc.host, tc.path)
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d", r.Status, tc.status)
			}
			if tc.status != 200 {
				if r.Reply.Backend != "" {
					t.Fatalf("served by %q", r.Reply.Backend)
				}
				return
			}
			got := r.Reply.Headers
			if v := got.Get("Ssl-Client-Verify"); !strings.HasPrefix(v, tc.verify) || tc.verify == "" && v != "" {
				t.Errorf("ssl-client-verify %q, want %q", v, tc.verify)
			}
			if v := got.Get("Ssl-Client-Subject-Dn"); !strings.Contains(v, tc.subject) || tc.subject == "" && v != "" {
				t.Errorf("ssl-client-subject-dn %q, want %q", v, tc.subject)
			}
		})
	}

	t.Run("headers upstream", func(t *testing.T) {
		r := (&mtlsClient{h: h, sni: "on.test", cert: w.alice}).get(t, "on.test", "/")
		hd := r.Reply.Headers
		if v := hd.Get("Ssl-Client-Issuer-Dn"); !strings.Contains(v, "CN=test client CA") {
			t.Errorf("ssl-client-issuer-dn %q", v)
		}
		if v := hd.Get("Ssl-Client-Cert"); !strings.HasPrefix(v, "-----BEGIN%20CERTIFICATE-----%0A") || !strings.HasSuffix(v, "-----END%20CERTIFICATE-----%0A") {
			t.Errorf("ssl-client-cert %q, want the URL-escaped PEM", v)
		}
		// Without pass-certificate-to-upstream, none (not even the client's).
		r = (&mtlsClient{h: h, sni: "optional.test", cert: w.alice}).get(t, "optional.test", "/")
		if v := r.Reply.Headers.Get("Ssl-Client-Cert"); v != "" {
			t.Errorf("ssl-client-cert %q without pass-certificate-to-upstream", v)
		}
	})

	t.Run("error page redirect", func(t *testing.T) {
		r := (&mtlsClient{h: h, sni: "errurl.test"}).get(t, "errurl.test", "/x")
		if loc := r.Header.Get("Location"); loc != "http://errors.test/cert-error" {
			t.Fatalf("Location %q", loc)
		}
	})

	t.Run("error page path is served from the host's routes", func(t *testing.T) {
		r := (&mtlsClient{h: h, sni: "errpath.test"}).get(t, "errpath.test", "/private?q=1")
		if r.Status != 200 || r.Reply.Backend != "web" || r.Reply.Path != "/error" || r.Reply.Query != "" {
			t.Fatalf("status %d from %q for %q?%q, want 200 from web for /error", r.Status, r.Reply.Backend, r.Reply.Path, r.Reply.Query)
		}
		if v := r.Reply.Headers.Get("Ssl-Client-Verify"); v != "NONE" {
			t.Errorf("ssl-client-verify %q", v)
		}
		r = (&mtlsClient{h: h, sni: "errpath.test", cert: w.alice}).get(t, "errpath.test", "/private")
		if r.Status != 200 || r.Reply.Path != "/private" {
			t.Fatalf("valid certificate: status %d for %q", r.Status, r.Reply.Path)
		}
	})

	t.Run("plain HTTP is refused as without a certificate", func(t *testing.T) {
		if r := h.mustGet("http://on.test/"); r.Status != 400 || r.Reply.Backend != "" {
			t.Fatalf("status %d from %q, want 400", r.Status, r.Reply.Backend)
		}
		if r := h.mustGet("http://optional.test/"); r.Status != 200 {
			t.Fatalf("optional: status %d, want 200", r.Status)
		}
	})
}

// TestClientCertificatesOtherSNI: a connection made for one SNI name never
// reaches another host's routes that verify clients: 421 as nginx between
// servers that differ in ssl_verify_client.
func TestClientCertificatesOtherSNI(t *testing.T) {
	web := startEcho(t, "web")
	w := newMTLSWorld(t)
	cfg := buildWithSecrets(t, map[string]int{"web": web.Port()},
		[]*corev1.Secret{caSecret("ca", w.ca.pem, nil), caSecret("other", w.other.pem, nil)}, nil,
		mtlsIngress("on", "on.test", "auth-tls-secret", "ca"),
		mtlsIngress("same", "same.test", "auth-tls-secret", "ca"),
		mtlsIngress("other", "other.test", "auth-tls-secret", "other"),
		mtlsIngress("wild", "*.wild.test", "auth-tls-secret", "ca"),
		fixtures.Ingress("default", "plain", fixtures.Rule("plain.test", fixtures.Prefix("/", "web", 80))),
	)
	h := startNginx(t, cfg, nil)
	tests := []struct {
		name, sni, host string
		cert            *mtlsCert
		status          int
	}{
		{"SNI of a host without client certificates", "plain.test", "on.test", w.alice, 421},
		{"SNI of a host with another CA, its valid certificate", "other.test", "on.test", w.mallory, 421},
		{"SNI of a host with the same settings is still another host", "same.test", "on.test", w.alice, 421},
		{"SNI unknown (the default server)", "unknown.test", "on.test", w.alice, 421},
		{"no SNI: no certificate was asked for", "", "on.test", w.alice, 400},
		{"wildcard host: SNI and Host of one entry", "a.wild.test", "b.wild.test", w.alice, 200},
		{"SNI of a verifying host, Host without: served as nginx", "on.test", "plain.test", w.alice, 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := (&mtlsClient{h: h, sni: tc.sni, cert: tc.cert}).get(t, tc.host, "/")
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d", r.Status, tc.status)
			}
		})
	}
}

// TestClientCertificatesSessionResumption: a TLS session (session cache or
// ticket, TLS 1.2 and 1.3) made for one SNI name is never resumed for a
// host that verifies clients with other settings, so its verification
// cannot be skipped; it is resumed for its own name.
func TestClientCertificatesSessionResumption(t *testing.T) {
	web := startEcho(t, "web")
	w := newMTLSWorld(t)
	for _, tickets := range []bool{false, true} {
		cfg := buildWithSecrets(t, map[string]int{"web": web.Port()},
			[]*corev1.Secret{caSecret("ca", w.ca.pem, nil), caSecret("other", w.other.pem, nil)}, nil,
			mtlsIngress("on", "on.test", "auth-tls-secret", "ca"),
			mtlsIngress("other", "other.test", "auth-tls-secret", "other"),
			fixtures.Ingress("default", "plain", fixtures.Rule("plain.test", fixtures.Prefix("/", "web", 80))),
		)
		cfg.Global.Nginx.SSLSessionTickets = tickets
		h := startNginx(t, cfg, nil)
		for _, v := range []struct {
			name string
			max  uint16
		}{{"TLS 1.3", 0}, {"TLS 1.2", 0x0303}} {
			if v.max != 0 && !tickets {
				continue // Go's client resumes TLS 1.2 sessions from tickets only
			}
			name := v.name + map[bool]string{false: ", session cache", true: ", tickets"}[tickets]
			t.Run(name, func(t *testing.T) {
				cache := &anySessionCache{}
				// A session of other.test, verified against its CA.
				first := &mtlsClient{h: h, sni: "other.test", cert: w.mallory, cache: cache, maxVersion: v.max}
				if r := first.get(t, "other.test", "/"); r.Status != 200 {
					t.Fatalf("other.test: status %d", r.Status)
				}
				again := first.get(t, "other.test", "/")
				if again.Status != 200 || again.TLS == nil || !again.TLS.DidResume {
					t.Fatalf("the session of other.test was not resumed for it (status %d): the test proves nothing", again.Status)
				}
				for _, target := range []string{"on.test", "plain.test"} {
					c := &mtlsClient{h: h, sni: target, cert: w.mallory, cache: cache, maxVersion: v.max}
					r := c.get(t, "on.test", "/")
					if r.TLS != nil && r.TLS.DidResume && target == "on.test" {
						t.Errorf("SNI %s resumed other.test's session", target)
					}
					if r.Status == 200 || r.Reply.Backend != "" {
						t.Fatalf("SNI %s, Host on.test with other.test's session: status %d from %q", target, r.Status, r.Reply.Backend)
					}
				}
			})
		}
		h.stop()
	}
}

// TestClientCertificatesFailClosed: auth-tls annotations that cannot be
// applied close their Ingress's routes (503), never serve them without
// verification; the host's other Ingresses and other hosts are served.
func TestClientCertificatesFailClosed(t *testing.T) {
	web := startEcho(t, "web")
	w := newMTLSWorld(t)
	secrets := []*corev1.Secret{
		caSecret("ca", w.ca.pem, nil),
		authSecret("noca", map[string]string{"tls.crt": string(w.ca.pem)}),
		authSecret("garbage", map[string]string{"ca.crt": "-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n"}),
		caSecret("badcrl", w.ca.pem, w.other.crl(t, w.mallory)),
	}
	cfg := buildWithSecrets(t, map[string]int{"web": web.Port()}, secrets,
		[]string{
			`auth-tls-match-cn="CN=(": is not a valid regular expression`, "ca.crl list 1 is not signed by a certificate of ca.crt",
			"auth-tls-verify-client=\"maybe\": must be on, off, optional or optional_no_ca",
			"auth-tls-secret=other/ca: the Secret must be in the Ingress's namespace default",
			"Secret default/garbage: ca.crt certificate 1: x509: malformed certificate", "Secret default/missing not found",
			`Secret default/noca has no key "ca.crt"`, "Secret default/missing not found; the Ingress's routes answer 503",
		},
		mtlsIngress("missing", "missing.test", "auth-tls-secret", "missing"),
		mtlsIngress("badvalue", "badvalue.test", "auth-tls-secret", "ca", "auth-tls-verify-client", "maybe"),
		mtlsIngress("cross", "cross.test", "auth-tls-secret", "other/ca"),
		mtlsIngress("badcn", "badcn.test", "auth-tls-secret", "ca", "auth-tls-match-cn", "CN=("),
		mtlsIngress("badcrl", "badcrl.test", "auth-tls-secret", "badcrl"),
		mtlsIngress("garbage", "garbage.test", "auth-tls-secret", "garbage"),
		mtlsIngress("noca", "noca.test", "auth-tls-secret", "noca"),
		fixtures.Ingress("default", "open", fixtures.Rule("shared.test", fixtures.Prefix("/open", "web", 80))),
		mtlsIngress("shared", "shared.test", "auth-tls-secret", "missing"),
		fixtures.Ingress("default", "plain", fixtures.Rule("plain.test", fixtures.Prefix("/", "web", 80))),
	)
	h := startNginx(t, cfg, nil)
	for _, host := range []string{"missing.test", "badvalue.test", "cross.test", "badcn.test", "badcrl.test", "garbage.test", "noca.test", "shared.test"} {
		t.Run(host, func(t *testing.T) {
			for _, path := range []string{"/", "/error"} {
				r := (&mtlsClient{h: h, sni: host, cert: w.alice}).get(t, host, path)
				if r.Status != 503 || r.Reply.Backend != "" {
					t.Fatalf("%s: status %d from %q, want 503", path, r.Status, r.Reply.Backend)
				}
				if r := h.mustGet("http://" + host + path); r.Status != 503 {
					t.Fatalf("plain HTTP %s: status %d, want 503", path, r.Status)
				}
			}
		})
	}
	t.Run("the host's other Ingress and other hosts are served", func(t *testing.T) {
		if r := (&mtlsClient{h: h, sni: "shared.test"}).get(t, "shared.test", "/open"); r.Status != 200 {
			t.Fatalf("shared.test/open: status %d", r.Status)
		}
		if r := (&mtlsClient{h: h, sni: "plain.test"}).get(t, "plain.test", "/"); r.Status != 200 {
			t.Fatalf("status %d", r.Status)
		}
	})
}

// TestClientCertificatesSharedHost: client certificate authentication is
// per host: an older Ingress's paths without auth-tls annotations are
// verified too (ingress-nginx's server-level ssl_verify_client).
func TestClientCertificatesSharedHost(t *testing.T) {
	web := startEcho(t, "web")
	w := newMTLSWorld(t)
	cfg := buildWithSecrets(t, map[string]int{"web": web.Port()}, []*corev1.Secret{caSecret("ca", w.ca.pem, nil)}, nil,
		fixtures.Ingress("default", "a-open", fixtures.Rule("shared.test", fixtures.Prefix("/open", "web", 80))),
		mtlsIngress("b-mtls", "shared.test", "auth-tls-secret", "ca"),
	)
	h := startNginx(t, cfg, nil)
	for _, path := range []string{"/", "/open", "/nothing-here"} {
		if r := (&mtlsClient{h: h, sni: "shared.test"}).get(t, "shared.test", path); r.Status != 400 {
			t.Errorf("%s without a certificate: status %d, want 400", path, r.Status)
		}
		if r := (&mtlsClient{h: h, sni: "shared.test", cert: w.alice}).get(t, "shared.test", path); r.Status != 200 && path != "/nothing-here" {
			t.Errorf("%s with a certificate: status %d, want 200", path, r.Status)
		}
	}
}

// TestClientCertificatesWithoutReload: a CA that changes is applied to new
// handshakes and to connections already open (421: the client reconnects
// and is verified against the new CA), without a reload.
func TestClientCertificatesWithoutReload(t *testing.T) {
	web := startEcho(t, "web")
	w := newMTLSWorld(t)
	ing := mtlsIngress("on", "on.test", "auth-tls-secret", "ca")
	cfg := buildWithSecrets(t, map[string]int{"web": web.Port()}, []*corev1.Secret{caSecret("ca", w.ca.pem, nil)}, nil, ing)
	h := startNginx(t, cfg, nil)
	workers := workerPIDs(t, h.proc.Pid())
	kept := &mtlsClient{h: h, sni: "on.test", cert: w.alice, keep: true}
	if r := kept.get(t, "on.test", "/"); r.Status != 200 {
		t.Fatalf("status %d", r.Status)
	}
	next := buildWithSecrets(t, map[string]int{"web": web.Port()}, []*corev1.Secret{caSecret("ca", w.other.pem, nil)}, nil, ing)
	if err := h.update(t.Context(), config.Diff(cfg, next)); err != nil {
		t.Fatal(err)
	}
	if r := kept.get(t, "on.test", "/"); r.Status != 421 {
		t.Fatalf("open connection verified against the old CA: status %d, want 421", r.Status)
	}
	if r := (&mtlsClient{h: h, sni: "on.test", cert: w.alice}).get(t, "on.test", "/"); r.Status != 400 {
		t.Fatalf("old CA's client: status %d, want 400", r.Status)
	}
	if r := (&mtlsClient{h: h, sni: "on.test", cert: w.mallory}).get(t, "on.test", "/"); r.Status != 200 {
		t.Fatalf("new CA's client: status %d, want 200", r.Status)
	}
	checkNotReloaded(t, h, workers)
}

// TestClientCertificatesHTTP2: over HTTP/2 the verification and the
// headers are the same, and a request for another host on the connection
// (connection coalescing) answers 421, which makes clients open a
// connection of its own.
func TestClientCertificatesHTTP2(t *testing.T) {
	web := startEcho(t, "web")
	w := newMTLSWorld(t)
	cfg := buildWithSecrets(t, map[string]int{"web": web.Port()}, []*corev1.Secret{caSecret("ca", w.ca.pem, nil)}, nil,
		mtlsIngress("on", "on.test", "auth-tls-secret", "ca"),
		mtlsIngress("same", "same.test", "auth-tls-secret", "ca"),
	)
	h := startNginx(t, cfg, nil)
	c := &mtlsClient{h: h, sni: "on.test", cert: w.alice, keep: true, h2: true}
	r := c.get(t, "on.test", "/")
	if r.TLS == nil || r.TLS.NegotiatedProtocol != "h2" {
		t.Fatalf("not HTTP/2: %+v", r.TLS)
	}
	if r.Status != 200 || r.Reply.Headers.Get("Ssl-Client-Verify") != "SUCCESS" {
		t.Fatalf("status %d, ssl-client-verify %q", r.Status, r.Reply.Headers.Get("Ssl-Client-Verify"))
	}
	if r := c.get(t, "same.test", "/"); r.Status != 421 {
		t.Fatalf("another host on the connection: status %d, want 421", r.Status)
	}
	if r := (&mtlsClient{h: h, sni: "on.test", h2: true}).get(t, "on.test", "/"); r.Status != 400 {
		t.Fatalf("no certificate: status %d, want 400", r.Status)
	}
}

// TestClientCertificatesRefusedHost: a host whose clientAuth Lua cannot
// take (Build never emits one: a CA that is no PEM certificate) is refused
// by the configuration endpoint and answers 503, over TLS too; other
// hosts are served.
func TestClientCertificatesRefusedHost(t *testing.T) {
	app := startEcho(t, "app")
	bad := serverOf("bad.test", prefixLoc("/", "app"))
	bad.ClientAuth = &config.ClientAuth{Ingress: "default/bad", CA: "not a certificate", Verify: "on", Depth: 1}
	cfg := configOf("refuse-ca", []config.Server{serverOf("good.test", prefixLoc("/", "app")), bad}, backendOf("app", app))
	h := startNginx(t, cfg, nil)
	h.allowLuaErrors = true
	for url, want := range map[string]int{"http://good.test/": 200, "http://bad.test/": 503, "https://bad.test/": 503, "https://good.test/": 200} {
		if r := h.mustGet(url); r.Status != want {
			t.Errorf("GET %s = %d, want %d", url, r.Status, want)
		}
	}
}

// TestClientCertificatesWithTLSSecret: one kubernetes.io/tls Secret with
// tls.crt, tls.key and ca.crt serves the host's certificate and verifies
// its clients (a common ingress-nginx setup); plain HTTP is redirected to
// HTTPS first (ssl-redirect of a TLS host).
func TestClientCertificatesWithTLSSecret(t *testing.T) {
	web := startEcho(t, "web")
	w := newMTLSWorld(t)
	serverCA := newTestCA(t)
	pair, err := certs.Generate(certs.Options{Hosts: []string{"both.test"}, Validity: 24 * time.Hour, Parent: serverCA.ca.Cert, ParentKey: serverCA.ca.Key})
	if err != nil {
		t.Fatal(err)
	}
	secret := fixtures.TLSSecret("default", "both", pair)
	secret.Data["ca.crt"] = w.ca.pem
	ing := mtlsIngress("both", "both.test", "auth-tls-secret", "both")
	fixtures.TLS("both", "both.test")(ing)
	cfg := buildWithSecrets(t, map[string]int{"web": web.Port()}, []*corev1.Secret{secret}, nil, ing)
	h := startNginx(t, cfg, nil)
	if serial, err := h.served(serverCA, "both.test", "both.test"); err != nil || serial != pair.Cert.SerialNumber.String() {
		t.Fatalf("served certificate %s, %v; want the host's", serial, err)
	}
	if r := (&mtlsClient{h: h, sni: "both.test", cert: w.alice}).get(t, "both.test", "/"); r.Status != 200 || r.Reply.Headers.Get("Ssl-Client-Verify") != "SUCCESS" {
		t.Fatalf("valid certificate: status %d", r.Status)
	}
	if r := (&mtlsClient{h: h, sni: "both.test"}).get(t, "both.test", "/"); r.Status != 400 {
		t.Fatalf("no certificate: status %d, want 400", r.Status)
	}
	if r := h.mustGet("http://both.test/x"); r.Status != 308 {
		t.Fatalf("plain HTTP: status %d, want the HTTPS redirect (308)", r.Status)
	}
}
