package model

import (
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"

	"github.com/ingress-sync/ingress-sync/test/testkit/check"

	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestBuildGlobal(t *testing.T) {
	withCM := func(o *Options) { o.ConfigMap = "ingress/cfg" }
	custom := config.DefaultGlobal()
	custom.SSLRedirect, custom.ProxyConnectTimeout, custom.ProxyReadTimeout, custom.ProxySendTimeout = false, 10, 300, 30
	custom.ProxyBodySize, custom.UpstreamKeepalive, custom.UseForwardedHeaders, custom.AllowSnippets = "0", 64, true, true
	tests := map[string]struct {
		objs     []runtime.Object
		opts     func(*Options)
		want     config.Global
		problems []string
	}{
		"defaults without a config map option": {want: config.DefaultGlobal()},
		"defaults when the config map is absent": {
			opts: withCM,
			want: config.DefaultGlobal(),
		},
		"every key": {
			objs: one(fixtures.ConfigMap("ingress", "cfg", "ssl-redirect", "false", "proxy-connect-timeout", "10",
				"proxy-read-timeout", "300", "proxy-send-timeout", "30", "proxy-body-size", "0",
				"upstream-keepalive-connections", "64", "use-forwarded-headers", "true", "allow-snippet-annotations", "true")),
			opts: withCM,
			want: custom,
		},
		"invalid values keep the defaults": {
			objs: one(fixtures.ConfigMap("ingress", "cfg", "ssl-redirect", "maybe", "proxy-read-timeout", "60s",
				"proxy-body-size", "1m;", "upstream-keepalive-connections", "-1", "lua-shared-dicts", "cfg: 10")),
			opts: withCM,
			want: config.DefaultGlobal(),
			problems: []string{
				`ConfigMap ingress/cfg: key lua-shared-dicts="cfg: 10": not supported; default kept`,
				`key proxy-body-size="1m;": contains ';'; default kept`,
				`key proxy-read-timeout="60s": must be a whole number`,
				`key ssl-redirect="maybe": must be true or false`,
				`key upstream-keepalive-connections="-1": must be a whole number`,
			},
		},
		"malformed option": {
			opts:     func(o *Options) { o.ConfigMap = "cfg" },
			want:     config.DefaultGlobal(),
			problems: []string{`Options /configmap: "cfg" is not namespace/name`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := buildWith(t, tc.objs, tc.opts)
			check.Equal(t, "global", got.Global, tc.want)
			checkProblems(t, got.Problems, tc.problems)
		})
	}
}

// TestConfigMapKeepsPreviousValue applies ConfigMap versions in turn: an
// invalid value keeps the key's last valid value, a removed key goes back
// to its default.
func TestConfigMapKeepsPreviousValue(t *testing.T) {
	steps := []struct {
		name     string
		data     []string
		level    int
		types    string
		problems []string
	}{
		{"first", []string{"gzip-level", "5", "gzip-types", "text/css"}, 5, "text/css", nil},
		{"bad level", []string{"gzip-level", "99", "gzip-types", "text/css"}, 5, "text/css",
			[]string{`key gzip-level="99": must be between 1 and 9; previous value "5" kept`}},
		{"bad again, other key changes", []string{"gzip-level", "x", "gzip-types", "text/plain"}, 5, "text/plain",
			[]string{`key gzip-level="x": must be a whole number; previous value "5" kept`}},
		{"bad types", []string{"gzip-level", "6", "gzip-types", "text/plain;"}, 6, "text/plain",
			[]string{`key gzip-types="text/plain;": contains ';'; previous value "text/plain" kept`}},
		{"key removed", []string{"gzip-types", "text/plain"}, 1, "text/plain", nil},
		{"bad after removal", []string{"gzip-level", "0", "gzip-types", "text/plain"}, 1, "text/plain",
			[]string{`key gzip-level="0": must be between 1 and 9; default kept`}},
	}
	s := NewStore(ingress.NewSource())
	opts := testOptions()
	opts.ConfigMap = "ingress/cfg"
	for _, st := range steps {
		if _, err := s.Apply(upsertEvent(fixtures.ConfigMap("ingress", "cfg", st.data...))); err != nil {
			t.Fatal(err)
		}
		cfg := Build(s, opts)
		if n := cfg.Global.Nginx; n.GzipLevel != st.level || n.GzipTypes != st.types {
			t.Errorf("%s: gzip-level %d types %q, want %d %q", st.name, n.GzipLevel, n.GzipTypes, st.level, st.types)
		}
		checkProblems(t, cfg.Problems, st.problems)
	}
	if _, err := s.Apply(events.Event{Op: events.OpDelete, Kind: events.KindConfigMap, Namespace: "ingress", Name: "cfg"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(upsertEvent(fixtures.ConfigMap("ingress", "cfg", "gzip-level", "99"))); err != nil {
		t.Fatal(err)
	}
	if g := Build(s, opts).Global; g.Nginx.GzipLevel != 1 {
		t.Errorf("after delete and a bad value: gzip-level %d, want the default", g.Nginx.GzipLevel)
	}
}

// TestGlobalReloads checks which ConfigMap keys reload nginx (Diff, as
// Global.rendered decides) and which change routes only.
func TestGlobalReloads(t *testing.T) {
	tests := map[string]struct {
		kv     []string
		reload bool
	}{
		"gzip":                {[]string{"use-gzip", "true"}, true},
		"ssl protocols":       {[]string{"ssl-protocols", "TLSv1.3"}, true},
		"keep-alive":          {[]string{"keep-alive", "10"}, true},
		"upstream keep-alive": {[]string{"upstream-keepalive-timeout", "10"}, true},
		"client timeout":      {[]string{"client-body-timeout", "10"}, true},
		"http2":               {[]string{"use-http2", "false"}, true},
		"log format":          {[]string{"log-format-upstream", "$status"}, true},
		"hsts":                {[]string{"hsts-max-age", "10"}, true},
		"workers":             {[]string{"worker-processes", "2"}, true},
		// The proxy timeouts and the body size are route defaults: nginx.conf
		// holds ingress-nginx's, Build puts others into the routes.
		"proxy timeout":      {[]string{"proxy-read-timeout", "10"}, false},
		"body size":          {[]string{"proxy-body-size", "2m"}, false},
		"limit rate":         {[]string{"limit-rate", "100", "limit-rate-after", "10"}, false},
		"no-tls-redirect":    {[]string{"no-tls-redirect-locations", "/x"}, false},
		"redirect code":      {[]string{"http-redirect-code", "301"}, true},
		"hide headers":       {[]string{"hide-headers", "x-debug"}, true},
		"limit status codes": {[]string{"limit-req-status-code", "429", "limit-conn-status-code", "429"}, false},
		"ssl-redirect":       {[]string{"ssl-redirect", "false"}, false},
		"force-ssl-redirect": {[]string{"force-ssl-redirect", "true"}, false},
		"snippets":           {[]string{"allow-snippet-annotations", "true"}, false},
		"bad value":          {[]string{"gzip-level", "77"}, false},
		"unknown key":        {[]string{"jaeger-service-name", "nginx"}, false},
	}
	opts := testOptions()
	opts.ConfigMap = "ingress/cfg"
	base := one(webService()[0], newIngress("default", "ing", rule("a.example.com", prefix("/", "web", 80))))
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := newTestStore(t, base...)
			old := Build(s, opts)
			if _, err := s.Apply(upsertEvent(fixtures.ConfigMap("ingress", "cfg", tc.kv...))); err != nil {
				t.Fatal(err)
			}
			if ch := config.Diff(old, Build(s, opts)); ch.Reload != tc.reload {
				t.Errorf("Reload = %v (%q), want %v", ch.Reload, ch.ReloadReasons, tc.reload)
			}
		})
	}
}

// TestGlobalForceSSLRedirect: the ConfigMap's force-ssl-redirect is the
// default of the annotation, on hosts with and without TLS; an Ingress
// opts out with force-ssl-redirect "false".
func TestGlobalForceSSLRedirect(t *testing.T) {
	opts := func(o *Options) { o.ConfigMap = "ingress/cfg" }
	tests := map[string]struct {
		cm   []string
		ann  []ingOpt
		want bool
	}{
		"off by default":         {want: false},
		"global on":              {cm: []string{"force-ssl-redirect", "true"}, want: true},
		"global on, opted out":   {cm: []string{"force-ssl-redirect", "true"}, ann: []ingOpt{nginx("force-ssl-redirect", "false")}, want: false},
		"global on, invalid":     {cm: []string{"force-ssl-redirect", "true"}, ann: []ingOpt{nginx("force-ssl-redirect", "maybe")}, want: true},
		"global off, annotation": {cm: []string{"force-ssl-redirect", "false"}, ann: []ingOpt{nginx("force-ssl-redirect", "true")}, want: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ing := newIngress("default", "ing", append(tc.ann, rule("plain.example.com", prefix("/", "web", 80)))...)
			objects := objs(webService(), one(ing))
			if tc.cm != nil {
				objects = append(objects, fixtures.ConfigMap("ingress", "cfg", tc.cm...))
			}
			cfg := buildWith(t, objects, opts)
			for i := range cfg.Servers {
				s := &cfg.Servers[i]
				if s.Hostname != "plain.example.com" {
					continue
				}
				if got := s.RedirectsToHTTPS(&s.Locations[0]); got != tc.want {
					t.Errorf("redirect %v, want %v", got, tc.want)
				}
				return
			}
			t.Fatal("no server plain.example.com")
		})
	}
}

// TestGlobalProxyDefaults: the ConfigMap's proxy settings are route
// defaults; an annotation wins field by field; values equal to
// ingress-nginx's defaults are not kept; a change reloads nothing.
func TestGlobalProxyDefaults(t *testing.T) {
	opts := testOptions()
	opts.ConfigMap = "ingress/cfg"
	build := func(kv ...string) *config.Configuration {
		return Build(newTestStore(t, append(objs(webService()), fixtures.ConfigMap("ingress", "cfg", kv...),
			newIngress("default", "ing", rule("a.example.com", prefix("/", "web", 80))),
			newIngress("default", "own", nginx("proxy-http-version", "1.1"), nginx("proxy-next-upstream-tries", "5"),
				rule("b.example.com", prefix("/", "web", 80))))...), opts)
	}
	proxyOf := func(cfg *config.Configuration, host string) *config.ProxySettings {
		for _, s := range cfg.Servers {
			if s.Hostname == host {
				return s.Locations[0].Settings.Proxy
			}
		}
		t.Fatalf("no host %s", host)
		return nil
	}
	if p := proxyOf(build("proxy-request-buffering", "on", "proxy-http-version", "1.1", "proxy-next-upstream-tries", "3"), "a.example.com"); p != nil {
		t.Errorf("ingress-nginx's defaults in the ConfigMap give %+v, want none", *p)
	}
	old := build()
	cfg := build("proxy-request-buffering", "off", "proxy-http-version", "1.0", "proxy-next-upstream", "off",
		"proxy-cookie-path", "/in /", "proxy-redirect-from", "http://in/", "proxy-redirect-to", "https://out/")
	want := config.ProxySettings{RequestBuffering: "off", HTTPVersion: "1.0", NextUpstreamTries: 1, CookiePathFrom: "/in", CookiePathTo: "/",
		RedirectFrom: "http://in/", RedirectTo: "https://out/"}
	if p := proxyOf(cfg, "a.example.com"); p == nil || *p != want {
		t.Errorf("a.example.com: %+v, want %+v", p, want)
	}
	own := want
	own.HTTPVersion, own.NextUpstreamTries = "1.1", 5
	if p := proxyOf(cfg, "b.example.com"); p == nil || *p != own {
		t.Errorf("b.example.com: %+v, want %+v (its annotations win)", p, own)
	}
	if ch := config.Diff(old, cfg); ch.Reload || len(ch.ServersUpserted) == 0 {
		t.Errorf("reload %v (%q), %d servers upserted; want routes only", ch.Reload, ch.ReloadReasons, len(ch.ServersUpserted))
	}
	opts = testOptions()
	opts.ConfigMap = "ingress/cfg"
	if problems := Build(newTestStore(t, fixtures.ConfigMap("ingress", "cfg", "proxy-http-version", "2")), opts).Problems; len(problems) != 1 {
		t.Errorf("proxy-http-version 2: problems %q, want one", problemStrings(problems))
	}
}
