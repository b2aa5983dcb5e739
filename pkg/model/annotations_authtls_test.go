package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// clientAuth: what lua/clientauth.lua may receive (it checks it again).
func (c *contract) clientAuth(host string, a *config.ClientAuth) {
	if a == nil {
		return
	}
	if pemCA, _, err := ParseClientCA([]byte(a.CA)); err != nil || pemCA != a.CA {
		c.fail("server %s: client CA %v", host, err)
	}
	if _, err := ingress.ParseVerifyClient(a.Verify); err != nil || a.Depth < 1 || a.Depth > intent.MaxVerifyDepth {
		c.fail("server %s: verify %q depth %d", host, a.Verify, a.Depth)
	}
	if p, err := ingress.ParseErrorPage(a.ErrorPage); err != nil || p != a.ErrorPage || strings.ContainsAny(p, "?# ") {
		c.fail("server %s: error page %q", host, a.ErrorPage)
	}
	if _, err := ingress.ParseMatchCN(a.MatchCN); a.MatchCN != "" && err != nil {
		c.fail("server %s: match-cn %q", host, a.MatchCN)
	}
	hex := regexp.MustCompile(`^(?:[0-9A-F]{2})+$`)
	for i, s := range a.Revoked {
		if !hex.MatchString(s) || i > 0 && a.Revoked[i-1] >= s {
			c.fail("server %s: revoked serial %q", host, s)
		}
	}
}

// testIssuer makes the CA, CRL and certificates of the model tests.
type testIssuer struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  string
}

func newTestIssuer(t testing.TB, cn string) *testIssuer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(4e9, 0), KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := x509.ParseCertificate(der)
	return &testIssuer{cert: c, key: key, pem: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}
}

func (ca *testIssuer) crl(t testing.TB, serials ...int64) string {
	t.Helper()
	tmpl := &x509.RevocationList{Number: big.NewInt(1), ThisUpdate: time.Unix(0, 0), NextUpdate: time.Unix(4e9, 0)}
	for _, s := range serials {
		tmpl.RevokedCertificateEntries = append(tmpl.RevokedCertificateEntries, x509.RevocationListEntry{SerialNumber: big.NewInt(s), RevocationTime: time.Unix(0, 0)})
	}
	der, err := x509.CreateRevocationList(rand.Reader, tmpl, ca.cert, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: der}))
}

func caSecretOf(name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{}}
	s.Namespace, s.Name = "default", name
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

func TestParseClientAuthValues(t *testing.T) {
	tests := []struct {
		name, value string
		parse       func(string) (string, error)
		ok          bool
	}{
		{"verify on", "on", ingress.ParseVerifyClient, true},
		{"verify optional_no_ca", "optional_no_ca", ingress.ParseVerifyClient, true},
		{"verify in upper case", "ON", ingress.ParseVerifyClient, false},
		{"verify other", "require", ingress.ParseVerifyClient, false},
		{"error page URL", "https://errors.example.com:8443/cert/error.html", ingress.ParseErrorPage, true},
		{"error page host and path (e2e)", "ok.com/error", ingress.ParseErrorPage, true},
		{"error page path", "/error", ingress.ParseErrorPage, true},
		{"error page trailing slash", "http://a.b/c/", ingress.ParseErrorPage, true},
		{"error page empty: none", "", ingress.ParseErrorPage, true},
		{"error page named location", "@error", ingress.ParseErrorPage, false},
		{"error page query", "/error?x=1", ingress.ParseErrorPage, false},
		{"error page scheme without host", "https:///x", ingress.ParseErrorPage, false},
		{"error page variable", "/$request_uri", ingress.ParseErrorPage, false},
		{"error page space", "/a b", ingress.ParseErrorPage, false},
		{"error page double slash", "//x", ingress.ParseErrorPage, false},
		{"error page bad port", "a.b:x/c", ingress.ParseErrorPage, false},
		{"match-cn literal", "CN=client", ingress.ParseMatchCN, true},
		{"match-cn alternatives", "CN=(a|b|c)", ingress.ParseMatchCN, true},
		{"match-cn without CN=", "client", ingress.ParseMatchCN, false},
		{"match-cn bad regex", "CN=(", ingress.ParseMatchCN, false},
		{"match-cn PCRE-only group", "CN=(?<n>a)", ingress.ParseMatchCN, false},
		{"match-cn newline", "CN=a\nb", ingress.ParseMatchCN, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.parse(tc.value)
			if (err == nil) != tc.ok || tc.ok && got != tc.value {
				t.Fatalf("%q: %q, %v; want ok=%v", tc.value, got, err, tc.ok)
			}
		})
	}
}

func TestParseClientCA(t *testing.T) {
	a, b := newTestIssuer(t, "a"), newTestIssuer(t, "b")
	tests := []struct {
		name, data string
		n          int
		err        string
	}{
		{"one", a.pem, 1, ""},
		{"bundle with text and a key between", "# bundle\n" + a.pem + "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n" + b.pem, 2, ""},
		{"none", "no PEM here", 0, "no PEM certificate"},
		{"bad DER", "-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n", 0, "certificate 1:"},
		{"too large", strings.Repeat("x", intent.MaxClientCABytes+1), 0, "larger than"},
		{"too many", strings.Repeat(a.pem, intent.MaxClientCAs+1), 0, "more than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, cas, err := ParseClientCA([]byte(tc.data))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || len(cas) != tc.n || strings.Count(out, "BEGIN CERTIFICATE") != tc.n || strings.Contains(out, "PRIVATE") {
				t.Fatalf("%d certificates, %v:\n%s", len(cas), err, out)
			}
		})
	}
}

func TestParseClientCRL(t *testing.T) {
	a, b := newTestIssuer(t, "a"), newTestIssuer(t, "b")
	_, cas, _ := ParseClientCA([]byte(a.pem))
	got, err := ParseClientCRL([]byte(a.crl(t, 255, 16, 0, 16)), cas)
	if want := []string{"00", "10", "FF"}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("serials %q, %v; want %q", got, err, want)
	}
	if _, err := ParseClientCRL([]byte(b.crl(t, 1)), cas); err == nil || !strings.Contains(err.Error(), "not signed") {
		t.Fatalf("another CA's CRL: %v", err)
	}
	if _, err := ParseClientCRL([]byte("nothing"), cas); err == nil {
		t.Fatal("no CRL accepted")
	}
}

// TestClientAuthBuild: how the auth-tls annotations of the Ingresses of a
// host combine (per host, the oldest that can be applied wins) and fail
// closed (the failing Ingress's routes answer 503, and the host's catch-all
// when it is the host's oldest Ingress, whose settings the catch-all takes).
func TestClientAuthBuild(t *testing.T) {
	a, other := newTestIssuer(t, "a"), newTestIssuer(t, "other")
	secrets := []*corev1.Secret{
		caSecretOf("ca", map[string]string{"ca.crt": a.pem}),
		caSecretOf("other", map[string]string{"ca.crt": other.pem}),
		caSecretOf("crl", map[string]string{"ca.crt": a.pem, "ca.crl": a.crl(t, 7)}),
		caSecretOf("tls-only", map[string]string{"tls.crt": a.pem}),
	}
	on := func(ing string) *config.ClientAuth {
		return &config.ClientAuth{Ingress: "default/" + ing, Secret: "default/ca", CA: a.pem, Verify: "on", Depth: 1}
	}
	tests := []struct {
		name     string
		ings     []ingressSpec
		want     map[string]*config.ClientAuth
		closed   []string
		problems []string
	}{
		{"defaults", []ingressSpec{{"one", "a.test", map[string]string{"auth-tls-secret": "ca"}}},
			map[string]*config.ClientAuth{"a.test": on("one")}, nil, nil},
		{"every value", []ingressSpec{{"one", "a.test", map[string]string{"auth-tls-secret": "default/crl", "auth-tls-verify-client": "optional",
			"auth-tls-verify-depth": "3", "auth-tls-error-page": "/err", "auth-tls-pass-certificate-to-upstream": "true", "auth-tls-match-cn": "CN=x"}}},
			map[string]*config.ClientAuth{"a.test": {Ingress: "default/one", Secret: "default/crl", CA: a.pem, Revoked: []string{"07"}, Verify: "optional", Depth: 3,
				ErrorPage: "/err", PassCertificate: true, MatchCN: "CN=x"}}, nil, nil},
		{"depth 0 is 1", []ingressSpec{{"one", "a.test", map[string]string{"auth-tls-secret": "ca", "auth-tls-verify-depth": "0"}}},
			map[string]*config.ClientAuth{"a.test": on("one")}, nil, nil},
		{"per host: another Ingress's paths are covered, the oldest wins", []ingressSpec{
			{"a-plain", "a.test", nil},
			{"b-ca", "a.test", map[string]string{"auth-tls-secret": "ca"}},
			{"c-other", "a.test", map[string]string{"auth-tls-secret": "other"}},
			{"d-same", "a.test", map[string]string{"auth-tls-secret": "ca"}},
		}, map[string]*config.ClientAuth{"a.test": on("b-ca")}, nil,
			[]string{"host a.test: client certificate authentication is that of Ingress default/b-ca, which is older"}},
		{"hosts of one Ingress", []ingressSpec{{"one", "a.test,b.test", map[string]string{"auth-tls-secret": "ca"}}},
			map[string]*config.ClientAuth{"a.test": on("one"), "b.test": on("one")}, nil, nil},
		{"without auth-tls-secret: ignored", []ingressSpec{{"one", "a.test", map[string]string{"auth-tls-verify-client": "on", "auth-tls-match-cn": "CN=x"}}},
			map[string]*config.ClientAuth{"a.test": nil}, nil,
			[]string{"annotations nginx.ingress.kubernetes.io/auth-tls-match-cn, nginx.ingress.kubernetes.io/auth-tls-verify-client without nginx.ingress.kubernetes.io/auth-tls-secret; ignored"}},
		{"a failing Ingress closes its own routes; the host keeps the valid one", []ingressSpec{
			{"a-bad", "a.test", map[string]string{"auth-tls-secret": "ca", "auth-tls-verify-depth": "x"}},
			{"b-ok", "a.test", map[string]string{"auth-tls-secret": "ca"}},
			{"c-plain", "a.test,c.test", nil},
		}, map[string]*config.ClientAuth{"a.test": on("b-ok"), "c.test": nil}, []string{"/a-bad", "/"},
			[]string{`auth-tls-verify-depth="x": must be a whole number; the Ingress's routes answer 503`}},
		{"missing Secret", []ingressSpec{{"one", "a.test", map[string]string{"auth-tls-secret": "nope"}}},
			map[string]*config.ClientAuth{"a.test": nil}, []string{"/one", "/"}, []string{"Secret default/nope not found"}},
		{"no ca.crt", []ingressSpec{{"one", "a.test", map[string]string{"auth-tls-secret": "tls-only"}}},
			map[string]*config.ClientAuth{"a.test": nil}, []string{"/one", "/"}, []string{`has no key "ca.crt"`}},
		{"another namespace", []ingressSpec{{"one", "a.test", map[string]string{"auth-tls-secret": "kube-system/ca"}}},
			map[string]*config.ClientAuth{"a.test": nil}, []string{"/one", "/"}, []string{"must be in the Ingress's namespace default"}},
		{"bad secret name", []ingressSpec{{"one", "a.test", map[string]string{"auth-tls-secret": "a/b/c"}}},
			map[string]*config.ClientAuth{"a.test": nil}, []string{"/one", "/"}, []string{`auth-tls-secret="a/b/c": must be "name" or "namespace/name"`}},
		{"named error page", []ingressSpec{{"one", "a.test", map[string]string{"auth-tls-secret": "ca", "auth-tls-error-page": "@err"}}},
			map[string]*config.ClientAuth{"a.test": nil}, []string{"/one", "/"}, []string{"not supported: a named location"}},
		{"bad pass-certificate", []ingressSpec{{"one", "a.test", map[string]string{"auth-tls-secret": "ca", "auth-tls-pass-certificate-to-upstream": "yes"}}},
			map[string]*config.ClientAuth{"a.test": nil}, []string{"/one", "/"}, []string{"must be true or false"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := buildSpecs(t, secrets, tc.ings)
			checkDataPlaneContract(t, cfg)
			for host, want := range tc.want {
				srv := findServer(cfg, host)
				if srv == nil {
					t.Fatalf("no server %s", host)
				}
				if got := srv.ClientAuth; (got == nil) != (want == nil) || got != nil && !(clientAuthEqual(got, want) && got.Ingress == want.Ingress) {
					t.Errorf("%s: %+v, want %+v", host, got, want)
				}
				var closed []string
				for _, l := range srv.Locations {
					if l.Settings.ClientAuthUnavailable {
						closed = append(closed, l.Path)
					}
				}
				if host == "a.test" && !slices.Equal(closed, tc.closed) {
					t.Errorf("%s: closed paths %q, want %q", host, closed, tc.closed)
				}
			}
			var reasons []string
			for _, p := range cfg.Problems {
				reasons = append(reasons, p.Reason)
			}
			for _, want := range tc.problems {
				if !slices.ContainsFunc(reasons, func(r string) bool { return strings.Contains(r, want) }) {
					t.Errorf("no problem %q in %q", want, reasons)
				}
			}
			if len(reasons) != len(tc.problems) {
				t.Errorf("problems %q, want %q", reasons, tc.problems)
			}
		})
	}
}

// ingressSpec is an Ingress of the client auth tests: its hosts (comma
// separated), created in list order, and its auth-tls annotations.
type ingressSpec struct {
	name, hosts string
	ann         map[string]string
}

func buildSpecs(t *testing.T, secrets []*corev1.Secret, specs []ingressSpec) *config.Configuration {
	t.Helper()
	objs := []runtime.Object{service("default", "web", svcPort("http", 80))}
	for _, s := range secrets {
		objs = append(objs, s)
	}
	for i, s := range specs {
		opts := []ingOpt{created(i)}
		for _, h := range strings.Split(s.hosts, ",") {
			opts = append(opts, rule(h, prefix("/"+s.name, "web", 80)))
		}
		for k, v := range s.ann {
			opts = append(opts, nginx(k, v))
		}
		objs = append(objs, newIngress("default", s.name, opts...))
	}
	return Build(newTestStore(t, objs...), testOptions())
}

func checkDataPlaneContract(t *testing.T, cfg *config.Configuration) {
	t.Helper()
	if v := dataPlaneViolations(cfg); len(v) > 0 {
		t.Fatalf("data plane contract: %q", v)
	}
}

func findServer(cfg *config.Configuration, host string) *config.Server {
	i := slices.IndexFunc(cfg.Servers, func(s config.Server) bool { return s.Hostname == host })
	if i < 0 {
		return nil
	}
	return &cfg.Servers[i]
}

// The hostile Ingresses (hostile_test.go) carry the auth-tls annotations
// too; the evil tenant has a CA Secret "client-ca".
func init() {
	hostileAnnotations = append(hostileAnnotations, "auth-tls-secret", "auth-tls-verify-client", "auth-tls-verify-depth",
		"auth-tls-error-page", "auth-tls-pass-certificate-to-upstream", "auth-tls-match-cn")
	for k, v := range map[string][]string{
		"auth-tls-secret":        {"client-ca", "evil/client-ca", "team-a/client-ca", "opaque"},
		"auth-tls-verify-client": {"on", "off", "optional", "optional_no_ca"}, "auth-tls-verify-depth": {"0", "2"},
		"auth-tls-error-page":                   {"/error", "https://errors.example.com/cert", "ok.com/error"},
		"auth-tls-pass-certificate-to-upstream": {"true"}, "auth-tls-match-cn": {"CN=client", "CN=(a|b)"},
	} {
		plausibleValues[k] = v
	}
}
