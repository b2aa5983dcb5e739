package model

import (
	"errors"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/config"
)

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
		"empty fallback":   {Options{ControllerClass: testController, FallbackCertificate: &config.Certificate{}}, false},
		"a good fallback":  {Options{ControllerClass: testController, FallbackCertificate: &config.Certificate{Cert: []byte("c"), Key: []byte("k")}}, true},
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
