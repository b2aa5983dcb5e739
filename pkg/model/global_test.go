package model

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

func TestBuildGlobal(t *testing.T) {
	withCM := func(o *Options) { o.ConfigMap = "ingress/cfg" }
	custom := DefaultGlobal()
	custom.SSLRedirect, custom.ProxyConnectTimeout, custom.ProxyReadTimeout, custom.ProxySendTimeout = false, 10, 300, 30
	custom.ProxyBodySize, custom.UpstreamKeepalive, custom.UseForwardedHeaders, custom.AllowSnippets = "0", 64, true, true
	tests := map[string]struct {
		objs     []runtime.Object
		opts     func(*Options)
		want     Global
		problems []string
	}{
		"defaults without a config map option": {want: DefaultGlobal()},
		"defaults when the config map is absent": {
			opts: withCM,
			want: DefaultGlobal(),
		},
		"every key": {
			objs: one(configMap("ingress", "cfg", "ssl-redirect", "false", "proxy-connect-timeout", "10",
				"proxy-read-timeout", "300", "proxy-send-timeout", "30", "proxy-body-size", "0",
				"upstream-keepalive-connections", "64", "use-forwarded-headers", "true", "allow-snippet-annotations", "true")),
			opts: withCM,
			want: custom,
		},
		"invalid values keep the defaults": {
			objs: one(configMap("ingress", "cfg", "ssl-redirect", "maybe", "proxy-read-timeout", "60s",
				"proxy-body-size", "1m;", "upstream-keepalive-connections", "-1", "enable-opentelemetry", "true")),
			opts: withCM,
			want: DefaultGlobal(),
			problems: []string{
				`ConfigMap ingress/cfg: key enable-opentelemetry="true": not supported; default kept`,
				`key proxy-body-size="1m;": contains ';'; default kept`,
				`key proxy-read-timeout="60s": must be a whole number`,
				`key ssl-redirect="maybe": must be true or false`,
				`key upstream-keepalive-connections="-1": must be a whole number`,
			},
		},
		"malformed option": {
			opts:     func(o *Options) { o.ConfigMap = "cfg" },
			want:     DefaultGlobal(),
			problems: []string{`Options /configmap: "cfg" is not namespace/name`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := buildWith(t, tc.objs, tc.opts)
			checkEqual(t, "global", got.Global, tc.want)
			checkProblems(t, got.Problems, tc.problems)
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := map[string]struct {
		opts Options
		ok   bool
	}{
		"minimal":          {Options{ControllerClass: testController}, true},
		"full":             {Options{ControllerClass: testController, IngressClass: "nginx", DefaultBackendService: "a/b", DefaultSSLCertificate: "a/c", ConfigMap: "a/d"}, true},
		"no controller":    {Options{IngressClass: "nginx"}, false},
		"bad controller":   {Options{ControllerClass: "nginx"}, false},
		"bad class":        {Options{ControllerClass: testController, IngressClass: "Nginx!"}, false},
		"bad backend":      {Options{ControllerClass: testController, DefaultBackendService: "b"}, false},
		"bad certificate":  {Options{ControllerClass: testController, DefaultSSLCertificate: "a/b/c"}, false},
		"bad config map":   {Options{ControllerClass: testController, ConfigMap: "/x"}, false},
		"empty fallback":   {Options{ControllerClass: testController, FallbackCertificate: &Certificate{}}, false},
		"a good fallback":  {Options{ControllerClass: testController, FallbackCertificate: &Certificate{Cert: []byte("c"), Key: []byte("k")}}, true},
		"controller paths": {Options{ControllerClass: "example.com/ingress/v1"}, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := tc.opts.Validate()
			if (err == nil) != tc.ok {
				t.Fatalf("Validate() = %v, want ok=%v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidOption) {
				t.Errorf("%v does not wrap ErrInvalidOption", err)
			}
		})
	}
}
