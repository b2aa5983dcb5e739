package e2e

import (
	"crypto/md5"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/test/testkit/echo"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
	"github.com/ingress-sync/ingress-sync/test/testkit/netns"
)

func opaqueSecret(ns, name, key, value string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{key: []byte(value)}}
}

func basicAuth(user, pw string) []string {
	return []string{"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw))}
}

// TestAccessControl applies ingress-nginx's access-control annotations on
// the whole system: an auth Secret that does not exist yet fails closed
// (503) and, once created, reaches the syncers through the stream; its
// rotation is served; digest auth challenges; allow-lists see the
// client's address. None of it reloads nginx.
func TestAccessControl(t *testing.T) {
	ns := setup(t)
	service(t, ns, "admin")
	converged(t)
	before := snapshot(t)
	a := func(k, v string) fixtures.IngressOption {
		return fixtures.Annotation("nginx.ingress.kubernetes.io/"+k, v)
	}
	applyIngress(t, ours(ns, "basic", a("auth-type", "basic"), a("auth-secret", "admin-auth"), a("auth-realm", "ops"),
		fixtures.Rule("basic.example.com", fixtures.Prefix("/", "admin", 80))))
	applyIngress(t, ours(ns, "digest", a("auth-type", "digest"), a("auth-secret", "digest-auth"), a("auth-realm", "ops area"),
		fixtures.Rule("digest.example.com", fixtures.Prefix("/", "admin", 80))))
	applyIngress(t, ours(ns, "inside", a("allowlist-source-range", "127.0.0.0/8"),
		fixtures.Rule("inside.example.com", fixtures.Prefix("/", "admin", 80))))
	applyIngress(t, ours(ns, "outside", a("whitelist-source-range", "10.0.0.0/8"),
		fixtures.Rule("outside.example.com", fixtures.Prefix("/", "admin", 80))))
	answers(t, []answer{
		{url: "http://basic.example.com/", header: basicAuth("ops", "secret"), status: 503}, // the Secret does not exist: fail closed
		{url: "http://digest.example.com/", status: 503},
		{url: "http://inside.example.com/", status: 200, backend: "admin"},
		{url: "http://outside.example.com/", status: 403},
	})

	applySecret(t, opaqueSecret(ns, "admin-auth", "auth", "ops:$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/\n"))
	applySecret(t, opaqueSecret(ns, "digest-auth", "auth", "ops:ops area:717005488239c3a84e2d62043498b8d7\n"))
	answers(t, []answer{
		{url: "http://basic.example.com/", status: 401, headers: map[string]string{"WWW-Authenticate": `Basic realm="ops"`}},
		{url: "http://basic.example.com/", header: basicAuth("ops", "wrong"), status: 401},
		{url: "http://basic.example.com/", header: basicAuth("ops", "secret"), status: 200, backend: "admin"},
		{url: "http://digest.example.com/", header: basicAuth("ops", "secret"), status: 401},
	})
	digestChallenged(t, "http://digest.example.com/", "ops area")

	// The password changes: the rotated Secret is served.
	applySecret(t, opaqueSecret(ns, "admin-auth", "auth", "ops:$apr1$abcdefgh$qu5VzClf84k9CB4OSHKlO0\n"))
	answers(t, []answer{
		{url: "http://basic.example.com/", header: basicAuth("ops", "secret"), status: 401},
		{url: "http://basic.example.com/", header: basicAuth("ops", "rotated"), status: 200, backend: "admin"},
	})
	converged(t)
	before.unchanged(t, "access-control Ingresses and their Secrets")
}

// digestChallenged signs in to url through every syncer as an RFC 2617
// client would: the challenge's nonce, then the response for user ops,
// password secret.
func digestChallenged(t *testing.T, url, realm string) {
	t.Helper()
	const uri = "/"
	for i := range w.Syncers {
		c := w.Syncers[i].Client(nil)
		eventually(t, waitTimeout, url, func() error {
			r, err := echo.Get(t.Context(), c, url)
			if err != nil {
				return err
			}
			m := regexp.MustCompile(`nonce="([0-9a-f]+)"`).FindStringSubmatch(r.Header.Get("WWW-Authenticate"))
			if r.Status != 401 || m == nil || !strings.Contains(r.Header.Get("WWW-Authenticate"), `realm="`+realm+`"`) {
				return fmt.Errorf("syncer-%d: %d with %q, want a Digest challenge", i, r.Status, r.Header.Get("WWW-Authenticate"))
			}
			ha1 := md5hex("ops:" + realm + ":secret")
			resp := md5hex(ha1 + ":" + m[1] + ":00000001:c0ffee:auth:" + md5hex("GET:"+uri))
			h := fmt.Sprintf(`Digest username="ops", realm="%s", nonce="%s", uri="%s", qop=auth, nc=00000001, cnonce="c0ffee", response="%s"`,
				realm, m[1], uri, resp)
			r, err = echo.Get(t.Context(), c, url, "Authorization", h)
			if err != nil {
				return err
			}
			if r.Status != 200 || r.Reply.Backend != "admin" {
				return fmt.Errorf("syncer-%d: %d from %q with the digest response, want 200 from admin", i, r.Status, r.Reply.Backend)
			}
			return nil
		})
	}
}

func md5hex(s string) string {
	sum := md5.Sum([]byte(s)) //nolint:gosec // RFC 2617's hash
	return hex.EncodeToString(sum[:])
}

// startAuthService starts an oauth2-proxy-like auth service on a fresh
// test-range address: 202 with X-Auth-Request-User for the cookie
// _oauth2_proxy=ok, 401 otherwise. It returns its /oauth2/auth URL.
func startAuthService(t *testing.T) string {
	t.Helper()
	addr := net.JoinHostPort(netns.Addr(int(nextAddr.Add(1))), fmt.Sprint(backendPort))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("_oauth2_proxy"); err != nil || c.Value != "ok" || r.URL.Path != "/oauth2/auth" {
			rw.WriteHeader(http.StatusUnauthorized)
			return
		}
		rw.Header().Set("X-Auth-Request-User", "jane")
		rw.WriteHeader(http.StatusAccepted)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + addr + "/oauth2/auth"
}

// TestOAuth2ProxyPattern: the documented oauth2-proxy Ingress (auth-url
// plus auth-signin with $escaped_request_uri) on the whole system: a
// client without the session is sent to sign in with its URL in rd, one
// with it reaches the backend with the user the auth service named.
func TestOAuth2ProxyPattern(t *testing.T) {
	ns := setup(t)
	service(t, ns, "dashboard")
	converged(t)
	before := snapshot(t)
	authURL := startAuthService(t)
	a := func(k, v string) fixtures.IngressOption {
		return fixtures.Annotation("nginx.ingress.kubernetes.io/"+k, v)
	}
	applyIngress(t, ours(ns, "dashboard", a("auth-url", authURL),
		a("auth-signin", "https://auth.example.com/oauth2/start?rd=$escaped_request_uri"),
		a("auth-response-headers", "X-Auth-Request-User"),
		fixtures.Rule("dash.example.com", fixtures.Prefix("/", "dashboard", 80))))
	answers(t, []answer{
		{url: "http://dash.example.com/graphs?id=7", status: 302,
			headers: map[string]string{"Location": "https://auth.example.com/oauth2/start?rd=%2Fgraphs%3Fid%3D7"}},
	})
	for i := range w.Syncers {
		eventually(t, waitTimeout, "signed in", func() error {
			r, err := echo.Get(t.Context(), w.Syncers[i].Client(nil), "http://dash.example.com/graphs", "Cookie", "_oauth2_proxy=ok")
			if err != nil {
				return err
			}
			if r.Status != 200 || r.Reply.Backend != "dashboard" || r.Reply.Headers.Get("X-Auth-Request-User") != "jane" {
				return fmt.Errorf("syncer-%d: %d from %q, user %q; want 200 from dashboard for jane",
					i, r.Status, r.Reply.Backend, r.Reply.Headers.Get("X-Auth-Request-User"))
			}
			return nil
		})
	}
	converged(t)
	before.unchanged(t, "an oauth2-proxy Ingress")
}

// TestClientCertificates: an Ingress with auth-tls-secret on the whole
// system: fail closed (503) until its CA Secret exists, then a client
// without a certificate gets 400, one with a certificate of the CA reaches
// the backend with ingress-nginx's ssl-client-* headers; no reload.
func TestClientCertificates(t *testing.T) {
	ns := setup(t)
	service(t, ns, "partner")
	h := "mtls-" + ns + ".example.com"
	serving, err := certs.Generate(certs.Options{CommonName: "e2e CA", IsCA: true})
	if err != nil {
		t.Fatal(err)
	}
	clientCA, err := certs.Generate(certs.Options{CommonName: "partners CA", IsCA: true})
	if err != nil {
		t.Fatal(err)
	}
	client, err := certs.Generate(certs.Options{CommonName: "acme", Client: true, Parent: clientCA.Cert, ParentKey: clientCA.Key})
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(serving.Cert)
	applySecret(t, fixtures.TLSSecret(ns, "tls", leaf(t, serving, h)))
	converged(t)
	before := snapshot(t)
	a := func(k, v string) fixtures.IngressOption {
		return fixtures.Annotation("nginx.ingress.kubernetes.io/"+k, v)
	}
	applyIngress(t, ours(ns, "mtls", fixtures.TLS("tls", h), a("auth-tls-secret", ns+"/partners-ca"),
		a("auth-tls-verify-client", "on"), fixtures.Rule(h, fixtures.Prefix("/", "partner", 80))))
	withCert := func(i int) *http.Client {
		c := w.Syncers[i].Client(roots)
		c.Transport.(*http.Transport).TLSClientConfig.Certificates = []tls.Certificate{{Certificate: [][]byte{client.Cert.Raw}, PrivateKey: client.Key}}
		return c
	}
	get := func(i int, c *http.Client, want int) error {
		r, err := echo.Get(t.Context(), c, "https://"+h+"/orders")
		if err != nil {
			return err
		}
		if r.Status != want {
			return fmt.Errorf("syncer-%d: status %d, want %d", i, r.Status, want)
		}
		if want == 200 && (r.Reply.Backend != "partner" || r.Reply.Headers.Get("ssl-client-verify") != "SUCCESS" ||
			!strings.Contains(r.Reply.Headers.Get("ssl-client-subject-dn"), "CN=acme")) {
			return fmt.Errorf("syncer-%d: from %q with ssl-client-verify %q, subject %q", i, r.Reply.Backend,
				r.Reply.Headers.Get("ssl-client-verify"), r.Reply.Headers.Get("ssl-client-subject-dn"))
		}
		return nil
	}
	for i := range w.Syncers {
		eventually(t, waitTimeout, "fail closed", func() error { return get(i, withCert(i), 503) })
	}
	applySecret(t, opaqueSecret(ns, "partners-ca", "ca.crt", string(clientCA.CertPEM)))
	for i := range w.Syncers {
		eventually(t, waitTimeout, "verified", func() error { return get(i, withCert(i), 200) })
		eventually(t, waitTimeout, "no certificate", func() error { return get(i, w.Syncers[i].Client(roots), 400) })
	}
	converged(t)
	before.unchanged(t, "an Ingress with client certificates and its CA")
}
