package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// Headers a TLS backend adds to its reply.
const (
	seenSNI    = "X-Seen-Sni"
	seenClient = "X-Seen-Client"
)

// testPKI is a CA, a server certificate for backend.test signed by it, a
// client certificate signed by it, and another CA.
type testPKI struct {
	ca, other, server, client *certs.Pair
}

func newTestPKI(t testing.TB) *testPKI {
	t.Helper()
	gen := func(o certs.Options) *certs.Pair {
		p, err := certs.Generate(o)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	ca := gen(certs.Options{CommonName: "test CA", IsCA: true})
	return &testPKI{
		ca:     ca,
		other:  gen(certs.Options{CommonName: "other CA", IsCA: true}),
		server: gen(certs.Options{Hosts: []string{"backend.test"}, Parent: ca.Cert, ParentKey: ca.Key}),
		client: gen(certs.Options{CommonName: "ingress client", Parent: ca.Cert, ParentKey: ca.Key}),
	}
}

// tlsBackend is an HTTPS backend on 127.0.0.1 with the server
// certificate (with chain, leaf and intermediate): it answers a reflector
// reply (a gRPC one with grpc, over HTTP/2) with the SNI name it got and
// the common name of the client certificate (verified against the CA),
// which it requires with requireClient; minVersion 0 is TLS 1.2.
type tlsBackend struct {
	name          string
	requireClient bool
	minVersion    uint16
	grpc          bool
	chain         []*certs.Pair
}

func (b tlsBackend) start(t testing.TB, pki *testPKI) int {
	t.Helper()
	chain := b.chain
	if chain == nil {
		chain = []*certs.Pair{pki.server}
	}
	pair := tls.Certificate{PrivateKey: chain[0].Key, Leaf: chain[0].Cert}
	for _, c := range chain {
		pair.Certificate = append(pair.Certificate, c.Cert.Raw)
	}
	roots := x509.NewCertPool()
	roots.AddCert(pki.ca.Cert)
	cfg := &tls.Config{
		Certificates: []tls.Certificate{pair},
		MinVersion:   max(b.minVersion, tls.VersionTLS12),
		ClientAuth:   tls.RequestClientCert,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				if b.requireClient {
					return errors.New("client certificate required")
				}
				return nil
			}
			c, err := x509.ParseCertificate(raw[0])
			if err != nil {
				return err
			}
			_, err = c.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
			return err
		},
	}
	inner := reflector(b.name)
	if b.grpc {
		inner = grpcReflector(b.name)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set(seenSNI, r.TLS.ServerName)
		if len(r.TLS.PeerCertificates) > 0 {
			r.Header.Set(seenClient, r.TLS.PeerCertificates[0].Subject.CommonName)
		}
		inner.ServeHTTP(w, r)
	}))
	srv.TLS, srv.EnableHTTP2 = cfg, b.grpc
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().(*net.TCPAddr).Port
}

// pkiSecret is a Secret holding what keys name: "ca" (ca.crt of the test
// CA), "other" (ca.crt of the other CA), "client" (tls.crt and tls.key).
func (p *testPKI) secret(name string, keys ...string) *corev1.Secret {
	data := map[string]string{}
	for _, k := range keys {
		switch k {
		case "ca":
			data["ca.crt"] = string(p.ca.CertPEM)
		case "other":
			data["ca.crt"] = string(p.other.CertPEM)
		case "client":
			data["tls.crt"], data["tls.key"] = string(p.client.CertPEM), string(p.client.KeyPEM)
		}
	}
	return authSecret(name, data)
}

// httpsIngress routes host to svc over HTTPS with the proxy-ssl-*
// annotations kv (name, value pairs).
func httpsIngress(name, host, svc string, kv ...string) *networkingv1.Ingress {
	opts := []fixtures.IngressOption{ann("backend-protocol", "HTTPS"), fixtures.Rule(host, fixtures.Prefix("/", svc, 80))}
	for i := 0; i+1 < len(kv); i += 2 {
		opts = append(opts, ann("proxy-ssl-"+kv[i], kv[i+1]))
	}
	return fixtures.Ingress("default", name, opts...)
}

// TestProxySSL: backend TLS as ingress-nginx's e2e tests
// (annotations/proxyssl.go) and nginx's proxy_ssl_* describe it, against
// in-process HTTPS backends, and fail closed.
func TestProxySSL(t *testing.T) {
	pki := newTestPKI(t)
	web := tlsBackend{name: "web"}.start(t, pki)
	mtls := tlsBackend{name: "mtls", requireClient: true}.start(t, pki)
	tls13 := tlsBackend{name: "tls13", minVersion: tls.VersionTLS13}.start(t, pki)
	verify := []string{"verify", "on", "name", "backend.test", "server-name", "on"}
	cfg := buildWithSecrets(t, map[string]int{"web": web, "mtls": mtls, "tls13": tls13},
		[]*corev1.Secret{pki.secret("ca", "ca"), pki.secret("other", "other"), pki.secret("client", "ca", "client"), pki.secret("certonly", "client")},
		[]string{"proxy-ssl-protocols", "Secret default/missing not found", "Secret default/certonly has no ca.crt"},
		httpsIngress("good", "good.test", "web", append([]string{"secret", "default/ca"}, verify...)...),
		httpsIngress("nosni", "nosni.test", "web", "secret", "ca", "verify", "on", "name", "backend.test"),
		httpsIngress("noname", "noname.test", "web", "secret", "ca", "verify", "on"),
		httpsIngress("wrongca", "wrongca.test", "web", append([]string{"secret", "other"}, verify...)...),
		httpsIngress("client", "client.test", "mtls", append([]string{"secret", "client"}, verify...)...),
		httpsIngress("noclient", "noclient.test", "mtls", append([]string{"secret", "ca"}, verify...)...),
		httpsIngress("certonly", "certonly.test", "mtls", "secret", "certonly"),
		httpsIngress("tls12", "tls12.test", "tls13", append([]string{"secret", "ca", "protocols", "TLSv1.2"}, verify...)...),
		httpsIngress("tls13", "tls13.test", "tls13", append([]string{"secret", "ca", "protocols", "TLSv1.3", "ciphers", "HIGH:!aNULL"}, verify...)...),
		httpsIngress("plain", "plain.test", "web"),
		httpsIngress("one", "one.test", "web", "secret", "ca", "server-name", "on", "name", "one.test"),
		httpsIngress("two", "two.test", "web", "secret", "ca", "server-name", "on", "name", "two.test"),
		httpsIngress("zmissing", "missing.test", "web", append([]string{"secret", "missing"}, verify...)...),
		httpsIngress("znoca", "noca.test", "mtls", append([]string{"secret", "certonly"}, verify...)...),
		httpsIngress("zbadproto", "badproto.test", "web", append([]string{"secret", "ca", "protocols", "TLSv1.1"}, verify...)...),
	)
	// One worker: every request may reuse the kept-alive connections of
	// the one before.
	h := startNginx(t, cfg, func(o *Options) { o.WorkerProcesses = 1 })
	h.allowLuaErrors = true // nginx logs the refused handshakes to "upstream_balancer"
	tests := []struct {
		name, host      string
		status          int
		sni, clientName string
	}{
		{"verified, with SNI", "good.test", 200, "backend.test", ""},
		{"verified, without SNI", "nosni.test", 200, "", ""},
		{"default name upstream_balancer is not the certificate's: 502", "noname.test", 502, "", ""},
		{"another CA: 502", "wrongca.test", 502, "", ""},
		{"client certificate presented", "client.test", 200, "backend.test", "ingress client"},
		{"no client certificate: the backend refuses, 502", "noclient.test", 502, "", ""},
		{"client certificate without verification", "certonly.test", 200, "", "ingress client"},
		{"TLSv1.2 only to a TLSv1.3 backend: 502", "tls12.test", 502, "", ""},
		{"TLSv1.3", "tls13.test", 200, "backend.test", ""},
		{"no proxy-ssl: unverified, as before", "plain.test", 200, "", ""},
		{"missing Secret: 503", "missing.test", 503, "", ""},
		{"verify on without ca.crt: 503", "noca.test", 503, "", ""},
		{"invalid protocols: 503", "badproto.test", 503, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := h.mustGet("http://" + tc.host + "/")
			if r.Status != tc.status {
				t.Fatalf("status %d, want %d", r.Status, tc.status)
			}
			if tc.status != 200 {
				return
			}
			if got := r.Reply.Headers.Get(seenSNI); got != tc.sni {
				t.Errorf("backend saw SNI %q, want %q", got, tc.sni)
			}
			if got := r.Reply.Headers.Get(seenClient); got != tc.clientName {
				t.Errorf("backend saw client %q, want %q", got, tc.clientName)
			}
		})
	}
	// Each name verified or sent as SNI is a profile of its own: a
	// kept-alive connection opened (and verified) for one name is never
	// reused for another.
	for i := range 8 {
		want := []struct {
			host, sni string
			status    int
		}{{"one.test", "one.test", 200}, {"two.test", "two.test", 200}, {"nosni.test", "", 200}, {"noname.test", "", 502}}[i%4]
		if r := h.mustGet("http://" + want.host + "/"); r.Status != want.status || want.status == 200 && r.Reply.Headers.Get(seenSNI) != want.sni {
			t.Fatalf("%s: status %d, SNI %q", want.host, r.Status, r.Reply.Headers.Get(seenSNI))
		}
	}
	if n := len(cfg.UpstreamTLS); n != 9 {
		t.Errorf("%d profiles, want 9", n)
	}
	for _, p := range cfg.UpstreamTLS {
		for kind, data := range map[string][]byte{"ca": p.CA, "cert": p.Cert, "key": p.Key} {
			st, err := os.Stat(h.opts.profileFile(p.Name, kind))
			switch {
			case len(data) == 0 && err == nil:
				t.Errorf("profile %s has a %s file", p.Name, kind)
			case len(data) > 0 && (err != nil || kind == "key" && st.Mode().Perm() != 0o600):
				t.Errorf("profile %s %s file: %v, %v", p.Name, kind, st, err)
			}
		}
	}
}

// TestProxySSLProfileReload: the first route of a new profile reloads
// nginx once (tested and confirmed); another Ingress with the same
// profile, a route moving to another existing profile, or a profile no
// route uses any more does not reload.
func TestProxySSLProfileReload(t *testing.T) {
	pki := newTestPKI(t)
	web := tlsBackend{name: "web"}.start(t, pki)
	backends := map[string]int{"web": web}
	secrets := []*corev1.Secret{pki.secret("ca", "ca"), pki.secret("ca-copy", "ca")}
	verify := func(sni string) []string {
		return []string{"secret", "ca", "verify", "on", "name", "backend.test", "server-name", sni}
	}
	a := httpsIngress("a", "a.test", "web", verify("on")...)
	h := startNginx(t, buildWithSecrets(t, backends, secrets, nil, a), nil)
	checkSNI := func(host, sni string) {
		t.Helper()
		r := h.mustGet("http://" + host + "/")
		if r.Status != 200 || r.Reply.Headers.Get(seenSNI) != sni {
			t.Fatalf("%s: status %d, SNI %q; want 200, %q", host, r.Status, r.Reply.Headers.Get(seenSNI), sni)
		}
	}
	checkSNI("a.test", "backend.test")
	ctx := context.Background()
	apply := func(ings ...*networkingv1.Ingress) {
		t.Helper()
		if err := h.reload(ctx, buildWithSecrets(t, backends, secrets, nil, ings...)); err != nil {
			t.Fatal(err)
		}
	}

	workers := workerPIDs(t, h.proc.Pid())
	// The same profile (a copy of the Secret) for another Ingress: no reload.
	b := httpsIngress("b", "b.test", "web", append(verify("on"), "secret", "ca-copy")...)
	apply(a, b)
	checkNotReloaded(t, h, workers)
	checkSNI("b.test", "backend.test")

	// A new profile (server name off): one reload, confirmed.
	c := httpsIngress("c", "c.test", "web", verify("off")...)
	apply(a, b, c)
	if h.app.LastReload().Skipped {
		t.Fatal("a new profile did not reload")
	}
	if h.mustVersion().Checksum != h.app.conf {
		t.Fatalf("workers serve %q, want %q", h.mustVersion().Checksum, h.app.conf)
	}
	checkSNI("c.test", "")
	checkSNI("a.test", "backend.test")

	// b moves to c's profile, then c goes away: no reload.
	workers = workerPIDs(t, h.proc.Pid())
	b = httpsIngress("b", "b.test", "web", verify("off")...)
	apply(a, b, c)
	checkNotReloaded(t, h, workers)
	checkSNI("b.test", "")
	apply(a)
	checkNotReloaded(t, h, workers)
	checkSNI("a.test", "backend.test")
	if r := h.mustGet("http://b.test/"); r.Status != 404 {
		t.Fatalf("removed Ingress: status %d", r.Status)
	}
}

// TestProxySSLRefusedProfile: a profile nginx -t refuses (a cipher list
// that matches no cipher) is left out of nginx.conf: its routes answer
// 503, the other changes of the same Apply are served; at start too.
func TestProxySSLRefusedProfile(t *testing.T) {
	pki := newTestPKI(t)
	web := tlsBackend{name: "web"}.start(t, pki)
	backends := map[string]int{"web": web}
	secrets := []*corev1.Secret{pki.secret("ca", "ca")}
	good := httpsIngress("good", "good.test", "web", "secret", "ca", "verify", "on", "name", "backend.test")
	h := startNginx(t, buildWithSecrets(t, backends, secrets, nil, good), nil)
	bad := httpsIngress("bad", "bad.test", "web", "secret", "ca", "ciphers", "HIGH:!HIGH")
	other := httpsIngress("other", "other.test", "web")
	cfg := buildWithSecrets(t, backends, secrets, nil, good, bad, other)
	if err := h.reload(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	checkServed(t, h, "http://bad.test/", 503, "")
	checkServed(t, h, "http://other.test/", 200, "web")
	checkServed(t, h, "http://good.test/", 200, "web")
	if !slices.ContainsFunc(cfg.UpstreamTLS, func(p config.UpstreamTLS) bool { return p.Ciphers == "HIGH:!HIGH" }) {
		t.Fatal("the refused profile is not in the Configuration")
	}
	h.stop()
	h = startNginx(t, cfg, nil)
	checkServed(t, h, "http://bad.test/", 503, "")
	checkServed(t, h, "http://good.test/", 200, "web")
}

// TestProxySSLVariants: a profile applies in every proxy location variant
// (buffering, error interception), to GRPCS and AUTO_HTTP backends, to the
// verify depth (OpenSSL's: the intermediates a chain may have) of a chain
// with two intermediates, and to the routes of the
// host's other Ingresses (server level, as ingress-nginx without
// proxy-ssl-location-only).
func TestProxySSLVariants(t *testing.T) {
	pki := newTestPKI(t)
	inter, err := certs.Generate(certs.Options{CommonName: "intermediate", IsCA: true, Parent: pki.ca.Cert, ParentKey: pki.ca.Key})
	if err != nil {
		t.Fatal(err)
	}
	inter2, err := certs.Generate(certs.Options{CommonName: "intermediate 2", IsCA: true, Parent: inter.Cert, ParentKey: inter.Key})
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := certs.Generate(certs.Options{Hosts: []string{"backend.test"}, Parent: inter2.Cert, ParentKey: inter2.Key})
	if err != nil {
		t.Fatal(err)
	}
	backends := map[string]int{
		"web":     tlsBackend{name: "web"}.start(t, pki),
		"grpcs":   tlsBackend{name: "grpcs", grpc: true}.start(t, pki),
		"chained": tlsBackend{name: "chained", chain: []*certs.Pair{leaf, inter2, inter}}.start(t, pki),
	}
	verify := func(secret string, kv ...string) []string {
		return append([]string{"secret", secret, "verify", "on", "name", "backend.test", "server-name", "on"}, kv...)
	}
	extra := func(ing *networkingv1.Ingress, kv ...string) *networkingv1.Ingress {
		for i := 0; i+1 < len(kv); i += 2 {
			ing.Annotations[ingress.AnnotationPrefix+kv[i]] = kv[i+1]
		}
		return ing
	}
	cfg := buildWithSecrets(t, backends, []*corev1.Secret{pki.secret("ca", "ca"), pki.secret("other", "other")}, nil,
		extra(httpsIngress("unbuffered", "unbuffered.test", "web", verify("ca")...), "proxy-buffering", "off", "proxy-http-version", "1.0"),
		extra(httpsIngress("unbuffered-other", "unbuffered-other.test", "web", verify("other")...), "proxy-buffering", "off"),
		extra(httpsIngress("errors", "errors.test", "web", verify("ca")...), "custom-http-errors", "404"),
		extra(httpsIngress("grpcs", "grpcs.test", "grpcs", verify("ca")...), "backend-protocol", "GRPCS"),
		extra(httpsIngress("grpcs-other", "grpcs-other.test", "grpcs", verify("other")...), "backend-protocol", "GRPCS"),
		extra(httpsIngress("auto", "auto.test", "web", verify("other")...), "backend-protocol", "AUTO_HTTP"),
		extra(httpsIngress("auto-ok", "auto-ok.test", "web", verify("ca")...), "backend-protocol", "AUTO_HTTP"),
		httpsIngress("depth1", "depth1.test", "chained", verify("ca")...),
		httpsIngress("depth2", "depth2.test", "chained", verify("ca", "verify-depth", "2")...),
		httpsIngress("host", "host.test", "web", verify("other")...),
		fixtures.Ingress("default", "zchild", ann("backend-protocol", "HTTPS"), fixtures.Rule("host.test", fixtures.Prefix("/child", "web", 80))),
	)
	h := startNginx(t, cfg, nil)
	for _, tc := range []struct {
		url    string
		status int
	}{
		{"http://unbuffered.test/", 200},
		{"http://unbuffered-other.test/", 502},
		{"http://errors.test/", 200},
		{"https://auto.test/", 502}, // the https side has the (wrong) CA
		{"https://auto-ok.test/", 200},
		{"http://depth1.test/", 502},
		{"http://depth2.test/", 200},
		{"http://host.test/child", 502}, // the host's profile, with the other CA
	} {
		if r := h.mustGet(tc.url); r.Status != tc.status {
			t.Errorf("GET %s = %d, want %d", tc.url, r.Status, tc.status)
		} else if r.Status == 200 && r.Reply.Headers.Get(seenSNI) != "backend.test" {
			t.Errorf("GET %s: backend saw SNI %q", tc.url, r.Reply.Headers.Get(seenSNI))
		}
	}
	c := h.h2Client()
	status, reply, grpcStatus, err := grpcCall(c, "https://grpcs.test/grpcs.Echo/Say")
	if err != nil || status != 200 || grpcStatus != "0" || reply.Headers.Get(seenSNI) != "backend.test" {
		t.Errorf("GRPCS: %d, grpc-status %q, SNI %q, %v", status, grpcStatus, reply.Headers.Get(seenSNI), err)
	}
	if status, _, _, _ := grpcCall(c, "https://grpcs-other.test/grpcs.Echo/Say"); status != 502 {
		t.Errorf("GRPCS with another CA: status %d, want 502", status)
	}
}

// TestProxySSLRouteChecks: router.lua checks a route's upstreamTLS again
// (values Build never emits): a profile nginx.conf does not hold answers
// 503 for a TLS backend (an HTTP one does not use it); a malformed item
// fails its host alone.
func TestProxySSLRouteChecks(t *testing.T) {
	app := startEcho(t, "app")
	tlsLoc := func(path string, st config.LocationSettings) config.Location {
		return settingsLoc(path, "app", st)
	}
	unknown := &config.ProxySSL{Profile: "t0123456789abcdef"}
	cfg := configOf("tls-checks-1", []config.Server{
		serverOf("good.test", prefixLoc("/", "app")),
		serverOf("unknown.test", tlsLoc("/", config.LocationSettings{BackendProtocol: "HTTPS", ProxySSL: unknown})),
		serverOf("plain.test", tlsLoc("/", config.LocationSettings{ProxySSL: unknown})),
		serverOf("badname.test", tlsLoc("/", config.LocationSettings{ProxySSL: &config.ProxySSL{Name: "a;b"}})),
		serverOf("down.test", tlsLoc("/", config.LocationSettings{ProxySSL: &config.ProxySSL{Unavailable: true}})),
	}, backendOf("app", app))
	h := startNginx(t, cfg, nil)
	h.allowLuaErrors = true // the refused host is logged
	for url, status := range map[string]int{
		"http://good.test/": 200, "http://unknown.test/": 503, "http://plain.test/": 200,
		"http://badname.test/": 503, "http://down.test/": 503,
	} {
		if r := h.mustGet(url); r.Status != status {
			t.Errorf("GET %s = %d, want %d", url, r.Status, status)
		}
	}
}
