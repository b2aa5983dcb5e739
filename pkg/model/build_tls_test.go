package model

import (
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"

	"github.com/ingress-sync/ingress-sync/test/testkit/check"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// certNames renders certificates as "name: host,host".
func certNames(cs []config.Certificate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name + ":"
		for j, h := range c.Hosts {
			if j > 0 {
				out[i] += ","
			}
			out[i] += h
		}
	}
	return out
}

type tlsCase struct {
	objs        []runtime.Object
	opts        func(*Options)
	servers     []config.Server
	certs       []string
	defaultCert string
	problems    []string
}

func TestBuildTLS(t *testing.T) {
	fallback := &config.Certificate{Name: "_fallback", Cert: testdata(t, "other.crt"), Key: testdata(t, "other.key")}
	withFallback := func(o *Options) { o.FallbackCertificate = fallback }
	web := func(host string, opts ...ingOpt) []runtime.Object {
		return objs(webService(), one(newIngress("default", "ing", append(opts, rule(host, prefix("/", "web", 80)))...)))
	}
	root := func(ing string) config.Location { return loc("/", config.PathPrefix, web80, ing) }
	cases := map[string]tlsCase{
		"tls host with a valid secret": {
			objs:        append(web("a.example.com", tlsFor("cert", "a.example.com")), tlsSecret(t, "default", "cert", "example")),
			opts:        withFallback,
			servers:     []config.Server{srv("_", catchAll("")), tlsSrv("a.example.com", true, root("default/ing"))},
			certs:       []string{"_fallback:", "default/cert:a.example.com"},
			defaultCert: "_fallback",
		},
		"ssl-redirect annotation turns the server redirect off": {
			objs: append(web("a.example.com", tlsFor("cert", "a.example.com"), nginx("ssl-redirect", "false")),
				tlsSecret(t, "default", "cert", "example")),
			servers: []config.Server{srv("_", catchAll("")), tlsSrv("a.example.com", false, root("default/ing"))},
			certs:   []string{"default/cert:a.example.com"},
		},
		"global ssl-redirect false": {
			objs: append(web("a.example.com", tlsFor("cert", "a.example.com")),
				tlsSecret(t, "default", "cert", "example"), fixtures.ConfigMap("ingress", "cfg", "ssl-redirect", "false")),
			opts:    func(o *Options) { o.ConfigMap = "ingress/cfg" },
			servers: []config.Server{srv("_", catchAll("")), tlsSrv("a.example.com", false, root("default/ing"))},
			certs:   []string{"default/cert:a.example.com"},
		},
		"missing secret: default certificate, still TLS": {
			objs:        web("a.example.com", tlsFor("nope", "a.example.com")),
			opts:        withFallback,
			servers:     []config.Server{srv("_", catchAll("")), tlsSrv("a.example.com", true, root("default/ing"))},
			certs:       []string{"_fallback:"},
			defaultCert: "_fallback",
			problems:    []string{"tls host a.example.com: secret default/nope not found; the default certificate is used"},
		},
		"secret of the wrong type or with a bad key pair": {
			objs: append(web("a.example.com", tlsFor("opaque", "a.example.com"), tlsFor("bad", "b.example.com")),
				&corev1.Secret{ObjectMeta: objMeta("default", "opaque"), Type: corev1.SecretTypeOpaque},
				badSecret(t)),
			certs: []string{},
			problems: []string{
				"tls host a.example.com: secret default/opaque is not of type kubernetes.io/tls",
				"tls host b.example.com: secret default/bad has an invalid key pair",
			},
		},
		"empty secretName uses the default certificate without a problem": {
			objs:    web("a.example.com", tlsFor("", "a.example.com")),
			servers: []config.Server{srv("_", catchAll("")), tlsSrv("a.example.com", true, root("default/ing"))},
			certs:   []string{},
		},
		"tls entry without hosts applies to the rule hosts": {
			objs:    append(web("a.example.com", tlsFor("cert")), tlsSecret(t, "default", "cert", "example")),
			servers: []config.Server{srv("_", catchAll("")), tlsSrv("a.example.com", true, root("default/ing"))},
			certs:   []string{"default/cert:a.example.com"},
		},
		"default SSL certificate flag": {
			objs: append(web("a.example.com", tlsFor("cert", "a.example.com")),
				tlsSecret(t, "default", "cert", "example"), tlsSecret(t, "ingress", "default", "other")),
			opts: func(o *Options) {
				withFallback(o)
				o.DefaultSSLCertificate = "ingress/default"
			},
			certs:       []string{"default/cert:a.example.com", "ingress/default:"},
			defaultCert: "ingress/default",
		},
		"invalid default SSL certificate falls back": {
			objs: append(web("a.example.com"), badSecret(t)),
			opts: func(o *Options) {
				withFallback(o)
				o.DefaultSSLCertificate = "default/bad"
			},
			certs:       []string{"_fallback:"},
			defaultCert: "_fallback",
			problems:    []string{"Secret default/bad: default SSL certificate has an invalid key pair"},
		},
		"two Ingresses, two secrets, one host: the oldest wins": {
			objs: objs(webService(), one(tlsSecret(t, "default", "old", "example"), tlsSecret(t, "default", "new", "other"),
				newIngress("default", "a", created(9), tlsFor("new", "a.example.com"), rule("a.example.com", prefix("/a", "web", 80))),
				newIngress("default", "b", created(1), tlsFor("old", "a.example.com"), rule("a.example.com", prefix("/b", "web", 80))))),
			certs:    []string{"default/old:a.example.com"},
			problems: []string{`Ingress default/a: tls host a.example.com: secret "new" ignored, Ingress default/b is older and its secret "old" is used`},
		},
		"one secret for several hosts and Ingresses": {
			objs: objs(webService(), one(tlsSecret(t, "default", "cert", "example"),
				newIngress("default", "a", tlsFor("cert", "b.example.com", "a.example.com"),
					rule("a.example.com", prefix("/", "web", 80)), rule("b.example.com", prefix("/", "web", 80))),
				newIngress("default", "b", tlsFor("cert", "*.example.com"), rule("*.example.com", prefix("/", "web", 80))))),
			certs: []string{"default/cert:*.example.com,a.example.com,b.example.com"},
		},
		"certificate not covering its host is used with a problem": {
			objs:     append(web("a.example.org", tlsFor("cert", "a.example.org")), tlsSecret(t, "default", "cert", "example")),
			servers:  []config.Server{srv("_", catchAll("")), tlsSrv("a.example.org", true, root("default/ing"))},
			certs:    []string{"default/cert:a.example.org"},
			problems: []string{"tls host a.example.org: the certificate of secret default/cert does not cover it (used anyway)"},
		},
		"tls host without rule: certificate but no server": {
			objs:    append(web("a.example.com", tlsFor("cert", "b.example.com")), tlsSecret(t, "default", "cert", "example")),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com", root("default/ing"))},
			certs:   []string{"default/cert:b.example.com"},
		},
		"force-ssl-redirect redirects a plain server's locations": {
			objs: objs(webService(), one(newIngress("default", "ing", nginx("force-ssl-redirect", "true"),
				rule("a.example.com", prefix("/", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), srv("a.example.com",
				withSettings(root("default/ing"), config.LocationSettings{SSLRedirect: ptr(true)}))},
			certs: []string{},
		},
		"ssl-redirect of another Ingress on a TLS host overrides its own locations": {
			objs: objs(webService(), one(tlsSecret(t, "default", "cert", "example"),
				newIngress("default", "a", created(1), tlsFor("cert", "a.example.com"), rule("a.example.com", prefix("/a", "web", 80))),
				newIngress("default", "b", created(2), nginx("ssl-redirect", "false"), rule("a.example.com", prefix("/b", "web", 80))))),
			servers: []config.Server{srv("_", catchAll("")), tlsSrv("a.example.com", true,
				withSettings(loc("/b", config.PathPrefix, web80, "default/b"), config.LocationSettings{SSLRedirect: ptr(false)}),
				loc("/a", config.PathPrefix, web80, "default/a"),
				catchAll(""))},
			certs: []string{"default/cert:a.example.com"},
		},
		"invalid tls host": {
			objs:     web("a.example.com", tlsFor("cert", "a..example.com")),
			certs:    []string{},
			problems: []string{`tls host "a..example.com" is not a valid DNS name`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := buildWith(t, tc.objs, tc.opts)
			if tc.servers != nil {
				check.Equal(t, "servers", got.Servers, tc.servers)
			}
			check.Equal(t, "certificates", certNames(got.Certificates), tc.certs)
			if got.DefaultCertificate != tc.defaultCert {
				t.Errorf("DefaultCertificate = %q, want %q", got.DefaultCertificate, tc.defaultCert)
			}
			checkProblems(t, got.Problems, tc.problems)
		})
	}
}

func badSecret(t *testing.T) *corev1.Secret {
	s := tlsSecret(t, "default", "bad", "example")
	s.Data[corev1.TLSPrivateKeyKey] = testdata(t, "other.key")
	return s
}

func TestBuildCertificateContent(t *testing.T) {
	fallback := &config.Certificate{Name: "mine", Cert: testdata(t, "other.crt"), Key: testdata(t, "other.key")}
	opts := testOptions()
	opts.FallbackCertificate = fallback
	cfg := Build(newTestStore(t, append(webService(), tlsSecret(t, "default", "cert", "example"),
		newIngress("default", "ing", tlsFor("cert", "a.example.com"), rule("a.example.com", prefix("/", "web", 80))))...), opts)
	if len(cfg.Certificates) != 2 || cfg.DefaultCertificate != config.FallbackCertificateName {
		t.Fatalf("certificates %q, default %q", certNames(cfg.Certificates), cfg.DefaultCertificate)
	}
	for _, c := range cfg.Certificates {
		if c.Checksum != config.CertificateChecksum(c.Cert, c.Key) {
			t.Errorf("%s: checksum %q does not match its content", c.Name, c.Checksum)
		}
	}
	if string(cfg.Certificates[1].Cert) != string(testdata(t, "example.crt")) ||
		string(cfg.Certificates[1].Key) != string(testdata(t, "example.key")) {
		t.Error("default/cert does not hold the secret's tls.crt and tls.key")
	}
	if fallback.Name != "mine" || fallback.Checksum != "" {
		t.Error("Build modified Options.FallbackCertificate")
	}
}
