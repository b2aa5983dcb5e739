package ingress

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"cmp"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// applyRouting parses the rewrite, redirect and CORS annotations; ok is
// false when name is none of them.
func applyRouting(a *intent.Settings, name, v string) (ok bool, err error) {
	switch name {
	case "app-root":
		a.AppRoot, err = parseAppRoot(v)
	case "x-forwarded-prefix":
		a.Location.XForwardedPrefix, err = parseForwardedPrefix(v)
	case "preserve-trailing-slash":
		a.Location.PreserveTrailingSlash, err = parseBool(v)
	case "use-port-in-redirects":
		a.Location.UsePortInRedirects, err = parseBool(v)
	case "permanent-redirect":
		a.Redirect.Permanent, err = intent.ParseRedirectURL(v)
	case "temporal-redirect":
		a.Redirect.Temporal, err = intent.ParseRedirectURL(v)
	case "permanent-redirect-code":
		a.Redirect.PermanentCode, err = intent.ParseIntRange(v, 300, 308)
	case "temporal-redirect-code":
		a.Redirect.TemporalCode, err = intent.ParseIntRange(v, 300, 307)
	case "from-to-www-redirect":
		a.FromToWWW, err = parseBool(v)
	default:
		return applyCORS(a, name, v)
	}
	return true, err
}

func applyCORS(a *intent.Settings, name, v string) (ok bool, err error) {
	c := &a.CORS
	switch name {
	case "enable-cors":
		c.Enabled, err = parseBool(v)
	case "cors-allow-origin":
		var bad []string
		c.Origins, c.AnyOrigin, bad = parseCORSOrigins(v)
		if bad != nil {
			a.Problems = append(a.Problems, fmt.Sprintf("annotation %scors-allow-origin: origins %q are not scheme://host[:port] or null; left out", AnnotationPrefix, bad))
		}
	case "cors-allow-methods":
		c.Methods, err = matchOrDefault(v, intent.CORSMethodsRE, "a list of methods such as \"GET, POST\"")
	case "cors-allow-headers":
		c.Headers, err = matchOrDefault(v, intent.CORSHeadersRE, "a list of header names")
	case "cors-expose-headers":
		c.Expose, err = matchOrDefault(v, intent.CORSExposeRE, "a list of header names or *")
	case "cors-allow-credentials":
		var b bool
		b, err = parseBool(v)
		if err == nil {
			c.Credentials = &b
		}
	case "cors-max-age":
		var n int
		n, err = intent.ParseIntRange(v, 0, maxCORSMaxAge)
		if err == nil {
			c.MaxAge = &n
		}
	default:
		return false, nil
	}
	return true, err
}

// finishRouting combines the collected redirect and CORS annotations into
// the location settings: temporal-redirect wins over permanent-redirect, as
// in ingress-nginx.
func finishRouting(a *intent.Settings) {
	r := a.Redirect
	switch {
	case r.Temporal != "":
		a.Location.Redirect = &config.Redirect{URL: r.Temporal, Code: cmp.Or(r.TemporalCode, config.DefaultTemporalRedirectCode)}
	case r.Permanent != "":
		a.Location.Redirect = &config.Redirect{URL: r.Permanent, Code: cmp.Or(r.PermanentCode, config.DefaultPermanentRedirectCode)}
	}
	c := a.CORS
	if !c.Enabled || (!c.AnyOrigin && c.Origins != nil && len(c.Origins) == 0) {
		return // no origin allowed: nothing to add
	}
	out := &config.CORS{Methods: cmp.Or(c.Methods, config.DefaultCORSMethods), Headers: cmp.Or(c.Headers, config.DefaultCORSHeaders),
		Expose: c.Expose, Credentials: c.Credentials == nil || *c.Credentials, MaxAge: config.DefaultCORSMaxAge}
	if c.MaxAge != nil {
		out.MaxAge = *c.MaxAge
	}
	if !c.AnyOrigin && c.Origins != nil {
		out.Origins = c.Origins
	}
	a.Location.CORS = out
}

// parseAppRoot accepts an absolute path (no scheme or host), as ingress-nginx.
func parseAppRoot(v string) (string, error) {
	if err := intent.ValidatePath(v); err != nil {
		return "", err
	}
	return v, nil
}

// parseForwardedPrefix accepts a path-like value of path characters.
func parseForwardedPrefix(v string) (string, error) {
	for i := 0; i < len(v); i++ {
		if !intent.PathChar(v[i]) {
			return "", intent.ErrPathChars
		}
	}
	if v == "" {
		return "", errors.New("must not be empty")
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
		case intent.CORSOriginRE.MatchString(o) && len(origins) < maxCORSOrigins:
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
