package ingress

import (
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"

	"reflect"
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/config"
)

func TestParseProxyAnnotations(t *testing.T) {
	cases := map[string]struct {
		in       map[string]string
		want     *config.ProxySettings
		problems []string // substrings, one per problem, in order
	}{
		"none": {in: map[string]string{"proxy-body-size": "1m"}},
		"buffering, request buffering and HTTP version": {
			in:   map[string]string{"proxy-buffering": "on", "proxy-request-buffering": "OFF", "proxy-http-version": "1.0"},
			want: &config.ProxySettings{Buffering: "on", RequestBuffering: "off", HTTPVersion: "1.0"},
		},
		"bad enums": {
			in:       map[string]string{"proxy-buffering": "yes", "proxy-http-version": "2", "proxy-request-buffering": ""},
			problems: []string{"proxy-buffering=\"yes\": must be on or off", "proxy-http-version=\"2\": must be 1.0 or 1.1", "proxy-request-buffering=\"\": must be on or off"},
		},
		"tries": {in: map[string]string{"proxy-next-upstream-tries": "5"}, want: &config.ProxySettings{NextUpstreamTries: 5}},
		"tries 0 is no limit": {
			in: map[string]string{"proxy-next-upstream-tries": "0"}, want: &config.ProxySettings{NextUpstreamTries: MaxNextUpstreamTries},
		},
		"tries beyond the bound": {
			in: map[string]string{"proxy-next-upstream-tries": "888888"}, want: &config.ProxySettings{NextUpstreamTries: MaxNextUpstreamTries},
		},
		"next upstream off is one try, whatever tries says": {
			in:   map[string]string{"proxy-next-upstream": "off", "proxy-next-upstream-tries": "5"},
			want: &config.ProxySettings{NextUpstreamTries: 1},
		},
		"next upstream error timeout is nginx.conf's": {in: map[string]string{"proxy-next-upstream": "timeout error"}},
		"next upstream http_502 cannot vary per route": {
			in:       map[string]string{"proxy-next-upstream": "error timeout http_502"},
			problems: []string{"condition http_502 not supported per Ingress"},
		},
		"next upstream unknown condition": {
			in: map[string]string{"proxy-next-upstream": "error always"}, problems: []string{"must be nginx proxy_next_upstream conditions"},
		},
		"redirect from and to": {
			in:   map[string]string{"proxy-redirect-from": "http://internal.example.com/", "proxy-redirect-to": "https://www.example.com/app?x=1"},
			want: &config.ProxySettings{RedirectFrom: "http://internal.example.com/", RedirectTo: "https://www.example.com/app?x=1"},
		},
		"redirect from alone, default and off mean nothing": {
			in: map[string]string{"proxy-redirect-from": "http://a.example.com/"},
		},
		"redirect default": {in: map[string]string{"proxy-redirect-from": "default", "proxy-redirect-to": "/x"}},
		"redirect to off":  {in: map[string]string{"proxy-redirect-from": "/a", "proxy-redirect-to": "off"}},
		"redirect with a space or a variable": {
			in:       map[string]string{"proxy-redirect-from": "/a b", "proxy-redirect-to": "$host"},
			problems: []string{"proxy-redirect-from=\"/a b\": must be a URL", "proxy-redirect-to=\"$host\": contains '$'"},
		},
		"cookie domain and path": {
			in:   map[string]string{"proxy-cookie-domain": "localhost  example.org", "proxy-cookie-path": "/one/ /"},
			want: &config.ProxySettings{CookieDomainFrom: "localhost", CookieDomainTo: "example.org", CookiePathFrom: "/one/", CookiePathTo: "/"},
		},
		"cookie off":       {in: map[string]string{"proxy-cookie-domain": "off", "proxy-cookie-path": "off"}},
		"cookie one value": {in: map[string]string{"proxy-cookie-path": "/one/"}, problems: []string{"must be off or two values"}},
		"access log off": {
			in: map[string]string{"enable-access-log": "false"}, want: &config.ProxySettings{NoAccessLog: true},
		},
		"access log on is the default": {in: map[string]string{"enable-access-log": "true"}},
		"rewrite log": {
			in: map[string]string{"enable-rewrite-log": "true"}, problems: []string{"enable-rewrite-log=\"true\": not supported: ingress-sync rewrites paths in Lua"},
		},
		"sizes cannot vary per route, bad sizes are bad": {
			in: map[string]string{"proxy-buffer-size": "16x", "proxy-busy-buffers-size": "x", "client-body-buffer-size": "1m",
				"proxy-buffers-number": "8", "proxy-max-temp-file-size": "0", "proxy-next-upstream-timeout": "10"},
			problems: []string{"client-body-buffer-size=\"1m\": not supported per Ingress", "proxy-buffer-size=\"16x\": must be an nginx size",
				"proxy-buffers-number=\"8\": not supported per Ingress", "proxy-busy-buffers-size=\"x\": must be an nginx size",
				"proxy-max-temp-file-size=\"0\": not supported per Ingress", "proxy-next-upstream-timeout=\"10\": not supported per Ingress"},
		},
		"AUTO_HTTP": {in: map[string]string{"backend-protocol": "auto_http"}},
		"FCGI": {
			in: map[string]string{"backend-protocol": "FCGI"}, problems: []string{"not supported: FCGI backends need fastcgi_param lines"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := map[string]string{}
			for k, v := range tc.in {
				in[AnnotationPrefix+k] = v
			}
			a := parseAnnotations(in)
			if !reflect.DeepEqual(a.Location.Proxy, tc.want) {
				t.Errorf("Proxy = %+v, want %+v", a.Location.Proxy, tc.want)
			}
			if len(a.Problems) != len(tc.problems) {
				t.Fatalf("problems %q, want %q", a.Problems, tc.problems)
			}
			for i, p := range tc.problems {
				if !strings.Contains(a.Problems[i], p) {
					t.Errorf("problem %q lacks %q", a.Problems[i], p)
				}
			}
		})
	}
}

func TestParseTimeoutAsConfigMap(t *testing.T) {
	for v, ok := range map[string]bool{"1": true, "3601": true, "86400": true, "86401": false, "0": false, "60s": false, "-1": false} {
		_, err := parseTimeout(v)
		_, gerr := parseGlobal(fixtures.ConfigMap("ns", "c", "proxy-read-timeout", v))
		if (err == nil) != ok || (len(gerr) == 0) != ok {
			t.Errorf("%q: annotation error %v, ConfigMap problems %q, want ok=%v", v, err, gerr, ok)
		}
	}
}
