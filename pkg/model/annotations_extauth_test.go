package model

import (
	"github.com/ingress-sync/ingress-sync/test/testkit/check"

	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestParseAuthCacheDurations(t *testing.T) {
	tests := []struct {
		in   string
		want []config.AuthCacheDuration
		err  bool
	}{
		{"", []config.AuthCacheDuration{{Codes: []int{200, 202, 401}, Millis: 300000}}, false},
		{"200 202 10m", []config.AuthCacheDuration{{Codes: []int{200, 202}, Millis: 600000}}, false},
		{"5m", []config.AuthCacheDuration{{Millis: 300000}}, false},
		{"200 500ms, 401 1h", []config.AuthCacheDuration{{Codes: []int{200}, Millis: 500}, {Codes: []int{401}, Millis: 3600000}}, false},
		{"200 1y", []config.AuthCacheDuration{{Codes: []int{200}, Millis: 365 * 86400000}}, false},
		{"200", nil, true},
		{"200 forever", nil, true},
		{"5m 200", nil, true},
		{"99 5m", nil, true},
		{"600 5m", nil, true},
		{"200 0s", nil, true},
		{"200 2y", nil, true},
		{"200 1234567890s", nil, true},
	}
	for _, tc := range tests {
		got, err := intent.ParseAuthCacheDurations(tc.in)
		if (err != nil) != tc.err {
			t.Errorf("ParseAuthCacheDurations(%q): err %v", tc.in, err)
			continue
		}
		if !tc.err {
			check.Equal(t, tc.in, got, tc.want)
		}
	}
}

func TestSigninWithRedirect(t *testing.T) {
	const rd = "$pass_access_scheme://$http_host$escaped_request_uri"
	tests := []struct{ signin, param, want string }{
		{"https://auth.example.com/start", "", "https://auth.example.com/start?rd=" + rd},
		{"https://auth.example.com/start?", "", "https://auth.example.com/start?rd=" + rd},
		{"https://auth.example.com/start?x=1", "back", "https://auth.example.com/start?x=1&back=" + rd},
		{"https://$host/oauth2/start?rd=$escaped_request_uri", "", "https://$host/oauth2/start?rd=$escaped_request_uri"},
		{"https://a/start?rd=", "", "https://a/start?rd=&rd=" + rd},
	}
	for _, tc := range tests {
		if got := intent.SigninWithRedirect(tc.signin, tc.param); got != tc.want {
			t.Errorf("signinWithRedirect(%q, %q) = %q, want %q", tc.signin, tc.param, got, tc.want)
		}
	}
}

func configMapOf(ns, name string, kv ...string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		cm.Data[kv[i]] = kv[i+1]
	}
	return cm
}

// TestExternalAuthAnnotations: what the external auth annotations and the
// ConfigMap's global-auth-* keys give the Ingress's locations, and fail
// closed.
func TestExternalAuthAnnotations(t *testing.T) {
	const url = "http://auth.default.svc/verify"
	down := &config.ExternalAuth{Unavailable: true}
	withURL := func(kv ...string) []ingOpt {
		opts := []ingOpt{nginx("auth-url", url)}
		for i := 0; i+1 < len(kv); i += 2 {
			opts = append(opts, nginx(kv[i], kv[i+1]))
		}
		return opts
	}
	ctrl := func(kv ...string) runtime.Object { return configMapOf("ingress", "controller", kv...) }
	global := &config.ExternalAuth{URL: "http://global/auth", Host: "global", Signin: "https://login/start?rd=$pass_access_scheme://$http_host$escaped_request_uri"}
	tests := []struct {
		name     string
		opts     []ingOpt
		objs     []runtime.Object
		want     *config.ExternalAuth
		problems []string
	}{
		{"none", nil, nil, nil, nil},
		{"auth-url", withURL(), nil, &config.ExternalAuth{URL: url, Host: "auth.default.svc"}, nil},
		{"everything", withURL("auth-method", "POST", "auth-signin", "https://$host/oauth2/start?rd=$escaped_request_uri",
			"auth-response-headers", "X-User, ,X-Email", "auth-request-redirect", "https://a/b", "auth-cache-key", "$remote_user$http_authorization",
			"auth-always-set-cookie", "true", "auth-keepalive", "10", "auth-keepalive-share-vars", "true", "satisfy", "any",
			"auth-proxy-set-headers", "hdrs"), []runtime.Object{configMapOf("default", "hdrs", "X-B", "2", "X-A", "1")},
			&config.ExternalAuth{URL: url, Host: "auth.default.svc", Method: "POST", Signin: "https://$host/oauth2/start?rd=$escaped_request_uri",
				ResponseHeaders: []string{"X-User", "X-Email"}, RequestRedirect: "https://a/b", CacheKey: "$remote_user$http_authorization",
				CacheDurations: []config.AuthCacheDuration{{Codes: []int{200, 202, 401}, Millis: 300000}}, AlwaysSetCookie: true, SatisfyAny: true,
				ProxySetHeaders: []config.Header{{Name: "X-A", Value: "1"}, {Name: "X-B", Value: "2"}}}, nil},
		{"invalid keepalive: a Problem only", withURL("auth-keepalive", "-1"), nil, &config.ExternalAuth{URL: url, Host: "auth.default.svc"},
			[]string{"auth-keepalive"}},
		{"auth-signin without auth-url: ignored", []ingOpt{nginx("auth-signin", "https://x/")}, nil, nil, []string{"without " + ingress.AnnotationPrefix + "auth-url: ignored"}},
		{"bad auth-url", []ingOpt{nginx("auth-url", "ftp://x/")}, nil, down, []string{"must be an http:// or https:// URL; the Ingress's routes answer 503"}},
		{"bad method", withURL("auth-method", "get"), nil, down, []string{"must be one of"}},
		{"CONNECT", withURL("auth-method", "CONNECT"), nil, down, []string{"not supported"}},
		{"bad signin", withURL("auth-signin", "javascript:x"), nil, down, []string{"auth-signin"}},
		{"bad response headers", withURL("auth-response-headers", "X-A:b"), nil, down, []string{"auth-response-headers"}},
		{"bad cache key", withURL("auth-cache-key", "$document_root"), nil, down, []string{"auth-cache-key"}},
		{"bad duration", withURL("auth-cache-key", "$host", "auth-cache-duration", "200"), nil, down, []string{"auth-cache-duration"}},
		{"bad always-set-cookie", withURL("auth-always-set-cookie", "yes"), nil, down, []string{"auth-always-set-cookie"}},
		{"missing ConfigMap", withURL("auth-proxy-set-headers", "nope"), nil, down, []string{"ConfigMap default/nope not found"}},
		{"another namespace's ConfigMap", withURL("auth-proxy-set-headers", "other/hdrs"), []runtime.Object{configMapOf("other", "hdrs", "X-A", "1")},
			down, []string{"must be in the Ingress's namespace"}},
		{"a ConfigMap value with $", withURL("auth-proxy-set-headers", "hdrs"), []runtime.Object{configMapOf("default", "hdrs", "X-A", "$host")},
			down, []string{"holds '$'"}},
		{"global auth", nil, []runtime.Object{ctrl("global-auth-url", "http://global/auth", "global-auth-signin", "https://login/start")}, global, nil},
		{"global auth, opted out", []ingOpt{nginx("enable-global-auth", "false")},
			[]runtime.Object{ctrl("global-auth-url", "http://global/auth")}, nil, nil},
		{"global auth, own auth-url wins", withURL(), []runtime.Object{ctrl("global-auth-url", "http://global/auth")},
			&config.ExternalAuth{URL: url, Host: "auth.default.svc"}, nil},
		{"invalid global-auth-url: none", nil, []runtime.Object{ctrl("global-auth-url", "ftp://global/auth")}, nil, []string{"global-auth-url"}},
		{"no-auth-locations", nil, []runtime.Object{ctrl("global-auth-url", "http://global/auth", "no-auth-locations", "/a, /")}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := append([]ingOpt{rule("a.example.com", prefix("/", "web", 80))}, tc.opts...)
			objs := append([]runtime.Object{newIngress("default", "web", opts...), service("default", "web", svcPort("http", 80))}, tc.objs...)
			o := testOptions()
			o.ConfigMap = "ingress/controller"
			cfg := Build(newTestStore(t, objs...), o)
			checkProblems(t, cfg.Problems, tc.problems)
			i := slices.IndexFunc(cfg.Servers, func(s config.Server) bool { return s.Hostname == "a.example.com" })
			if i < 0 {
				t.Fatal("no server a.example.com")
			}
			for _, l := range cfg.Servers[i].Locations {
				if l.Ingress == "default/web" {
					check.Equal(t, "ExternalAuth", l.Settings.ExternalAuth, tc.want)
				}
			}
		})
	}
}

// externalAuth: an http(s) URL, templates of listed variables, valid
// header names and cache durations; nothing else when unavailable.
func (c *contract) externalAuth(where string, a *config.ExternalAuth) {
	if a == nil {
		return
	}
	if a.Unavailable {
		if a.URL != "" || a.Signin != "" || a.ProxySetHeaders != nil {
			c.fail("%s: unavailable external auth %+v", where, *a)
		}
		return
	}
	host, err := intent.ParseAuthURL(a.URL)
	if err != nil || host != a.Host || a.Method != "" && !slices.Contains(intent.AuthMethods, a.Method) {
		c.fail("%s: external auth URL %q host %q method %q", where, a.URL, a.Host, a.Method)
	}
	if a.Signin != "" && intent.ParseAuthSignin(a.Signin) != nil || a.CacheKey != "" && intent.ParseAuthTemplate(a.CacheKey, intent.CacheKeyChar) != nil {
		c.fail("%s: external auth signin %q cache key %q", where, a.Signin, a.CacheKey)
	}
	if hs, err := intent.ParseAuthHeaderList(strings.Join(a.ResponseHeaders, ",")); err != nil || len(hs) != len(a.ResponseHeaders) {
		c.fail("%s: external auth response headers %q", where, a.ResponseHeaders)
	}
	if a.RequestRedirect != "" {
		if _, err := intent.ParseRequestRedirect(a.RequestRedirect); err != nil {
			c.fail("%s: external auth request redirect %q", where, a.RequestRedirect)
		}
	}
	for _, d := range a.CacheDurations {
		if d.Millis <= 0 || d.Millis > intent.MaxAuthCacheMillis {
			c.fail("%s: external auth cache duration %+v", where, d)
		}
	}
	c.headers(where+" auth proxy-set-headers", a.ProxySetHeaders, true)
}
