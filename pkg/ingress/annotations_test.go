package ingress

import (
	"github.com/ingress-sync/ingress-sync/test/testkit/check"

	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

func TestParseAnnotations(t *testing.T) {
	tests := map[string]struct {
		in       map[string]string
		want     intent.Settings
		problems []string // substrings, in order
	}{
		"none": {},
		"other prefixes are not ours": {
			in: map[string]string{"example.com/proxy-read-timeout": "x", LegacyClassAnnotation: "nginx"},
		},
		"timeouts and body size": {
			in: map[string]string{AnnotationPrefix + "proxy-connect-timeout": "5", AnnotationPrefix + "proxy-read-timeout": "3600",
				AnnotationPrefix + "proxy-send-timeout": "1", AnnotationPrefix + "proxy-body-size": "8M"},
			want: intent.Settings{Location: config.LocationSettings{ProxyConnectTimeout: 5, ProxyReadTimeout: 3600,
				ProxySendTimeout: 1, ProxyBodySize: "8M"}},
		},
		"bad timeouts and sizes, injection attempts": {
			in: map[string]string{AnnotationPrefix + "proxy-connect-timeout": "0", AnnotationPrefix + "proxy-read-timeout": "1s; }",
				AnnotationPrefix + "proxy-send-timeout": "86401", AnnotationPrefix + "proxy-body-size": "1m\nlocation /x {",
				AnnotationPrefix + "ssl-redirect": "yes"},
			problems: []string{
				`proxy-body-size="1m\nlocation /x {": contains a newline; ignored`,
				`proxy-connect-timeout="0": must be between 1 and 86400`,
				`proxy-read-timeout="1s; }": contains ';'`,
				`proxy-send-timeout="86401": must be between 1 and 86400`,
				`ssl-redirect="yes": must be true or false`,
			},
		},
		"more bad values": {
			in: map[string]string{AnnotationPrefix + "proxy-body-size": "$host", AnnotationPrefix + "proxy-read-timeout": "+5",
				AnnotationPrefix + "backend-protocol": "FCGI", AnnotationPrefix + "load-balance": "random",
				AnnotationPrefix + "affinity": "ip", AnnotationPrefix + "use-regex": "maybe"},
			problems: []string{
				`affinity="ip": only cookie is supported`,
				`backend-protocol="FCGI": not supported: FCGI`,
				`load-balance="random": must be round_robin or ewma`,
				`proxy-body-size="$host": contains '$'`,
				`proxy-read-timeout="+5": must be a whole number`,
				`use-regex="maybe": must be true or false; ignored`,
			},
		},
		"use-regex": {
			in:   map[string]string{AnnotationPrefix + "use-regex": "true"},
			want: intent.Settings{UseRegex: true},
		},
		"use-regex false": {
			in: map[string]string{AnnotationPrefix + "use-regex": "false"},
		},
		"backend protocol in any case": {
			in:   map[string]string{AnnotationPrefix + "backend-protocol": "grpcs"},
			want: intent.Settings{Location: config.LocationSettings{BackendProtocol: "GRPCS"}},
		},
		"rewrite target with capture references": {
			in:   map[string]string{AnnotationPrefix + "rewrite-target": "/api/$1/$2"},
			want: intent.Settings{Location: config.LocationSettings{RewriteTarget: "/api/$1/$2"}},
		},
		"rewrite target with a variable, a quote or relative": {
			in: map[string]string{AnnotationPrefix + "rewrite-target": "/$host"},
			problems: []string{
				`rewrite-target="/$host": '$' may only start a capture reference`,
			},
		},
		"rewrite target injection": {
			in:       map[string]string{AnnotationPrefix + "rewrite-target": `/x" ; return 200 "`},
			problems: []string{`rewrite-target="/x\" ; return 200 \"": contains`},
		},
		"source ranges: sorted, masked, de-duplicated; allowlist wins": {
			in: map[string]string{AnnotationPrefix + "whitelist-source-range": "1.1.1.1",
				AnnotationPrefix + "allowlist-source-range": "10.1.2.3/8, 192.168.0.1,2001:db8::/32,10.0.0.0/8"},
			want: intent.Settings{Location: config.LocationSettings{
				AllowSourceRange: []string{"10.0.0.0/8", "192.168.0.1/32", "2001:db8::/32"}}},
		},
		"bad source ranges fail closed": {
			in: map[string]string{AnnotationPrefix + "whitelist-source-range": "10.0.0.0/8,,1.2.3.4",
				AnnotationPrefix + "allowlist-source-range": "10.0.0.0/33"},
			want:     intent.Settings{Location: config.LocationSettings{SourceRangeInvalid: true}, AllowlistInvalid: true},
			problems: []string{`"10.0.0.0/33" is not a CIDR`},
		},
		"redirects": {
			in:   map[string]string{AnnotationPrefix + "ssl-redirect": "false", AnnotationPrefix + "force-ssl-redirect": "true"},
			want: intent.Settings{SSLRedirect: new(false), ForceSSLRedirect: true},
		},
		"balancing with hash and affinity": {
			in: map[string]string{AnnotationPrefix + "load-balance": "ewma", AnnotationPrefix + "upstream-hash-by": "$host$request_uri",
				AnnotationPrefix + "affinity": "cookie", AnnotationPrefix + "session-cookie-name": "route",
				AnnotationPrefix + "session-cookie-path": "/app", AnnotationPrefix + "session-cookie-max-age": "3600"},
			want: intent.Settings{Balancing: &intent.Balancing{LoadBalance: "ewma", HashBy: "$host$request_uri",
				Affinity: &config.Affinity{CookieName: "route", Mode: config.AffinityBalanced, CookiePath: "/app", CookieMaxAge: 3600}}},
		},
		"affinity defaults; cookie settings without affinity are ignored": {
			in:   map[string]string{AnnotationPrefix + "affinity": "cookie"},
			want: intent.Settings{Balancing: &intent.Balancing{LoadBalance: config.LoadBalanceRoundRobin, Affinity: &config.Affinity{CookieName: config.DefaultCookieName, Mode: config.AffinityBalanced}}},
		},
		"cookie settings alone": {
			in: map[string]string{AnnotationPrefix + "session-cookie-name": "x"},
		},
		"bad hash and cookie values": {
			in: map[string]string{AnnotationPrefix + "upstream-hash-by": "$request_uri;", AnnotationPrefix + "session-cookie-name": "a=b",
				AnnotationPrefix + "session-cookie-path": "app", AnnotationPrefix + "session-cookie-max-age": "-1",
				AnnotationPrefix + "affinity": "cookie"},
			want: intent.Settings{Balancing: &intent.Balancing{LoadBalance: config.LoadBalanceRoundRobin, Affinity: &config.Affinity{CookieName: config.DefaultCookieName, Mode: config.AffinityBalanced}}},
			problems: []string{
				`session-cookie-max-age="-1": must be a whole number`,
				`session-cookie-name="a=b": may only contain`,
				`session-cookie-path="app": must be an absolute path`,
				`upstream-hash-by="$request_uri;": may only contain nginx variables`,
			},
		},
		"hash-by allow-list": {
			in:       map[string]string{AnnotationPrefix + "upstream-hash-by": "$arg_X.y"},
			problems: []string{`upstream-hash-by="$arg_X.y": may only contain nginx variables`},
		},
		"snippets are collected, not parsed": {
			in:   map[string]string{AnnotationPrefix + "server-snippet": "return 200;", AnnotationPrefix + "configuration-snippet": "x"},
			want: intent.Settings{Snippets: []string{AnnotationPrefix + "configuration-snippet", AnnotationPrefix + "server-snippet"}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := parseAnnotations(tc.in)
			ok := len(got.Problems) == len(tc.problems)
			for i := 0; ok && i < len(tc.problems); i++ {
				ok = strings.Contains(got.Problems[i], tc.problems[i])
			}
			if !ok {
				t.Errorf("problems:\n got  %q\n want %q", got.Problems, tc.problems)
			}
			got.Problems = nil
			check.Equal(t, "annotations", got, tc.want)
		})
	}
}

func TestValueParsers(t *testing.T) {
	tests := map[string]struct {
		parse func(string) error
		good  []string
		bad   []string
	}{
		"size": {
			parse: func(v string) error { _, err := parseSize(v); return err },
			good:  []string{"0", "1m", "512k", "2G", "100"},
			bad:   []string{"", "m", "1mb", "1.5m", "-1m", "1 m", "1m;", "9999999999999m"},
		},
		"timeout": {
			parse: func(v string) error { _, err := parseTimeout(v); return err },
			good:  []string{"1", "60", "3600"},
			bad:   []string{"", "0", "86401", "60s", "1e3", " 5", "99999999999"},
		},
		"rewrite target": {
			parse: func(v string) error { _, err := parseRewriteTarget(v); return err },
			good:  []string{"/", "/$1", "/api/$0x/$9", "/a-b_c~d"},
			bad:   []string{"$1", "/$", "/$a", "/${1}", "/a b", "/a?b", "/a#b"},
		},
		"cookie name": {
			parse: func(v string) error { _, err := parseCookieName(v); return err },
			good:  []string{"INGRESSCOOKIE", "route-1", "a.b_c"},
			bad:   []string{"", "a b", "a=b", "a,b", strings.Repeat("a", 65)},
		},
		"forbidden characters": {
			parse: func(v string) error { return checkForbidden(v, false) },
			good:  []string{"", "abc", "1m", "/x/y"},
			bad:   []string{"a\nb", "a\rb", "a;b", "a{", "}", `"`, "'", "`", `\`, "$x", "a\x00b", "a\tb", strings.Repeat("a", intent.MaxValueLen+1)},
		},
		"path": {
			parse: intent.ValidatePath,
			good:  []string{"/", "/foo", "/foo/", "/a-b/c_d.e~f", "/%41", "/a:b@c"},
			bad:   []string{"", "foo", "/a b", "/a;b", "/a{b}", "/a$b", "/a'b", `/a"b`, "/a//b", "/./a", "/a/..", "/a/.", "/a\\b", "/" + strings.Repeat("a", 1024)},
		},
		"host": {
			parse: intent.ValidHost,
			good:  []string{"a.com", "*.a.com", "*.com", "a-b.c-d.e", "xn--bcher-kva.example"},
			bad:   []string{"", "*", "*.", "a.*.com", "**.a.com", "A.com", "a_b.com", "-a.com", "a-.com", "a..com", "a.com.", "a com"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			for _, v := range tc.good {
				if err := tc.parse(v); err != nil {
					t.Errorf("%q: %v", v, err)
				}
			}
			for _, v := range tc.bad {
				if err := tc.parse(v); err == nil {
					t.Errorf("%q accepted", v)
				}
			}
		})
	}
}

// TestSizeBytes checks Size.Bytes and parseSize together: parseSize
// accepts exactly the sizes Bytes converts.
func TestSizeBytes(t *testing.T) {
	tests := map[string]struct {
		in   string
		want int64 // -1: rejected
	}{
		"zero":                     {"0", 0},
		"one byte":                 {"1", 1},
		"kilobytes":                {"8k", 8 << 10},
		"upper-case unit":          {"8K", 8 << 10},
		"megabytes":                {"1m", 1 << 20},
		"upper-case megabytes":     {"2M", 2 << 20},
		"zero gigabytes":           {"0g", 0},
		"1024g is the maximum":     {"1024g", config.MaxSizeBytes},
		"maximum in bytes":         {"1099511627776", config.MaxSizeBytes},
		"maximum in kilobytes":     {"1073741824k", config.MaxSizeBytes},
		"maximum in megabytes":     {"1048576M", config.MaxSizeBytes},
		"eleven digits of bytes":   {"99999999999", 99999999999},
		"leading zeros":            {"0008k", 8 << 10},
		"1025g":                    {"1025g", -1},
		"one byte over in bytes":   {"1099511627777", -1},
		"one over in kilobytes":    {"1073741825k", -1},
		"one over in megabytes":    {"1048577m", -1},
		"13 digits over":           {"9999999999999", -1},
		"14 digits":                {"00000000000001", -1},
		"14 digits with a unit":    {"00000000000001k", -1},
		"empty":                    {"", -1},
		"unit only":                {"m", -1},
		"negative":                 {"-1", -1},
		"plus sign":                {"+1", -1},
		"fraction":                 {"1.5m", -1},
		"exponent":                 {"1e3", -1},
		"two units":                {"8mm", -1},
		"unit with b":              {"1mb", -1},
		"terabytes":                {"1t", -1},
		"space":                    {" 1", -1},
		"trailing space":           {"1 ", -1},
		"non-ASCII digit":          {"١", -1},
		"overflowing int64 digits": {"9223372036854775808", -1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			n, ok := config.Size(tc.in).Bytes()
			if ok != (tc.want >= 0) || ok && n != tc.want {
				t.Errorf("Bytes(%q) = %d, %v; want %d", tc.in, n, ok, tc.want)
			}
			s, err := parseSize(tc.in)
			if (err == nil) != ok || err == nil && string(s) != tc.in {
				t.Errorf("parseSize(%q) = %q, %v; Bytes ok %v", tc.in, s, err, ok)
			}
		})
	}
}
