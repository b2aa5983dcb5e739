package model

import (
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"reflect"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

// TestBuildErrorPages: custom-http-errors (annotation and ConfigMap),
// default-backend and disable-proxy-intercept-errors on the locations, as
// ingress-nginx combines them.
func TestBuildErrorPages(t *testing.T) {
	svcs := []runtime.Object{
		service("default", "web", svcPort("http", 80)), slice("default", "web-1", "web", "http", 80, ready("10.0.0.1")),
		service("default", "pages", svcPort("http", 8080), svcPort("other", 9090)),
		slice("default", "pages-1", "pages", "http", 8080, ready("10.0.0.2")),
	}
	ing := func(name, host string, opts ...ingOpt) runtime.Object {
		return newIngress("default", name, append(opts, rule(host, prefix("/", "web", 80)))...)
	}
	cases := map[string]struct {
		objs []runtime.Object
		want map[string]*config.CustomErrors // host -> the errors of its "/" location
		prob string
	}{
		"annotation codes go to the default backend": {
			objs: []runtime.Object{ing("a", "a.test", nginx("custom-http-errors", "503, 404"), defaultBackend("pages", 8080))},
			want: map[string]*config.CustomErrors{"a.test": {Codes: []int{404, 503}, Backend: "default-pages-8080", Service: "web", ServicePort: "80"}},
		},
		"default-backend: its first port, and the fallback": {
			objs: []runtime.Object{ing("a", "a.test", nginx("default-backend", "pages"), nginx("disable-proxy-intercept-errors", "true"),
				nginx("custom-http-errors", "404"))},
			want: map[string]*config.CustomErrors{"a.test": {Codes: []int{404}, Backend: "default-pages-8080", Fallback: true, NoIntercept: true,
				Service: "web", ServicePort: "80"}},
		},
		"the ConfigMap's codes, unless the annotation says otherwise": {
			objs: []runtime.Object{fixtures.ConfigMap("ingress", "cfg", "custom-http-errors", "502,503"), ing("a", "a.test"),
				ing("b", "b.test", nginx("custom-http-errors", "404"))},
			want: map[string]*config.CustomErrors{
				"a.test": {Codes: []int{502, 503}, Global: true, Service: "web", ServicePort: "80"},
				"b.test": {Codes: []int{404}, Service: "web", ServicePort: "80"},
			},
		},
		"an unknown default-backend Service is a Problem": {
			objs: []runtime.Object{ing("a", "a.test", nginx("default-backend", "missing"))},
			want: map[string]*config.CustomErrors{"a.test": nil},
			prob: "Service missing not found",
		},
		"499 is refused": {
			objs: []runtime.Object{ing("a", "a.test", nginx("custom-http-errors", "404,499"))},
			want: map[string]*config.CustomErrors{"a.test": nil},
			prob: "but 499",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			opts := testOptions()
			opts.ConfigMap = "ingress/cfg"
			cfg := Build(newTestStore(t, append(slices.Clone(svcs), tc.objs...)...), opts)
			checkDataPlane(t, cfg)
			for host, want := range tc.want {
				var got *config.CustomErrors
				for _, s := range cfg.Servers {
					if s.Hostname == host {
						got = s.Locations[0].Settings.Errors
					}
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: Errors = %+v, want %+v", host, got, want)
				}
			}
			probs := problemStrings(cfg.Problems)
			if tc.prob == "" && len(probs) > 0 || tc.prob != "" && !strings.Contains(strings.Join(probs, "\n"), tc.prob) {
				t.Errorf("problems %q, want %q", probs, tc.prob)
			}
		})
	}
}

// TestBuildProxyBufferSize: proxy-buffer-size is served by the ConfigMap's
// when not larger, and left out with a Problem otherwise.
func TestBuildProxyBufferSize(t *testing.T) {
	for name, tc := range map[string]struct {
		configMap, annotation string
		problem               bool
	}{
		"the default 4k serves 4k":        {"", "4k", false},
		"the default 4k cannot serve 16k": {"", "16k", true},
		"a ConfigMap of 32k serves 16k":   {"32k", "16k", false},
	} {
		t.Run(name, func(t *testing.T) {
			objs := []runtime.Object{service("default", "web", svcPort("http", 80)),
				newIngress("default", "a", nginx("proxy-buffer-size", tc.annotation), rule("a.test", prefix("/", "web", 80)))}
			if tc.configMap != "" {
				objs = append(objs, fixtures.ConfigMap("ingress", "cfg", "proxy-buffer-size", tc.configMap))
			}
			opts := testOptions()
			opts.ConfigMap = "ingress/cfg"
			probs := problemStrings(Build(newTestStore(t, objs...), opts).Problems)
			if got := strings.Contains(strings.Join(probs, "\n"), "larger than the ConfigMap's proxy-buffer-size"); got != tc.problem {
				t.Errorf("problems %q, want the size problem: %v", probs, tc.problem)
			}
		})
	}
}
