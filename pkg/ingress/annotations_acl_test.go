package ingress

import (
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"

	"slices"
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// TestParseSourceRangeAnnotations: allow- and deny-lists, which name wins,
// and fail closed on a list that cannot be applied.
func TestParseSourceRangeAnnotations(t *testing.T) {
	for name, tc := range map[string]struct {
		in                 map[string]string
		allow, deny        []string
		invalid            bool
		problem, noProblem string
	}{
		"allowlist wins over whitelist": {
			in:    map[string]string{"allowlist-source-range": "10.0.0.1/8", "whitelist-source-range": "192.0.2.1"},
			allow: []string{"10.0.0.0/8"},
		},
		"whitelist alone": {
			in:    map[string]string{"whitelist-source-range": "192.0.2.1, 2001:db8::1/32"},
			allow: []string{"192.0.2.1/32", "2001:db8::/32"},
		},
		"deny and allow together": {
			in:    map[string]string{"denylist-source-range": "10.1.0.0/16", "allowlist-source-range": "10.0.0.0/8"},
			allow: []string{"10.0.0.0/8"}, deny: []string{"10.1.0.0/16"},
		},
		"an invalid deny-list fails closed": {
			in:      map[string]string{"denylist-source-range": "10.0.0.0/8,nonsense", "allowlist-source-range": "10.0.0.0/8"},
			allow:   []string{"10.0.0.0/8"},
			invalid: true, problem: "answer 503",
		},
		"an invalid allowlist fails closed, whitelist not read": {
			in:      map[string]string{"allowlist-source-range": "10.0.0.0/33", "whitelist-source-range": "0.0.0.0/0"},
			invalid: true, problem: `"10.0.0.0/33" is not a CIDR`,
		},
		"an invalid whitelist under a valid allowlist is not read": {
			in:    map[string]string{"allowlist-source-range": "10.0.0.0/8", "whitelist-source-range": "bad"},
			allow: []string{"10.0.0.0/8"}, noProblem: "bad",
		},
		"too many entries": {
			in:      map[string]string{"denylist-source-range": strings.Repeat("10.0.0.1,", intent.MaxSourceRanges) + "10.0.0.2"},
			invalid: true, problem: "more than 1000",
		},
		"a zone is not an address": {
			in:      map[string]string{"allowlist-source-range": "fe80::1%eth0"},
			invalid: true, problem: "not an IP address",
		},
	} {
		t.Run(name, func(t *testing.T) {
			in := map[string]string{}
			for k, v := range tc.in {
				in[AnnotationPrefix+k] = v
			}
			a := parseAnnotations(in)
			l := a.Location
			if !slices.Equal(l.AllowSourceRange, tc.allow) || !slices.Equal(l.DenySourceRange, tc.deny) || l.SourceRangeInvalid != tc.invalid {
				t.Errorf("allow %v deny %v invalid %v; want %v %v %v", l.AllowSourceRange, l.DenySourceRange, l.SourceRangeInvalid, tc.allow, tc.deny, tc.invalid)
			}
			probs := strings.Join(a.Problems, "\n")
			if tc.problem != "" && !strings.Contains(probs, tc.problem) || tc.problem == "" && tc.noProblem == "" && probs != "" {
				t.Errorf("problems %q, want %q", probs, tc.problem)
			}
			if tc.noProblem != "" && strings.Contains(probs, tc.noProblem) {
				t.Errorf("problems %q", probs)
			}
			if tc.invalid && strings.Contains(probs, "ignored") {
				t.Errorf("a fail-closed problem says ignored: %q", probs)
			}
		})
	}
}

// TestParseRealIPKeys: the ConfigMap's client address keys.
func TestParseRealIPKeys(t *testing.T) {
	g, probs := parseGlobal(fixtures.ConfigMap("ns", "c", "proxy-real-ip-cidr", "10.0.0.1/8 192.0.2.1,10.0.0.0/8", "block-cidrs", "2001:db8::/32",
		"forwarded-for-header", "X-Client", "use-proxy-protocol", "true", "compute-full-forwarded-for", "true", "enable-real-ip", "true"))
	n := g.Nginx
	if len(probs) > 0 || n.ProxyRealIPCIDR != "10.0.0.0/8,192.0.2.1/32" || g.BlockCIDRs != "2001:db8::/32" || n.ForwardedForHeader != "X-Client" ||
		!n.UseProxyProtocol || !n.ComputeFullForwardedFor || !n.EnableRealIP {
		t.Errorf("got %+v, problems %v", n, probs)
	}
	for k, v := range map[string]string{"proxy-real-ip-cidr": "10.0.0.0/8;deny all", "block-cidrs": "", "forwarded-for-header": "X Y",
		"whitelist-source-range": "1.2.3.4/40"} {
		g, probs := parseGlobal(fixtures.ConfigMap("ns", "c", k, v))
		if len(probs) != 1 || g.Nginx != config.DefaultGlobal().Nginx || g.AllowSourceRange != "" {
			t.Errorf("%s=%q: problems %v, settings %+v", k, v, probs, g.Nginx)
		}
	}
}

// FuzzParseSourceRange: whatever the input, a list that parses is
// canonical: sorted, unique, masked prefixes that parse again to itself.
func FuzzParseSourceRange(f *testing.F) {
	for _, s := range []string{"10.0.0.0/8", "1.2.3.4, ::1", "::ffff:1.2.3.4/128", "10.0.0.0/33", "fe80::1%eth0", ",", "2001:db8::/32,10.0.0.1/8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		r, err := parseSourceRange(v)
		if err != nil {
			return
		}
		if len(r) == 0 || len(r) > intent.MaxSourceRanges || !slices.IsSorted(r) {
			t.Fatalf("%q: %v", v, r)
		}
		again, err := parseSourceRange(strings.Join(r, ","))
		if err != nil || !slices.Equal(again, r) {
			t.Fatalf("%q: %v parses to %v, %v", v, r, again, err)
		}
		for _, p := range r {
			if strings.ContainsAny(p, " ;{}$#\"'\\") {
				t.Fatalf("%q: entry %q", v, p)
			}
		}
	})
}

// TestParseBlockLists: block-user-agents and block-referers, exact values
// (lower case) and patterns; a list with an invalid entry is refused whole.
func TestParseBlockLists(t *testing.T) {
	for name, tc := range map[string]struct {
		in, want, problem string
	}{
		"exact and patterns":    {in: "BadBot/1.0, ~*crawler, ~^curl/", want: "badbot/1.0\n~*crawler\n~^curl/"},
		"empty entries dropped": {in: ",x,,", want: "x"},
		"a lookaround":          {in: "ok,~(?=x)", problem: "group"},
		"invalid regex":         {in: "~*(", problem: "not a valid regular expression"},
		"control character":     {in: "a\tb", problem: "printable"},
		"empty":                 {in: " , ", problem: "empty"},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := parseBlockList(tc.in)
			if tc.problem != "" {
				if err == nil || !strings.Contains(err.Error(), tc.problem) {
					t.Fatalf("got %q, %v; want an error with %q", got, err, tc.problem)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// FuzzParseBlockList: a block list that parses is printable ASCII, its
// entries exact (lower case) or valid patterns, and parses again to itself.
func FuzzParseBlockList(f *testing.F) {
	for _, s := range []string{"BadBot, ~*crawler", "~^curl/", "~(?=x)", "a\nb", "~*", ",,", "~\\p{L}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		c, err := parseBlockList(v)
		if err != nil {
			return
		}
		for _, e := range strings.Split(c, "\n") {
			if e == "" || strings.ContainsFunc(e, func(r rune) bool { return r < ' ' || r > '~' }) {
				t.Fatalf("%q: entry %q", v, e)
			}
			if !strings.HasPrefix(e, "~") && e != strings.ToLower(e) {
				t.Fatalf("%q: exact entry %q not lower case", v, e)
			}
		}
		if again, err := parseBlockList(strings.ReplaceAll(c, "\n", ",")); err != nil || again != c {
			t.Fatalf("%q: %q parses to %q, %v", v, c, again, err)
		}
	})
}
