package ingress

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

func TestAffinityValues(t *testing.T) {
	tests := map[string]struct {
		parse     func(string) error
		good, bad []string
	}{
		"upstream-hash-by": {
			parse: func(v string) error { _, err := parseHashBy(v); return err },
			good: []string{"$request_uri", "$host$request_uri", "$request_uri$host", "$cookie_JSESSIONID", "$arg_x",
				"$http_x_y", "${request_uri}-text-value", "text", "$binary_remote_addr", "$1", strings.Repeat("a", 256)},
			bad: []string{"", "$host uri", "$arg_x.y", "$uri/x", "$host:$port", "$a;", strings.Repeat("a", 257)},
		},
		"upstream-hash-by-subset-size": {
			parse: func(v string) error { _, err := parseSubsetSize(v); return err },
			good:  []string{"0", "1", "3", "1000"},
			bad:   []string{"", "-1", "1001", "3x", "2.5"},
		},
		"session-cookie-name": {
			parse: func(v string) error { _, err := parseCookieName(v); return err },
			good:  []string{"INGRESSCOOKIE", "route-1", "a.b_c", "JSESSIONID"},
			bad:   []string{"", "a b", "a=b", "a,b", "a;b", strings.Repeat("a", 65)},
		},
		"session-cookie-domain": {
			parse: func(v string) error { _, err := parseCookieDomain(v); return err },
			good:  []string{"foo.bar", ".example.com", "a-b.example"},
			bad:   []string{"", ".", "a b", "a;b", "a_b.com", "ü.com", strings.Repeat("a", 254)},
		},
		"session-cookie-samesite": {
			parse: func(v string) error { _, err := parseSameSite(v); return err },
			good:  []string{"None", "none", "Lax", "STRICT", " lax "},
			bad:   []string{"", "no", "None;", "Lax Strict"},
		},
		"affinity-mode": {
			parse: func(v string) error { return parseOption(v, config.AffinityBalanced, config.AffinityPersistent) },
			good:  []string{"balanced", "persistent", " persistent "},
			bad:   []string{"", "Balanced", "sticky"},
		},
		"affinity-canary-behavior": {
			parse: func(v string) error { _, err := parseCanaryBehavior(v); return err },
			good:  []string{"sticky", "legacy"},
			bad:   []string{"", "Legacy", "none"},
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

func TestAffinityAnnotations(t *testing.T) {
	full := &config.Affinity{CookieName: "SERVERID", Mode: config.AffinityPersistent, CookiePath: "/app", CookieDomain: "foo.bar",
		CookieMaxAge: 259200, CookieExpires: 172800, CookieSecure: true, CookieSameSite: "None",
		ConditionalSameSiteNone: true, ChangeOnFailure: true}
	tests := map[string]struct {
		in       map[string]string
		want     *intent.Balancing
		legacy   bool
		problems []string
	}{
		"every cookie setting": {
			in: map[string]string{"affinity": "cookie", "affinity-mode": "persistent", "session-cookie-name": "SERVERID",
				"session-cookie-path": "/app", "session-cookie-domain": "foo.bar", "session-cookie-max-age": "259200",
				"session-cookie-expires": "172800", "session-cookie-secure": "true", "session-cookie-samesite": "none",
				"session-cookie-conditional-samesite-none": "true", "session-cookie-change-on-failure": "true"},
			want: &intent.Balancing{LoadBalance: config.LoadBalanceRoundRobin, Affinity: full},
		},
		"defaults: INGRESSCOOKIE, balanced": {
			in:   map[string]string{"affinity": " cookie"},
			want: &intent.Balancing{LoadBalance: config.LoadBalanceRoundRobin, Affinity: &config.Affinity{CookieName: config.DefaultCookieName, Mode: config.AffinityBalanced}},
		},
		"cookie settings and mode without affinity mean nothing": {
			in: map[string]string{"affinity-mode": "persistent", "session-cookie-secure": "true", "session-cookie-domain": "a.b"},
		},
		"bad values are left out": {
			in: map[string]string{"affinity": "cookie", "affinity-mode": "sticky", "session-cookie-max-age": "0",
				"session-cookie-expires": "-1", "session-cookie-samesite": "always", "session-cookie-secure": "yes",
				"session-cookie-domain": "a b"},
			want: &intent.Balancing{LoadBalance: config.LoadBalanceRoundRobin, Affinity: &config.Affinity{CookieName: config.DefaultCookieName, Mode: config.AffinityBalanced}},
			problems: []string{`affinity-mode="sticky": must be balanced or persistent`,
				`session-cookie-domain="a b": must be a domain name`, `session-cookie-expires="-1": must be a whole number`,
				`session-cookie-max-age="0": must be between 1 and 2147483647`, `session-cookie-samesite="always": must be None, Lax or Strict`,
				`session-cookie-secure="yes": must be true or false`},
		},
		"only cookie affinity": {
			in:       map[string]string{"affinity": "ip"},
			problems: []string{`affinity="ip": only cookie is supported`},
		},
		"hash with subset, default size 3": {
			in:   map[string]string{"upstream-hash-by": "$cookie_JSESSIONID", "upstream-hash-by-subset": "true"},
			want: &intent.Balancing{LoadBalance: config.LoadBalanceRoundRobin, HashBy: "$cookie_JSESSIONID", SubsetSize: 3},
		},
		"subset size 0 is the default": {
			in:   map[string]string{"upstream-hash-by": "${request_uri}-text-value", "upstream-hash-by-subset": "true", "upstream-hash-by-subset-size": "0"},
			want: &intent.Balancing{LoadBalance: config.LoadBalanceRoundRobin, HashBy: "${request_uri}-text-value", SubsetSize: 3},
		},
		"subset size": {
			in:   map[string]string{"upstream-hash-by": "$arg_x", "upstream-hash-by-subset": "true", "upstream-hash-by-subset-size": "2"},
			want: &intent.Balancing{LoadBalance: config.LoadBalanceRoundRobin, HashBy: "$arg_x", SubsetSize: 2},
		},
		"subset without subset=true, or without hash, means nothing": {
			in:   map[string]string{"upstream-hash-by": "$arg_x", "upstream-hash-by-subset-size": "2"},
			want: &intent.Balancing{LoadBalance: config.LoadBalanceRoundRobin, HashBy: "$arg_x"},
		},
		"bad hash": {
			in:       map[string]string{"upstream-hash-by": "$uri/x"},
			problems: []string{`upstream-hash-by="$uri/x": may only contain`},
		},
		"canary behavior legacy is not a backend setting": {
			in:     map[string]string{"affinity-canary-behavior": "legacy"},
			legacy: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := map[string]string{}
			for k, v := range tc.in {
				in[AnnotationPrefix+k] = v
			}
			got := parseAnnotations(in)
			if !reflect.DeepEqual(got.Balancing, tc.want) {
				t.Errorf("balancing = %+v (affinity %+v), want %+v", got.Balancing, affinityOf(got.Balancing), tc.want)
			}
			if got.AffinityCanaryLegacy != tc.legacy {
				t.Errorf("affinityCanaryLegacy = %v", got.AffinityCanaryLegacy)
			}
			if len(got.Problems) != len(tc.problems) {
				t.Fatalf("problems %q, want %q", got.Problems, tc.problems)
			}
			for i, p := range tc.problems {
				if !strings.Contains(got.Problems[i], p) {
					t.Errorf("problem %q, want it to contain %q", got.Problems[i], p)
				}
			}
		})
	}
}

func affinityOf(b *intent.Balancing) *config.Affinity {
	if b == nil {
		return nil
	}
	return b.Affinity
}
