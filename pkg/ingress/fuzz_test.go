package ingress

import (
	"strings"
	"testing"
)

// FuzzAnnotationValues checks the security property of the parsers: a value
// that is accepted carries nothing that can end an nginx directive or
// block, quote, or (outside the capture references of rewrite-target and
// the variables of upstream-hash-by) expand a variable.
func FuzzAnnotationValues(f *testing.F) {
	for _, seed := range []string{"60", "1s; }", "$host", "/a\nb", "/$1", "$request_uri", "10.0.0.0/8", "8m", `"x"`, "cookie", "/p{}"} {
		f.Add(seed)
	}
	names := []string{"proxy-read-timeout", "proxy-body-size", "backend-protocol", "rewrite-target", "whitelist-source-range",
		"load-balance", "upstream-hash-by", "session-cookie-name", "session-cookie-path", "ssl-redirect",
		"canary-weight", "canary-weight-total", "canary-by-header", "canary-by-header-value", "canary-by-cookie"}
	f.Fuzz(func(t *testing.T, v string) {
		for _, n := range names {
			a := parseAnnotations(map[string]string{AnnotationPrefix + n: v, AnnotationPrefix + "affinity": "cookie",
				AnnotationPrefix + "canary": "true", AnnotationPrefix + "canary-by-header": "X"})
			if len(a.Problems) > 0 {
				continue
			}
			if strings.ContainsAny(v, ";{}\"'`\\\n\r") {
				t.Fatalf("%s accepted %q", n, v)
			}
			if strings.Contains(v, "$") && n != "rewrite-target" && n != "upstream-hash-by" {
				t.Fatalf("%s accepted %q with '$'", n, v)
			}
			if n == "rewrite-target" && strings.Contains(strings.NewReplacer("$0", "", "$1", "", "$2", "", "$3", "", "$4", "",
				"$5", "", "$6", "", "$7", "", "$8", "", "$9", "").Replace(v), "$") {
				t.Fatalf("rewrite-target accepted %q", v)
			}
		}
	})
}
