package ingress

import (
	"regexp"
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// FuzzClientAuthValues: the auth-tls value parsers accept only what the
// data plane takes: no control characters, quotes, spaces or '$' in an
// error page; a match-cn that compiles; the four verify modes.
func FuzzClientAuthValues(f *testing.F) {
	for _, seed := range []string{"on", "optional_no_ca", "/error", "http://a.b:80/c/", "@x", "CN=(a|b)", "CN=(", "CN=a\nb", "/$uri", `CN=\p{L}`, "https://", "a b"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if got, err := ParseVerifyClient(v); err == nil && got != intent.VerifyOn && got != intent.VerifyOff && got != intent.VerifyOptional && got != intent.VerifyOptionalNoCA {
			t.Fatalf("verify %q", got)
		}
		if got, err := ParseErrorPage(v); err == nil && (got != v || strings.ContainsAny(got, " \t\r\n\"'`\\;{}$?#@%") || strings.Contains(got, "//") && !strings.Contains(got, "://")) {
			t.Fatalf("error page %q accepted", v)
		}
		if got, err := ParseMatchCN(v); err == nil {
			if !strings.HasPrefix(got, "CN=") || strings.ContainsFunc(got, func(r rune) bool { return r < ' ' || r > '~' }) {
				t.Fatalf("match-cn %q accepted", v)
			}
			if _, err := regexp.Compile(got); err != nil {
				t.Fatalf("match-cn %q does not compile: %v", v, err)
			}
		}
		a := parseAnnotations(map[string]string{AnnotationPrefix + "auth-tls-secret": v, AnnotationPrefix + "auth-tls-error-page": v,
			AnnotationPrefix + "auth-tls-verify-depth": v, AnnotationPrefix + "auth-tls-match-cn": v})
		if in := a.ClientAuth; in.Err == "" && (!validSecretRef(in.Secret) || in.Depth < 0 || in.Depth > intent.MaxVerifyDepth) {
			t.Fatalf("accepted %q: %+v", v, in)
		}
	})
}
