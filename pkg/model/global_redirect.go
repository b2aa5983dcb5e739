package model

import (
	"errors"
	"strings"
)

// The ConfigMap's redirect settings: http-redirect-code (nginx.conf: the
// Lua router's init settings) and no-tls-redirect-locations (route values).

// defaultNoTLSRedirectLocations is ingress-nginx's no-tls-redirect-locations:
// ACME HTTP-01 challenges are answered over HTTP.
const defaultNoTLSRedirectLocations = "/.well-known/acme-challenge"

// parseRedirectCode accepts 301, 302, 307 and 308.
func parseRedirectCode(v string) (int, error) {
	switch v {
	case "301", "302", "307", "308":
		return int(v[2]-'0') + 300, nil
	}
	return 0, errors.New("must be 301, 302, 307 or 308")
}

// parseLocationList parses paths separated by commas (no-auth-locations,
// no-tls-redirect-locations) into their canonical form: the paths, trimmed,
// joined by commas; "" for none.
func parseLocationList(v string) (string, error) {
	list, err := parseNoAuthLocations(v)
	return strings.Join(list, ","), err
}

// pathInList reports whether path starts with one of the canonical list's
// paths, as ingress-nginx's isLocationInLocationList.
func pathInList(path, list string) bool {
	for list != "" {
		var p string
		p, list, _ = strings.Cut(list, ",")
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}
