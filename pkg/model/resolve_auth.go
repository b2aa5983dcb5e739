package model

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// basicAuth returns the BasicAuth of e's locations (nil without auth),
// resolved once per Build (see resolveRef).
func (b *builder) basicAuth(e *intent.Entry) *config.BasicAuth {
	in := &e.Settings.Auth
	if !in.Requested {
		return nil
	}
	return resolveRef(b, e, refUse[*config.BasicAuth]{
		objectRef: objectRef{refSecret, "auth-secret", in.Secret},
		invalid:   in.Err,
		parse:     (*builder).basicAuthFrom,
		unavailable: func(e *intent.Entry) *config.BasicAuth {
			return &config.BasicAuth{Realm: e.Settings.Auth.Realm, Unavailable: true}
		},
	})
}

// basicAuthFrom makes e's BasicAuth of its auth-secret o, or says why it
// cannot.
func (b *builder) basicAuthFrom(e *intent.Entry, o refObject) (*config.BasicAuth, string) {
	in := &e.Settings.Auth
	users, dropped, err := authUsers(in, o.secret.Data)
	if err != nil {
		return nil, o.reason(" %v", err)
	}
	for _, u := range dropped {
		b.entryProblem(e, "%s", o.reason(": user %q has an empty password hash and can never sign in", u))
	}
	return &config.BasicAuth{Realm: in.Realm, Users: users, SatisfyAny: in.SatisfyAny, Digest: in.Type == "digest"}, ""
}

// users parses the users of the auth Secret's data, by auth-type and
// auth-secret-type.
func authUsers(in *intent.AuthSettings, data map[string][]byte) ([]config.AuthUser, []string, error) {
	if in.SecretType == "auth-map" {
		if in.Type == "digest" {
			return parseDigestMap(data, in.Realm)
		}
		return parseAuthMap(data)
	}
	file, has := data["auth"]
	if !has {
		return nil, nil, errors.New(`has no key "auth"`)
	}
	if in.Type == "digest" {
		return ParseHtdigest(file, in.Realm)
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

// ParseHtdigest parses an htdigest file and returns the users of realm,
// with HA1 (lower-case hex) as their Hash, sorted by name. Blank lines and
// lines starting with '#' are skipped; the first line of a user and realm
// wins; a line that is not user:realm:HA1 is an error (fail closed).
// dropped is always empty: an htdigest line cannot have an empty hash.
func ParseHtdigest(data []byte, realm string) (users []config.AuthUser, dropped []string, err error) {
	seen := map[string]bool{}
	lines := 0
	for n, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if lines++; lines > maxAuthUsers {
			return nil, nil, fmt.Errorf("has more than %d users", maxAuthUsers)
		}
		user, rest, found := bytes.Cut(line, []byte(":"))
		if !found {
			return nil, nil, fmt.Errorf("line %d: not user:realm:hash", n+1)
		}
		u, err := digestUser(string(user), string(rest), realm, seen)
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		if u != nil {
			users = append(users, *u)
		}
	}
	return sortUsers(users, nil)
}

// parseDigestMap parses a digest auth-map Secret: each key a user, each
// value "realm:HA1".
func parseDigestMap(data map[string][]byte, realm string) ([]config.AuthUser, []string, error) {
	if len(data) == 0 {
		return nil, nil, errors.New("has no data")
	}
	if len(data) > maxAuthUsers {
		return nil, nil, fmt.Errorf("has more than %d users", maxAuthUsers)
	}
	names := make([]string, 0, len(data))
	for k := range data {
		names = append(names, k)
	}
	sort.Strings(names)
	seen := map[string]bool{}
	var users []config.AuthUser
	for _, name := range names {
		u, err := digestUser(name, string(bytes.TrimRight(data[name], "\r\n")), realm, seen)
		if err != nil {
			return nil, nil, fmt.Errorf("key %q: %w", name, err)
		}
		if u != nil {
			users = append(users, *u)
		}
	}
	return sortUsers(users, nil)
}

// Limits of htpasswd data.
const (
	maxAuthUsers   = 10000
	maxAuthUserLen = 256
)

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
	if user == "" || len(user) > maxAuthUserLen || strings.ContainsAny(user, ": ") || !intent.Printable(user) {
		return nil, false, errors.New("invalid user name")
	}
	if seen[user] {
		return nil, false, nil
	}
	seen[user] = true
	if hash == "" {
		return nil, true, nil
	}
	if err := intent.CheckHash(hash); err != nil {
		return nil, false, fmt.Errorf("user %q: %w", user, err)
	}
	return &config.AuthUser{Name: user, Hash: hash}, false, nil
}

// digestUser validates one user and its "realm:HA1"; nil (no error) for a
// line of another realm or a user seen before.
func digestUser(user, rest, realm string, seen map[string]bool) (*config.AuthUser, error) {
	if user == "" || len(user) > maxAuthUserLen || strings.ContainsAny(user, `: "\`) || !intent.Printable(user) {
		return nil, errors.New("invalid user name")
	}
	i := strings.LastIndexByte(rest, ':')
	if i < 0 {
		return nil, errors.New("not user:realm:hash")
	}
	lineRealm, ha1 := rest[:i], rest[i+1:]
	if !intent.IsHexMD5(ha1) {
		return nil, fmt.Errorf("user %q: the hash must be 32 hex digits (MD5 of user:realm:password)", user)
	}
	if lineRealm != realm || seen[user] {
		return nil, nil
	}
	seen[user] = true
	return &config.AuthUser{Name: user, Hash: strings.ToLower(ha1)}, nil
}
