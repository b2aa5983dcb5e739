package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"sort"
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

// authInput collects the auth annotations of one Ingress.
type authInput struct {
	typ, secret, secretType, realm string
	// satisfyAny is satisfy=any: the allow-list or the credentials.
	satisfyAny bool
	// requested is set when auth-type or auth-secret is present; err says
	// why the annotations cannot be applied.
	requested bool
	err       string
}

// Limits of htpasswd data.
const (
	maxAuthUsers   = 10000
	maxAuthUserLen = 256
)

// applyAuth parses one auth annotation; ok is false for other names. A
// value that cannot be applied is recorded in a.auth.err (fail closed).
func (a *ingressAnnotations) applyAuth(name, v string) (bool, error) {
	in := &a.auth
	var err error
	switch name {
	case "auth-type":
		in.requested = true
		switch v {
		case "basic", "digest":
			in.typ = v
		default:
			err = errors.New("must be basic or digest")
		}
	case "auth-secret":
		in.requested = true
		if !validSecretRef(v) {
			err = errors.New(`must be "name" or "namespace/name"`)
		} else {
			in.secret = v
		}
	case "auth-secret-type":
		if v != "auth-file" && v != "auth-map" {
			err = errors.New("must be auth-file or auth-map")
		} else {
			in.secretType = v
		}
	case "auth-realm":
		if !validRealm(v) {
			err = errors.New("may only hold letters, digits, spaces and -._~/")
		} else {
			in.realm = v
		}
	case "satisfy":
		switch v {
		case "any":
			in.satisfyAny = true
		case "all":
		default:
			err = errors.New("must be any or all")
		}
	default:
		return false, nil
	}
	if err != nil && in.err == "" {
		in.err = fmt.Sprintf("annotation %s%s=%s: %v", AnnotationPrefix, name, quoteValue(v), err)
	}
	// The Problem is the Build's (basicAuth): the routes answer 503.
	return true, nil
}

// finishAuth checks that the annotations that request auth are complete.
func (a *ingressAnnotations) finishAuth() {
	in := &a.auth
	if !in.requested {
		if !a.extAuth.requested && strings.HasPrefix(in.err, "annotation "+AnnotationPrefix+"satisfy=") {
			// satisfy without auth protects nothing more: a Problem only.
			a.problems = append(a.problems, in.err+"; ignored")
			in.err = ""
		}
		return
	}
	if in.err != "" {
		return
	}
	switch {
	case in.typ == "":
		in.err = "annotation " + AnnotationPrefix + "auth-secret without auth-type"
	case in.secret == "":
		in.err = "annotation " + AnnotationPrefix + "auth-type without auth-secret"
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

func validRealm(v string) bool {
	if len(v) > 256 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(" -._~/", c) >= 0) {
			return false
		}
	}
	return true
}

// basicAuth returns the BasicAuth of e's locations (nil without auth),
// resolved once per Build (see resolveRef).
func (b *builder) basicAuth(e *ingressEntry) *config.BasicAuth {
	in := &e.ann.auth
	if !in.requested {
		return nil
	}
	return resolveRef(b, e, refUse[*config.BasicAuth]{
		objectRef: objectRef{refSecret, "auth-secret", in.secret},
		invalid:   in.err,
		parse:     (*builder).basicAuthFrom,
		unavailable: func(e *ingressEntry) *config.BasicAuth {
			return &config.BasicAuth{Realm: e.ann.auth.realm, Unavailable: true}
		},
	})
}

// basicAuthFrom makes e's BasicAuth of its auth-secret o, or says why it
// cannot.
func (b *builder) basicAuthFrom(e *ingressEntry, o refObject) (*config.BasicAuth, string) {
	in := &e.ann.auth
	users, dropped, err := in.users(o.secret.Data)
	if err != nil {
		return nil, o.reason(" %v", err)
	}
	for _, u := range dropped {
		b.ingressProblem(e, "%s", o.reason(": user %q has an empty password hash and can never sign in", u))
	}
	return &config.BasicAuth{Realm: in.realm, Users: users, SatisfyAny: in.satisfyAny, Digest: in.typ == "digest"}, ""
}

// users parses the users of the auth Secret's data, by auth-type and
// auth-secret-type.
func (in *authInput) users(data map[string][]byte) ([]config.AuthUser, []string, error) {
	if in.secretType == "auth-map" {
		if in.typ == "digest" {
			return parseDigestMap(data, in.realm)
		}
		return parseAuthMap(data)
	}
	file, has := data["auth"]
	if !has {
		return nil, nil, errors.New(`has no key "auth"`)
	}
	if in.typ == "digest" {
		return ParseHtdigest(file, in.realm)
	}
	return ParseHtpasswd(file)
}

// ParseHtpasswd parses an htpasswd file as nginx's auth_basic_user_file
// reads it: one "user:hash[:comment]" a line, blank lines and lines
// starting with '#' skipped, the first line of a user wins. Users with an
// empty hash can never sign in (nginx answers 401): they are left out and
// listed in dropped. A line without ':' or a hash of a format we cannot
// verify is an error (nginx skips the former and answers 500 for the
// latter: failing the whole file closed is stricter). Users are returned
// sorted by name.
func ParseHtpasswd(data []byte) (users []config.AuthUser, dropped []string, err error) {
	seen := map[string]bool{}
	for n, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		user, rest, found := bytes.Cut(line, []byte(":"))
		if !found {
			return nil, nil, fmt.Errorf("line %d: not user:hash", n+1)
		}
		hash, _, _ := bytes.Cut(rest, []byte(":"))
		u, d, err := authUser(string(user), string(hash), seen)
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		if d {
			dropped = append(dropped, string(user))
		} else if u != nil {
			users = append(users, *u)
		}
	}
	return sortUsers(users, dropped)
}

// parseAuthMap parses an auth-map Secret: each key a user, each value a
// hash (ingress-nginx writes them as "key:value" lines).
func parseAuthMap(data map[string][]byte) (users []config.AuthUser, dropped []string, err error) {
	names := make([]string, 0, len(data))
	for k := range data {
		names = append(names, k)
	}
	sort.Strings(names)
	seen := map[string]bool{}
	for _, name := range names {
		u, d, err := authUser(name, string(bytes.TrimRight(data[name], "\r\n")), seen)
		if err != nil {
			return nil, nil, fmt.Errorf("key %q: %w", name, err)
		}
		if d {
			dropped = append(dropped, name)
		} else if u != nil {
			users = append(users, *u)
		}
	}
	if len(names) == 0 {
		return nil, nil, errors.New("has no data")
	}
	return sortUsers(users, dropped)
}

func sortUsers(users []config.AuthUser, dropped []string) ([]config.AuthUser, []string, error) {
	if len(users)+len(dropped) > maxAuthUsers {
		return nil, nil, fmt.Errorf("has more than %d users", maxAuthUsers)
	}
	sort.Slice(users, func(i, j int) bool { return users[i].Name < users[j].Name })
	return users, dropped, nil
}

// authUser validates one user and hash; a user seen before is skipped
// (nil, false). dropped is true for an empty hash.
func authUser(user, hash string, seen map[string]bool) (u *config.AuthUser, dropped bool, err error) {
	if user == "" || len(user) > maxAuthUserLen || strings.ContainsAny(user, ": ") || !printable(user) {
		return nil, false, errors.New("invalid user name")
	}
	if seen[user] {
		return nil, false, nil
	}
	seen[user] = true
	if hash == "" {
		return nil, true, nil
	}
	if err := checkHash(hash); err != nil {
		return nil, false, fmt.Errorf("user %q: %w", user, err)
	}
	return &config.AuthUser{Name: user, Hash: hash}, false, nil
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// crypt64 is the alphabet of crypt hashes.
const crypt64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

func isCrypt64(s string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(crypt64, s[i]) < 0 {
			return false
		}
	}
	return true
}

// checkHash accepts the hash formats lua/auth.lua verifies: $apr1$ and $1$
// (MD5), $2a$/$2b$/$2y$ (bcrypt), $5$ and $6$ (SHA-crypt), {SHA}, {SSHA}
// and traditional DES crypt.
func checkHash(h string) error {
	switch {
	case strings.HasPrefix(h, "$apr1$"), strings.HasPrefix(h, "$1$"):
		salt, sum, ok := strings.Cut(h[strings.IndexByte(h[1:], '$')+2:], "$")
		if ok && len(salt) >= 1 && len(salt) <= 8 && isCrypt64(salt) && len(sum) == 22 && isCrypt64(sum) {
			return nil
		}
	case strings.HasPrefix(h, "$2a$"), strings.HasPrefix(h, "$2b$"), strings.HasPrefix(h, "$2y$"):
		if len(h) == 60 && h[6] == '$' && h[4] >= '0' && h[4] <= '3' && h[5] >= '0' && h[5] <= '9' &&
			(h[4]-'0')*10+h[5]-'0' >= 4 && (h[4]-'0')*10+h[5]-'0' <= 31 && isCrypt64(h[7:]) {
			return nil
		}
	case strings.HasPrefix(h, "$5$"), strings.HasPrefix(h, "$6$"):
		if shaCrypt(h) {
			return nil
		}
	case strings.HasPrefix(h, "{SHA}"):
		if b, err := base64.StdEncoding.DecodeString(h[5:]); err == nil && len(b) == 20 {
			return nil
		}
	case strings.HasPrefix(h, "{SSHA}"):
		if b, err := base64.StdEncoding.DecodeString(h[6:]); err == nil && len(b) > 20 && len(b) <= 20+64 {
			return nil
		}
	case len(h) == 13 && isCrypt64(h):
		return nil
	}
	return errors.New("has a password hash of an unknown or malformed format (apr1, bcrypt, SHA1, MD5, SHA-256/512 or DES crypt)")
}

// shaCrypt checks $5$[rounds=N$]salt$sum and $6$...
func shaCrypt(h string) bool {
	want := 43
	if h[1] == '6' {
		want = 86
	}
	rest := h[3:]
	if r, ok := strings.CutPrefix(rest, "rounds="); ok {
		n, after, found := strings.Cut(r, "$")
		if !found || !allDigits(n) || len(n) > 9 {
			return false
		}
		rest = after
	}
	salt, sum, ok := strings.Cut(rest, "$")
	return ok && len(salt) <= 16 && isCrypt64(salt) && len(sum) == want && isCrypt64(sum)
}
