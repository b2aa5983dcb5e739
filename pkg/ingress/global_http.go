package ingress

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Parsers of the ConfigMap's HTTP settings: http-redirect-code (the Lua
// router's init settings in nginx.conf), no-tls-redirect-locations (route
// values), hide-headers and gzip-disable (nginx.conf).

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

// parseHideHeaders parses hide-headers: header names of letters, digits,
// '-' and '_' (what nginx.conf's proxy_hide_header may hold), separated by
// commas, into lower case, sorted, joined by commas.
func parseHideHeaders(v string) (string, error) {
	canon, err := parseAllowedHeaders(v)
	for _, n := range strings.Split(canon, ",") {
		if err == nil && strings.Trim(n, "abcdefghijklmnopqrstuvwxyz0123456789-_") != "" || len(n) > 64 {
			err = errors.New("header names may only hold letters, digits, '-' and '_' (at most 64)")
		}
	}
	return canon, err
}

// gzipDisableChars are the characters gzip-disable may hold: enough for
// User-Agent patterns (a literal dot is [.]), never a quote, backslash,
// ';', '{', '}' or '$' that could end the quoted nginx.conf value or name
// a variable.
const gzipDisableChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .*+?()[]|^/_-:"

// parseGzipDisable accepts "msie6" (nginx's own test) or a regular
// expression of gzipDisableChars that compiles (nginx gives it to PCRE, a
// superset of RE2 for these), at most 256 characters.
func parseGzipDisable(v string) (string, error) {
	if v == "" || v == "msie6" {
		return v, nil
	}
	if len(v) > 256 || strings.Trim(v, gzipDisableChars) != "" {
		return "", errors.New("must be msie6 or a regular expression of letters, digits, spaces and .*+?()[]|^/_-: (at most 256)")
	}
	if _, err := regexp.Compile(v); err != nil {
		return "", fmt.Errorf("not a regular expression: %w", err)
	}
	return v, nil
}
