package ingress

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"errors"
	"fmt"
	"strings"
)

// Basic auth (auth-type, auth-secret, auth-secret-type, auth-realm), as
// ingress-nginx's auth annotation parser and nginx's auth_basic:
//
//   - auth-type basic, or digest (RFC 2617 with qop=auth and MD5, as the
//     auth_digest module ingress-nginx builds in): the Secret holds
//     htdigest lines "user:realm:md5(user:realm:password)"; only the users
//     of auth-realm's realm can sign in.
//   - auth-secret "name" or "namespace/name"; another namespace than the
//     Ingress's is refused, as ingress-nginx with its default
//     allow-cross-namespace-resources=false.
//   - auth-secret-type auth-file (default: the Secret's key "auth" holds an
//     htpasswd file) or auth-map (each key a user, each value a hash).
//   - auth-realm letters, digits, space and -._~/ (default ""): the
//     WWW-Authenticate header is `Basic realm="<realm>"`.
//   - satisfy any or all (default): with any, a client the allow-list
//     admits needs no credentials (nginx's satisfy any); satisfy affects
//     only locations with both basic auth and an allow-list.
//
// Fail closed: auth-type or auth-secret present but not applicable (an
// invalid value, auth-type without auth-secret or the reverse, a missing
// Secret, a Secret without the key, an unparsable line) gives the Ingress's
// locations a BasicAuth with Unavailable set (503) and a Problem; never
// the unprotected content.

// applyAuth parses one auth annotation; ok is false for other names. A
// value that cannot be applied is recorded in a.auth.err (fail closed).
func applyAuth(a *intent.Settings, name, v string) (bool, error) {
	in := &a.Auth
	var err error
	switch name {
	case "auth-type":
		in.Requested = true
		switch v {
		case "basic", "digest":
			in.Type = v
		default:
			err = errors.New("must be basic or digest")
		}
	case "auth-secret":
		in.Requested = true
		if !validSecretRef(v) {
			err = errors.New(`must be "name" or "namespace/name"`)
		} else {
			in.Secret = v
		}
	case "auth-secret-type":
		if v != "auth-file" && v != "auth-map" {
			err = errors.New("must be auth-file or auth-map")
		} else {
			in.SecretType = v
		}
	case "auth-realm":
		if !intent.ValidRealm(v) {
			err = errors.New("may only hold letters, digits, spaces and -._~/")
		} else {
			in.Realm = v
		}
	case "satisfy":
		switch v {
		case "any":
			in.SatisfyAny = true
		case "all":
		default:
			err = errors.New("must be any or all")
		}
	default:
		return false, nil
	}
	if err != nil && in.Err == "" {
		in.Err = fmt.Sprintf("annotation %s%s=%s: %v", AnnotationPrefix, name, intent.Quote(v), err)
	}
	// The Problem is the Build's (basicAuth): the routes answer 503.
	return true, nil
}

// finishAuth checks that the annotations that request auth are complete.
func finishAuth(a *intent.Settings) {
	in := &a.Auth
	if !in.Requested {
		if !a.ExtAuth.Requested && strings.HasPrefix(in.Err, "annotation "+AnnotationPrefix+"satisfy=") {
			// satisfy without auth protects nothing more: a Problem only.
			a.Problems = append(a.Problems, in.Err+"; ignored")
			in.Err = ""
		}
		return
	}
	if in.Err != "" {
		return
	}
	switch {
	case in.Type == "":
		in.Err = "annotation " + AnnotationPrefix + "auth-secret without auth-type"
	case in.Secret == "":
		in.Err = "annotation " + AnnotationPrefix + "auth-type without auth-secret"
	}
}

// validSecretRef reports whether v is "name" or "namespace/name" of a
// Secret (the annotations that name one: auth-secret, auth-tls-secret,
// proxy-ssl-secret).
func validSecretRef(v string) bool {
	ns, n, found := strings.Cut(v, "/")
	return validSecretName(ns) && (!found || validSecretName(n))
}

func validSecretName(v string) bool {
	return v != "" && len(v) <= 253 && config.DNSChars(v)
}
