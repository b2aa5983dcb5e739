package ingress

import (
	"github.com/ingress-sync/ingress-sync/test/testkit/check"

	"reflect"
	"slices"
	"testing"
)

func TestParseUpstreamAnnotations(t *testing.T) {
	cases := map[string]struct {
		ann      map[string]string
		vhost    string
		conn     string
		aliases  []string
		upstream *bool
		custom   string
		problems []string
	}{
		"none": {ann: map[string]string{}},
		"valid values": {
			ann: map[string]string{"upstream-vhost": "internal.example.com:8080", "connection-proxy-header": "keep-alive",
				"server-alias": " b.example.com, A.example.com,,*.c.example.com,b.example.com", "service-upstream": "true",
				"custom-headers": "default/hdrs"},
			vhost: "internal.example.com:8080", conn: "keep-alive",
			aliases: []string{"*.c.example.com", "a.example.com", "b.example.com"}, upstream: new(true), custom: "default/hdrs",
		},
		"bad values are left out": {
			ann: map[string]string{"upstream-vhost": "$host", "connection-proxy-header": "upgrade",
				"service-upstream": "yes", "custom-headers": "hdrs"},
			problems: []string{`connection-proxy-header="upgrade": must be close or keep-alive`, `custom-headers="hdrs": "hdrs" is not namespace/name`,
				`service-upstream="yes": must be true or false`, `upstream-vhost="$host": contains '$'`},
		},
		"upstream-vhost shapes": {
			ann:      map[string]string{"upstream-vhost": "a..b"},
			problems: []string{`upstream-vhost="a..b": must be a host name`},
		},
		"upstream-vhost edges": {
			ann:      map[string]string{"upstream-vhost": "-a.example.com"},
			problems: []string{`upstream-vhost="-a.example.com": must be a host name`},
		},
		"upstream-vhost of one letter": {ann: map[string]string{"upstream-vhost": "a:1"}, vhost: "a:1"},
		"upstream-vhost port": {
			ann:      map[string]string{"upstream-vhost": "a.example.com:0"},
			problems: []string{`upstream-vhost="a.example.com:0": port must be 1 to 65535`},
		},
		"server-alias regex and trailing wildcard names are left out": {
			ann:      map[string]string{"server-alias": "~^www\\d+\\.example\\.com$,www.example.*,ok.example.com"},
			aliases:  nil,
			problems: []string{`server-alias="~^www\\d+\\.example\\.com$,www.example.*,ok.example.com": contains '\\'`},
		},
		"server-alias non-host names": {
			ann:      map[string]string{"server-alias": "www.example.*, ok.example.com"},
			aliases:  []string{"ok.example.com"},
			problems: []string{`server-alias: names ["www.example.*"] are not DNS names`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := map[string]string{}
			for k, v := range tc.ann {
				in[AnnotationPrefix+k] = v
			}
			a := parseAnnotations(in)
			if a.Location.UpstreamVhost != tc.vhost || a.Location.ConnectionHeader != tc.conn {
				t.Errorf("vhost %q connection %q, want %q %q", a.Location.UpstreamVhost, a.Location.ConnectionHeader, tc.vhost, tc.conn)
			}
			u := a.Upstream
			if !slices.Equal(u.Aliases, tc.aliases) || !reflect.DeepEqual(u.ServiceUpstream, tc.upstream) || u.CustomHeaders != tc.custom {
				t.Errorf("upstream %+v, want aliases %q service-upstream %v custom %q", u, tc.aliases, tc.upstream, tc.custom)
			}
			check.Contains(t, a.Problems, tc.problems)
		})
	}
}

func TestParseAllowedHeaders(t *testing.T) {
	for in, want := range map[string]string{"": "", "X-B, x-a,X-B": "x-a,x-b", " Content-Type ": "content-type"} {
		if got, err := parseAllowedHeaders(in); err != nil || got != want {
			t.Errorf("parseAllowedHeaders(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := parseAllowedHeaders("X-A, X B"); err == nil {
		t.Error("a name with a space is accepted")
	}
}
