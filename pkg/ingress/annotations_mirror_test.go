package ingress

import (
	"reflect"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/test/testkit/check"
)

func TestParseMirrorAnnotations(t *testing.T) {
	all := func(url, host string, body bool) *config.Mirror {
		return &config.Mirror{URL: url, Host: host, Body: body, Numerator: 1, Denominator: 1}
	}
	cases := map[string]struct {
		ann      map[string]string
		want     *config.Mirror
		problems []string
	}{
		"none":                       {ann: map[string]string{}},
		"target, body by default":    {ann: map[string]string{"mirror-target": "https://test.example.com/mirror"}, want: all("https://test.example.com/mirror", "", true)},
		"request_uri after the host": {ann: map[string]string{"mirror-target": "https://test.env.com$request_uri"}, want: all("https://test.env.com$request_uri", "", true)},
		"braced variable in the path": {ann: map[string]string{"mirror-target": "http://10.0.0.1:8080/m${uri}?from=$host"},
			want: all("http://10.0.0.1:8080/m${uri}?from=$host", "", true)},
		"host and body off": {ann: map[string]string{"mirror-target": "http://m.example.com", "mirror-host": "shadow.example.com:8080", "mirror-request-body": "off"},
			want: all("http://m.example.com", "shadow.example.com:8080", false)},
		"body on": {ann: map[string]string{"mirror-target": "http://m.example.com/", "mirror-request-body": "on"}, want: all("http://m.example.com/", "", true)},
		"a variable not allowed": {ann: map[string]string{"mirror-target": "https://m.example.com/$document_root"},
			problems: []string{`mirror-target="https://m.example.com/$document_root": variable $document_root is not one ingress-sync expands`}},
		"a variable in the host": {ann: map[string]string{"mirror-target": "https://$host/x"},
			problems: []string{`mirror-target="https://$host/x": must have a host name or address`}},
		"another variable right after the host": {ann: map[string]string{"mirror-target": "https://m.example.com$host"},
			problems: []string{`a variable right after the host must be $request_uri or $uri`}},
		"not an http URL": {ann: map[string]string{"mirror-target": "ftp://m.example.com/"}, problems: []string{`must be an http:// or https:// URL`}},
		"a quote":         {ann: map[string]string{"mirror-target": `http://m.example.com/"x`}, problems: []string{`contains '"'`}},
		"bad host leaves the mirror out": {ann: map[string]string{"mirror-target": "http://m.example.com/", "mirror-host": "$host"},
			problems: []string{`mirror-host="$host": contains '$'`, "mirror-target: no mirror, as a mirror annotation is invalid"}},
		"bad body value leaves the mirror out": {ann: map[string]string{"mirror-target": "http://m.example.com/", "mirror-request-body": "yes"},
			problems: []string{`mirror-request-body="yes": must be on or off`, "mirror-target: no mirror"}},
		"host without target": {ann: map[string]string{"mirror-host": "a.example.com", "mirror-request-body": "off"},
			problems: []string{"mirror-host, nginx.ingress.kubernetes.io/mirror-request-body without nginx.ingress.kubernetes.io/mirror-target: ignored"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			in := map[string]string{}
			for k, v := range tc.ann {
				in[AnnotationPrefix+k] = v
			}
			a := parseAnnotations(in)
			if !reflect.DeepEqual(a.Mirror, tc.want) {
				t.Errorf("mirror %+v, want %+v", a.Mirror, tc.want)
			}
			check.Contains(t, a.Problems, tc.problems)
			if tc.problems == nil && len(a.Problems) > 0 {
				t.Errorf("problems %q", a.Problems)
			}
		})
	}
}
