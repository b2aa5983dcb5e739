package ingress

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/config"
)

func TestParseLimitAnnotations(t *testing.T) {
	cases := map[string]struct {
		in      map[string]string
		want    *config.RateLimit
		problem string
	}{
		"none":                 {in: map[string]string{"proxy-body-size": "1m"}},
		"zero limits are none": {in: map[string]string{"limit-rps": "0", "limit-connections": "0"}},
		"rps with the default multiplier": {
			in: map[string]string{"limit-rps": "10"}, want: &config.RateLimit{RPS: 10, BurstMultiplier: 5},
		},
		"both rps and rpm, a multiplier": {
			in:   map[string]string{"limit-rps": "2", "limit-rpm": "30", "limit-burst-multiplier": "1"},
			want: &config.RateLimit{RPS: 2, RPM: 30, BurstMultiplier: 1},
		},
		"connections alone has no burst": {
			in: map[string]string{"limit-connections": "3"}, want: &config.RateLimit{Connections: 3},
		},
		"rate and rate-after in kilobytes": {
			in: map[string]string{"limit-rate": "100", "limit-rate-after": "1024"}, want: &config.RateLimit{Rate: 102400, RateAfter: 1 << 20},
		},
		"rate-after alone is nothing (as nginx)": {in: map[string]string{"limit-rate-after": "10"}},
		"allowlist, the older name loses": {
			in:   map[string]string{"limit-rps": "1", "limit-allowlist": "10.0.0.0/8, 192.168.1.1", "limit-whitelist": "172.16.0.0/12"},
			want: &config.RateLimit{RPS: 1, BurstMultiplier: 5, Allowlist: []string{"10.0.0.0/8", "192.168.1.1/32"}},
		},
		"the older name alone": {
			in: map[string]string{"limit-connections": "1", "limit-whitelist": "2001:db8::/32"}, want: &config.RateLimit{Connections: 1, Allowlist: []string{"2001:db8::/32"}},
		},
		"a negative rps fails closed": {
			in: map[string]string{"limit-rps": "-1"}, want: &config.RateLimit{Invalid: true}, problem: "limit-rps=\"-1\": must be a whole number; the Ingress's routes answer 503",
		},
		"a unit fails closed": {
			in: map[string]string{"limit-rpm": "10r/m", "limit-rps": "5"}, want: &config.RateLimit{RPS: 5, BurstMultiplier: 5, Invalid: true}, problem: "limit-rpm",
		},
		"a bad multiplier fails closed": {
			in: map[string]string{"limit-rps": "5", "limit-burst-multiplier": "x"}, want: &config.RateLimit{RPS: 5, Invalid: true}, problem: "limit-burst-multiplier",
		},
		"a bad allowlist fails closed": {
			in: map[string]string{"limit-rps": "5", "limit-allowlist": "10.0.0.0/33"}, want: &config.RateLimit{RPS: 5, BurstMultiplier: 5, Invalid: true}, problem: "limit-allowlist",
		},
		"a hostile value fails closed": {
			in: map[string]string{"limit-connections": "1;\n}"}, want: &config.RateLimit{Invalid: true}, problem: "limit-connections",
		},
		"too large fails closed": {
			in: map[string]string{"limit-rate": "99999999999"}, want: &config.RateLimit{Invalid: true}, problem: "limit-rate",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := map[string]string{}
			for k, v := range tc.in {
				in[AnnotationPrefix+k] = v
			}
			a := parseAnnotations(in)
			if got := a.Location.RateLimit; !reflect.DeepEqual(got, tc.want) {
				t.Errorf("RateLimit = %+v, want %+v", got, tc.want)
			}
			probs := strings.Join(a.Problems, "\n")
			if tc.problem == "" && probs != "" || !strings.Contains(probs, tc.problem) {
				t.Errorf("problems %q, want %q", probs, tc.problem)
			}
		})
	}
}
