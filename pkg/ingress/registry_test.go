package ingress

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// neutralValue is parsed besides an entry's sample to tell "not supported"
// from a value the character check rejects before the name is looked at
// (a sample with '$' where the parser does not allow it yet).
const neutralValue = "1"

// annotationContext are annotations an annotation means nothing without;
// its sample is parsed with them.
var annotationContext = map[string]map[string]string{
	"canary-":                 {"canary": "true"},
	"canary-by-header-":       {"canary": "true", "canary-by-header": "X-Canary"},
	"cors-":                   {"enable-cors": "true"},
	"session-cookie-":         {"affinity": "cookie"},
	"affinity-":               {"affinity": "cookie"},
	"permanent-redirect-code": {"permanent-redirect": "https://www.example.com/"},
	"temporal-redirect-code":  {"temporal-redirect": "https://www.example.com/"},
	"upstream-hash-by-subset": {"upstream-hash-by": "$request_uri"},
	"mirror-":                 {"mirror-target": "https://test.example.com/mirror"},
	"proxy-redirect-to":       {"proxy-redirect-from": "http://internal.example.com/"},
	"auth-tls-":               {"auth-tls-secret": "default/ca"},
	"proxy-ssl-":              {"proxy-ssl-secret": "default/backend-ca"},
	"auth-":                   {"auth-url": "http://auth.default.svc.cluster.local/verify"},
}

// basicAuthAnnotation: the basic auth annotations need no auth-url.
func basicAuthAnnotation(name string) bool {
	if strings.HasPrefix(name, "auth-tls-") { // nor do the client certificate ones
		return true
	}
	return name == "auth-type" || name == "auth-secret" || name == "auth-secret-type" || name == "auth-realm"
}

// annotationProblems parses name=value (with its context) and returns
// the problems, refused snippets included.
func annotationProblems(name, value string) []string {
	in := map[string]string{}
	for p, ctx := range annotationContext {
		if strings.HasPrefix(name, p) && name != p && !(p == "auth-" && basicAuthAnnotation(name)) {
			for k, v := range ctx {
				if k != name {
					in[AnnotationPrefix+k] = v
				}
			}
		}
	}
	in[AnnotationPrefix+name] = value
	a := parseAnnotations(in)
	problems := a.Problems
	for _, s := range a.Snippets {
		problems = append(problems, "snippet "+s)
	}
	return problems
}

func keyProblems(name, value string) []string {
	_, problems := parseGlobal(&corev1.ConfigMap{Data: map[string]string{name: value}})
	return problems
}

// TestRegistryMatchesParsers checks the registry both ways against what
// parseAnnotations and parseGlobal accept: a Supported (or
// SupportedWithDifference) entry's sample is accepted without any problem;
// a NotSupported entry is reported as not supported; a Refused one is
// never applied. The failure lists every name to fix, with what the
// parser said.
func TestRegistryMatchesParsers(t *testing.T) {
	tables := []struct {
		what    string
		entries []RegistryEntry
		parse   func(name, value string) []string
	}{
		{"annotation", Annotations(), annotationProblems},
		{"ConfigMap key", ConfigKeys(), keyProblems},
	}
	for _, tb := range tables {
		t.Run(tb.what, func(t *testing.T) {
			var wrong []string
			for _, e := range tb.entries {
				if msg := checkEntry(e, tb.parse); msg != "" {
					wrong = append(wrong, fmt.Sprintf("  %s: %s", e.Name, msg))
				}
			}
			if len(wrong) > 0 {
				t.Errorf("%d %s entries of pkg/model/registry.go disagree with the parser (fix the status, or the sample):\n%s",
					len(wrong), tb.what, strings.Join(wrong, "\n"))
			}
		})
	}
}

// checkEntry says what is wrong with e, or "".
func checkEntry(e RegistryEntry, parse func(name, value string) []string) string {
	problems := parse(e.Name, e.Sample)
	unsupported := mentions(problems, errUnsupported.Error())
	switch e.Status {
	case StatusSupported, StatusSupportedWithDifference:
		switch {
		case e.Sample == "":
			return "registry says " + e.Status.String() + " but gives no sample value"
		case unsupported:
			return fmt.Sprintf("registry says %s, parser says not supported: %q", e.Status, problems)
		case len(problems) > 0:
			return fmt.Sprintf("sample %q rejected: %q", e.Sample, problems)
		}
	case StatusNotSupported:
		if !unsupported && !mentions(parse(e.Name, neutralValue), errUnsupported.Error()) {
			return fmt.Sprintf("registry says not supported, parser accepts it (sample %q: problems %q): mark it supported", e.Sample, problems)
		}
	case StatusRefused:
		if len(problems) == 0 {
			return "registry says refused, parser applies it"
		}
	default:
		return "no status"
	}
	if e.Status != StatusSupported && e.Note == "" {
		return "registry says " + e.Status.String() + " without a note"
	}
	return ""
}

func mentions(problems []string, s string) bool {
	for _, p := range problems {
		if strings.Contains(p, s) {
			return true
		}
	}
	return false
}

func TestRegistryLookup(t *testing.T) {
	tests := map[string]struct {
		lookup func(string) (Status, string)
		name   string
		want   Status
	}{
		"annotation with prefix":                 {AnnotationStatus, AnnotationPrefix + "proxy-body-size", StatusSupported},
		"annotation without prefix":              {AnnotationStatus, "proxy-body-size", StatusSupported},
		"listed snippet":                         {AnnotationStatus, "configuration-snippet", StatusRefused},
		"any other snippet is refused":           {AnnotationStatus, "location-snippet", StatusRefused},
		"annotation ingress-nginx does not read": {AnnotationStatus, "no-such-thing", StatusUnknown},
		"not supported annotation":               {AnnotationStatus, "relative-redirects", StatusNotSupported},
		"config key":                             {ConfigKeyStatus, "proxy-body-size", StatusSupported},
		"config snippet":                         {ConfigKeyStatus, "http-snippet", StatusRefused},
		"unknown config key":                     {ConfigKeyStatus, "no-such-key", StatusUnknown},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, note := tc.lookup(tc.name)
			if got != tc.want {
				t.Errorf("status of %s = %s (%s), want %s", tc.name, got, note, tc.want)
			}
			if got != StatusSupported && note == "" {
				t.Errorf("status %s of %s has no note", got, tc.name)
			}
		})
	}
}

// TestRegistryComplete checks the size of the tables (ingress-nginx v1.15
// reads 138 annotation names, documents 192 ConfigMap keys and reads three
// it does not document, proxy-http-version, proxy-redirect-to and
// global-auth-always-set-cookie) and that
// each name is listed once, so that an edit cannot drop or repeat one.
func TestRegistryComplete(t *testing.T) {
	for what, tc := range map[string]struct {
		entries []RegistryEntry
		want    int
	}{"annotations": {Annotations(), 138}, "ConfigMap keys": {ConfigKeys(), 195}} {
		seen := map[string]bool{}
		for _, e := range tc.entries {
			if seen[e.Name] {
				t.Errorf("%s: %s listed twice", what, e.Name)
			}
			seen[e.Name] = true
		}
		if len(tc.entries) != tc.want {
			t.Errorf("%s: %d entries, want %d", what, len(tc.entries), tc.want)
		}
	}
}

// TestAnnotationClaims: the registry is the one place that says which
// parser takes a name. Every entry that is applied has one, a name under a
// prefix claim is claimed by that prefix's parser (an unknown auth-tls-*
// name fails closed with the client certificate verification), snippets
// are refused, and a name nothing claims is not supported.
func TestAnnotationClaims(t *testing.T) {
	same := func(a, b annotationParser) bool {
		return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer()
	}
	for _, e := range Annotations() {
		applied := e.Status == StatusSupported || e.Status == StatusSupportedWithDifference
		if applied != (e.parse != nil) && e.Status != StatusNotSupported {
			t.Errorf("%s (%s): parser set = %v", e.Name, e.Status, e.parse != nil)
		}
		for _, c := range prefixClaims {
			if strings.HasPrefix(e.Name, c.prefix) && !same(e.parse, c.parse) {
				t.Errorf("%s: claimed by another parser than the one of its prefix %q", e.Name, c.prefix)
			}
		}
	}
	tests := map[string]struct {
		name    string
		parse   annotationParser
		refused bool
	}{
		"registry entry":          {name: "app-root", parse: parseRoutingAnnotation},
		"unknown auth-tls name":   {name: "auth-tls-verfiy-client", parse: parseClientAuthAnnotation},
		"unknown canary name":     {name: "canary-by-query", parse: parseCanaryAnnotation},
		"snippet in the registry": {name: "configuration-snippet", refused: true},
		"any snippet":             {name: "brand-new-snippet", refused: true},
		"unclaimed":               {name: "no-such-annotation"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			parse, refused := annotationParserOf(tc.name)
			if refused != tc.refused || (parse == nil) != (tc.parse == nil) || parse != nil && !same(parse, tc.parse) {
				t.Errorf("annotationParserOf(%q) = parser %v, refused %v; want parser %v, refused %v",
					tc.name, parse != nil, refused, tc.parse != nil, tc.refused)
			}
		})
	}
	a := parseAnnotations(map[string]string{AnnotationPrefix + "auth-tls-secret": "default/ca", AnnotationPrefix + "auth-tls-verfiy-client": "on"})
	if !strings.Contains(a.ClientAuth.Err, errUnsupported.Error()) {
		t.Errorf("an unknown auth-tls name: client auth error %q; want not supported, failing closed", a.ClientAuth.Err)
	}
}
