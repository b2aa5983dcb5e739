package gateway

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
)

func TestListenerOf(t *testing.T) {
	all := []string{"*.example.com", "*.foo.example.com", "_", "abc.foo.example.com"}
	tests := []struct {
		name      string
		listeners []string
		host      string
		want      string
	}{
		{name: "another name: the listener without hostname", listeners: all, host: "bar.com", want: "_"},
		{name: "the default server's", listeners: all, host: "_", want: "_"},
		{name: "one label under the wildcard", listeners: all, host: "bar.example.com", want: "*.example.com"},
		{name: "the longest wildcard", listeners: all, host: "bar.foo.example.com", want: "*.foo.example.com"},
		{name: "the exact name first", listeners: all, host: "abc.foo.example.com", want: "abc.foo.example.com"},
		{name: "a wildcard takes itself", listeners: all, host: "*.example.com", want: "*.example.com"},
		{name: "a narrower wildcard", listeners: all, host: "*.a.foo.example.com", want: "*.foo.example.com"},
		{name: "a wildcard does not match its own base name", listeners: all, host: "example.com", want: "_"},
		{name: "none", listeners: []string{"a.example.com", "*.example.org"}, host: "b.example.com", want: ""},
		{name: "none for the default server", listeners: []string{"a.example.com", "*.example.org"}, host: "_", want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := listenerOf(tc.listeners, tc.host); got != tc.want {
				t.Errorf("listenerOf(%v, %q) = %q, want %q", tc.listeners, tc.host, got, tc.want)
			}
		})
	}
}

// isolationGateway is the Gateway of the suite's listener isolation test:
// four HTTP listeners on port 80, from the least specific hostname to the
// most.
func isolationGateway() *gatewayv1.Gateway {
	return gw("infra", "edge", "ours",
		allNamespaces(listener("empty", 80, "")),
		allNamespaces(listener("wildcard", 80, "*.example.com")),
		allNamespaces(listener("foo-wildcard", 80, "*.foo.example.com")),
		allNamespaces(listener("abc", 80, "abc.foo.example.com")),
		allNamespaces(listener("other-port", 8080, "")))
}

func TestTranslateListenerIsolation(t *testing.T) {
	ours := class("ours", testController)
	web := backend("web", 8)
	prefix := []gatewayv1.HTTPRouteMatch{pathMatch(gatewayv1.PathMatchPathPrefix, "/p")}
	every := []string{"bar.com", "*.example.com", "*.foo.example.com", "abc.foo.example.com"}
	tests := []struct {
		name    string
		section string
		hosts   []string
		want    []string // hosts of the entry
	}{
		{name: "no hostnames, the listener without: the default server", section: "empty", want: []string{"10080:_"}},
		{name: "no hostnames, a wildcard listener", section: "wildcard", want: []string{"10080:*.example.com"}},
		{name: "no hostnames, the exact listener", section: "abc", want: []string{"10080:abc.foo.example.com"}},
		{name: "the listener without hostname keeps only what no other listener takes", section: "empty", hosts: every,
			want: []string{"10080:bar.com"}},
		{name: "a wildcard listener gives up the names of a longer one", section: "wildcard", hosts: every,
			want: []string{"10080:*.example.com"}},
		{name: "the longer wildcard narrows the route's and gives up the exact name", section: "foo-wildcard", hosts: every,
			want: []string{"10080:*.foo.example.com"}},
		{name: "the exact listener", section: "abc", hosts: every, want: []string{"10080:abc.foo.example.com"}},
		{name: "a port of one listener is not isolated", section: "other-port", hosts: every,
			want: []string{"18080:*.example.com", "18080:*.foo.example.com", "18080:abc.foo.example.com", "18080:bar.com"}},
		{name: "every listener of the Gateway", hosts: every, want: []string{"10080:*.example.com", "10080:*.foo.example.com",
			"10080:abc.foo.example.com", "10080:bar.com", "18080:*.example.com", "18080:*.foo.example.com",
			"18080:abc.foo.example.com", "18080:bar.com"}},
	}
	listeners := []string{"*.example.com", "*.foo.example.com", "_", "abc.foo.example.com"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httpRoute(tc.hosts, rule(prefix, web))
			if tc.section != "" {
				r.Spec.ParentRefs[0].SectionName = ptr.To(gatewayv1.SectionName(tc.section))
			}
			e := translated(t, r, ours, isolationGateway())
			if !slices.Equal(e.Hosts, tc.want) {
				t.Errorf("hosts %v, want %v", e.Hosts, tc.want)
			}
			if len(e.Problems) > 0 {
				t.Errorf("problems %v", e.Problems)
			}
			for _, h := range e.Rules {
				want := listeners
				if h.Port == 18080 {
					want = nil // one listener
				}
				if !slices.Equal(h.Listeners, want) {
					t.Errorf("host %d:%s: listeners %v, want %v", h.Port, h.Host, h.Listeners, want)
				}
			}
		})
	}
}

// TestTranslateListenerIsolationTLS checks that an HTTPS listener's
// certificate is claimed only for the names the listener takes.
func TestTranslateListenerIsolationTLS(t *testing.T) {
	ours := class("ours", testController)
	wild := https("infra", "wild")
	wild.Name, wild.Hostname = "wild", ptr.To(gatewayv1.Hostname("*.example.com"))
	g := gw("infra", "edge", "ours", https("infra", "any"), wild)
	r := httpRoute([]string{"a.example.com", "b.example.org"}, rule(nil, backend("web", 8)))
	r.Spec.ParentRefs[0].SectionName = ptr.To(gatewayv1.SectionName("https"))
	e := translated(t, r, ours, g)
	if want := []string{"10443:b.example.org"}; !slices.Equal(e.Hosts, want) {
		t.Errorf("hosts %v, want %v", e.Hosts, want)
	}
	var tls []string
	for _, c := range e.TLS {
		tls = append(tls, config.ServerKey(c.Port, strings.Join(c.Hosts, ","))+" "+c.Namespace+"/"+c.Secret)
	}
	if want := []string{"10443:b.example.org,_ infra/any"}; !slices.Equal(tls, want) {
		t.Errorf("TLS %v, want %v", tls, want)
	}
}
