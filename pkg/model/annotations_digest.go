package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Digest auth users (auth-type digest). The auth_digest module that
// ingress-nginx builds in reads an htdigest file (Apache's htdigest
// format): one "user:realm:HA1" a line, HA1 the hex MD5 of
// "user:realm:password". A user signs in only with a line of the realm the
// location challenges with (auth-realm); lines of other realms are kept
// out of the route data.

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

// digestUser validates one user and its "realm:HA1"; nil (no error) for a
// line of another realm or a user seen before.
func digestUser(user, rest, realm string, seen map[string]bool) (*config.AuthUser, error) {
	if user == "" || len(user) > maxAuthUserLen || strings.ContainsAny(user, `: "\`) || !printable(user) {
		return nil, errors.New("invalid user name")
	}
	i := strings.LastIndexByte(rest, ':')
	if i < 0 {
		return nil, errors.New("not user:realm:hash")
	}
	lineRealm, ha1 := rest[:i], rest[i+1:]
	if !isHexMD5(ha1) {
		return nil, fmt.Errorf("user %q: the hash must be 32 hex digits (MD5 of user:realm:password)", user)
	}
	if lineRealm != realm || seen[user] {
		return nil, nil
	}
	seen[user] = true
	return &config.AuthUser{Name: user, Hash: strings.ToLower(ha1)}, nil
}

func isHexMD5(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
