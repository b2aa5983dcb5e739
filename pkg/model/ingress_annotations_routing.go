package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"cmp"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

var (
	corsOriginRE  = regexp.MustCompile(`^([a-z]+://(\*\.)?[A-Za-z0-9\-.]*(:[0-9]+)?|null)$`)
	corsMethodsRE = regexp.MustCompile(`^([A-Za-z]+,?\s?)+$`)
	corsHeadersRE = regexp.MustCompile(`^[A-Za-z0-9\-_, ]*$`)
	corsExposeRE  = regexp.MustCompile(`^(([A-Za-z0-9\-_]+|\*),?\s?)+$`)
)

// applyRouting parses the rewrite, redirect and CORS annotations; ok is
// false when name is none of them.
func applyRouting(a *ingressAnnotations, name, v string) (ok bool, err error) {
	switch name {
	case "app-root":
		a.appRoot, err = parseAppRoot(v)
	case "x-forwarded-prefix":
		a.location.XForwardedPrefix, err = parseForwardedPrefix(v)
	case "preserve-trailing-slash":
		a.location.PreserveTrailingSlash, err = parseBool(v)
	case "use-port-in-redirects":
		a.location.UsePortInRedirects, err = parseBool(v)
	case "permanent-redirect":
		a.redirect.permanent, err = parseRedirectURL(v)
	case "temporal-redirect":
		a.redirect.temporal, err = parseRedirectURL(v)
	case "permanent-redirect-code":
		a.redirect.permanentCode, err = parseIntRange(v, 300, 308)
	case "temporal-redirect-code":
		a.redirect.temporalCode, err = parseIntRange(v, 300, 307)
	case "from-to-www-redirect":
		a.fromToWWW, err = parseBool(v)
	default:
		return applyCORS(a, name, v)
	}
	return true, err
}

func applyCORS(a *ingressAnnotations, name, v string) (ok bool, err error) {
	c := &a.cors
	switch name {
	case "enable-cors":
		c.enabled, err = parseBool(v)
	case "cors-allow-origin":
		var bad []string
		c.origins, c.anyOrigin, bad = parseCORSOrigins(v)
		if bad != nil {
			a.problems = append(a.problems, fmt.Sprintf("annotation %scors-allow-origin: origins %q are not scheme://host[:port] or null; left out", AnnotationPrefix, bad))
		}
	case "cors-allow-methods":
		c.methods, err = matchOrDefault(v, corsMethodsRE, "a list of methods such as \"GET, POST\"")
	case "cors-allow-headers":
		c.headers, err = matchOrDefault(v, corsHeadersRE, "a list of header names")
	case "cors-expose-headers":
		c.expose, err = matchOrDefault(v, corsExposeRE, "a list of header names or *")
	case "cors-allow-credentials":
		var b bool
		b, err = parseBool(v)
		if err == nil {
			c.credentials = &b
		}
	case "cors-max-age":
		var n int
		n, err = parseIntRange(v, 0, maxCORSMaxAge)
		if err == nil {
			c.maxAge = &n
		}
	default:
		return false, nil
	}
	return true, err
}

// finishRouting combines the collected redirect and CORS annotations into
// the location settings: temporal-redirect wins over permanent-redirect, as
// in ingress-nginx.
func finishRouting(a *ingressAnnotations) {
	r := a.redirect
	switch {
	case r.temporal != "":
		a.location.Redirect = &config.Redirect{URL: r.temporal, Code: cmp.Or(r.temporalCode, config.DefaultTemporalRedirectCode)}
	case r.permanent != "":
		a.location.Redirect = &config.Redirect{URL: r.permanent, Code: cmp.Or(r.permanentCode, config.DefaultPermanentRedirectCode)}
	}
	c := a.cors
	if !c.enabled || (!c.anyOrigin && c.origins != nil && len(c.origins) == 0) {
		return // no origin allowed: nothing to add
	}
	out := &config.CORS{Methods: cmp.Or(c.methods, config.DefaultCORSMethods), Headers: cmp.Or(c.headers, config.DefaultCORSHeaders),
		Expose: c.expose, Credentials: c.credentials == nil || *c.credentials, MaxAge: config.DefaultCORSMaxAge}
	if c.maxAge != nil {
		out.MaxAge = *c.maxAge
	}
	if !c.anyOrigin && c.origins != nil {
		out.Origins = c.origins
	}
	a.location.CORS = out
}

// parseAppRoot accepts an absolute path (no scheme or host), as ingress-nginx.
func parseAppRoot(v string) (string, error) {
	if err := validatePath(v); err != nil {
		return "", err
	}
	return v, nil
}

// parseForwardedPrefix accepts a path-like value of path characters.
func parseForwardedPrefix(v string) (string, error) {
	for i := 0; i < len(v); i++ {
		if !pathChar(v[i]) {
			return "", errPathChars
		}
	}
	if v == "" {
		return "", errors.New("must not be empty")
	}
	return v, nil
}

// parseRedirectURL accepts an absolute http or https URL made of the
// characters ingress-nginx allows in redirect URLs (letters, digits and
// -._~/:,?&=).
func parseRedirectURL(v string) (string, error) {
	for i := 0; i < len(v); i++ {
		if c := v[i]; !isAlnum(c) && strings.IndexByte("-._~/:,?&=", c) < 0 {
			return "", fmt.Errorf("contains %q (allowed: letters, digits and -._~/:,?&=)", c)
		}
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("must be an absolute http or https URL")
	}
	return v, nil
}

// parseCORSOrigins parses cors-allow-origin: a comma-separated list in
// which "*" anywhere allows any origin. Origins of another form are left
// out and returned in bad, as ingress-nginx skips them.
func parseCORSOrigins(v string) (origins []string, any bool, bad []string) {
	for _, o := range strings.Split(v, ",") {
		o = strings.TrimSpace(o)
		switch {
		case o == "":
		case o == "*":
			return nil, true, nil
		case corsOriginRE.MatchString(o) && len(origins) < maxCORSOrigins:
			origins = append(origins, o)
		default:
			bad = append(bad, o)
		}
	}
	if origins == nil {
		origins = []string{} // none valid: no origin is allowed, CORS stays off
	}
	return origins, false, bad
}

// matchOrDefault returns v when re matches it; otherwise "" (the default)
// and an error naming what is expected.
func matchOrDefault(v string, re *regexp.Regexp, want string) (string, error) {
	if !re.MatchString(v) {
		return "", fmt.Errorf("must be %s", want)
	}
	return v, nil
}

// Bounds of the CORS annotations.
const (
	maxCORSMaxAge  = 1 << 31
	maxCORSOrigins = 100
)
