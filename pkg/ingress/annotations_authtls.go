package ingress

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// Client certificate authentication (auth-tls-secret, auth-tls-verify-client,
// auth-tls-verify-depth, auth-tls-error-page,
// auth-tls-pass-certificate-to-upstream, auth-tls-match-cn), as
// ingress-nginx's authtls parser and its server-level ssl_verify_client:
//
//   - it is per host (Server): the oldest Ingress of the host whose
//     annotations can be applied gives the host its ClientAuth; it covers
//     every path of the host, whichever Ingress defined it, as nginx
//     verifies per server. Other Ingresses' auth-tls annotations on that
//     host are ignored with a Problem when they differ.
//   - auth-tls-secret "name" or "namespace/name" (the Ingress's namespace
//     only): the Secret's ca.crt (PEM certificates) are the trusted CAs;
//     its ca.crl, when present, lists revoked certificates.
//   - auth-tls-verify-client on (default), off, optional, optional_no_ca;
//     auth-tls-verify-depth 0 to 100 (0 and the default are 1).
//   - auth-tls-error-page an http(s) URL, a host and path, or a path (see
//     parseErrorPage); auth-tls-pass-certificate-to-upstream true or false;
//     auth-tls-match-cn "CN=" followed by a regular expression, matched
//     against the whole subject DN as nginx's $ssl_client_s_dn !~ test.
//
// Fail closed: an auth-tls-secret that cannot be applied (an invalid
// value of any auth-tls annotation, another namespace, a missing Secret, a
// Secret without ca.crt or with unparsable data) makes its Ingress's routes
// answer 503 (LocationSettings.ClientAuthUnavailable) with a Problem:
// never its content without the verification; the host's other Ingresses
// are not affected (ingress-nginx closes the whole host with a 403).
// auth-tls-* without auth-tls-secret request nothing: a Problem only, as
// ingress-nginx ignores them.

// applyClientAuth parses one auth-tls annotation; ok is false for other
// names. A value that cannot be applied is recorded in a.clientAuth.err.
func applyClientAuth(a *intent.Settings, name, v string) bool {
	if !strings.HasPrefix(name, "auth-tls-") {
		return false
	}
	in := &a.ClientAuth
	var err error
	switch name {
	case "auth-tls-secret":
		in.Requested = true
		if !validSecretRef(v) {
			err = errors.New(`must be "name" or "namespace/name"`)
		}
		in.Secret = v
	case "auth-tls-verify-client":
		in.Verify, err = ParseVerifyClient(v)
	case "auth-tls-verify-depth":
		in.Depth, err = intent.ParseIntRange(v, 0, intent.MaxVerifyDepth)
	case "auth-tls-error-page":
		in.ErrorPage, err = ParseErrorPage(v)
	case "auth-tls-pass-certificate-to-upstream":
		in.PassCert, err = parseBool(v)
	case "auth-tls-match-cn":
		in.MatchCN, err = ParseMatchCN(v)
	default:
		err = errUnsupported
	}
	if name != "auth-tls-secret" {
		in.Others = append(in.Others, name)
	}
	if err != nil && in.Err == "" {
		in.Err = fmt.Sprintf("annotation %s%s=%s: %v", AnnotationPrefix, name, intent.Quote(v), err)
	}
	return true
}

// finishClientAuth reports auth-tls annotations that request nothing.
func finishClientAuth(a *intent.Settings) {
	in := &a.ClientAuth
	if in.Requested || len(in.Others) == 0 {
		return
	}
	reason := "annotations " + AnnotationPrefix + strings.Join(in.Others, ", "+AnnotationPrefix) + " without " + AnnotationPrefix + "auth-tls-secret"
	if in.Err != "" {
		reason = in.Err + "; " + reason
	}
	a.Problems = append(a.Problems, reason+"; ignored")
	in.Err = ""
}

// ParseVerifyClient accepts on, off, optional and optional_no_ca.
func ParseVerifyClient(v string) (string, error) {
	switch v {
	case intent.VerifyOn, intent.VerifyOff, intent.VerifyOptional, intent.VerifyOptionalNoCA:
		return v, nil
	}
	return "", errors.New("must be on, off, optional or optional_no_ca")
}

// ParseErrorPage accepts what ingress-nginx's auth-tls-error-page accepts
// but for named locations (nginx.conf has none to name): an optional
// http:// or https://, an optional host of letters, digits, '-' and '.'
// with an optional port, then path segments of letters, digits and -_.
// with an optional trailing '/'. The empty value is none.
func ParseErrorPage(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	if strings.HasPrefix(v, "@") {
		return "", fmt.Errorf("%w: a named location (nginx.conf has no location of an Ingress)", errUnsupported)
	}
	bad := errors.New("must be an http(s) URL, a host and path, or a path of letters, digits and -_./")
	if len(v) > intent.MaxErrorPageLen {
		return "", bad
	}
	rest := v
	scheme := false
	for _, s := range []string{"http://", "https://"} {
		if r, ok := strings.CutPrefix(rest, s); ok {
			rest, scheme = r, true
		}
	}
	host, path := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		host, path = rest[:i], rest[i:]
	}
	if scheme && host == "" || !errorPageHost(host) || !errorPagePath(path) || host == "" && path == "" {
		return "", bad
	}
	return v, nil
}

func errorPageHost(h string) bool {
	name, port, hasPort := strings.Cut(h, ":")
	if hasPort && (name == "" || !intent.AllDigits(port) || len(port) > 5) {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

func errorPagePath(p string) bool {
	if p == "" || p == "/" {
		return true
	}
	for _, seg := range strings.Split(strings.TrimSuffix(p[1:], "/"), "/") {
		if seg == "" {
			return false
		}
		for i := 0; i < len(seg); i++ {
			c := seg[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
				return false
			}
		}
	}
	return true
}

// ParseMatchCN accepts "CN=" followed by a regular expression, the whole
// value printable ASCII and a pattern valid in RE2 and nginx's PCRE with the same
// meaning (validatePattern).
func ParseMatchCN(v string) (string, error) {
	if !strings.HasPrefix(v, "CN=") {
		return "", errors.New(`must start with "CN="`)
	}
	if len(v) > intent.MaxMatchCNLen {
		return "", fmt.Errorf("longer than %d characters", intent.MaxMatchCNLen)
	}
	for i := 0; i < len(v); i++ {
		if v[i] < ' ' || v[i] > '~' {
			return "", errors.New("may only hold printable ASCII characters")
		}
	}
	if err := intent.ValidatePattern(v); err != nil {
		return "", err
	}
	return v, nil
}
