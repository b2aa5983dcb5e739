package ingress

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"errors"
	"fmt"
	"strings"
)

// External auth (auth-url and the annotations that go with it, the
// ConfigMap's global-auth-* keys, enable-global-auth), as ingress-nginx's
// authreq parser and its auth_request locations. lua/extauth.lua sends the
// auth request (ngx.location.capture of one fixed location) and answers:
// 2xx lets the request through with auth-response-headers copied to it,
// 401 and 403 are answered (401 with auth-signin: 302 to it), anything
// else, the auth service down or too slow included, is 500.
//
//   - auth-url: http:// or https://, a host name or address and an
//     optional port (no variable there: the auth request never goes to a
//     host the client chooses), then a path and query that may hold the
//     variables authVariable lists ($request_uri, $host, ...).
//   - auth-signin: an http(s) URL or an absolute path, variables anywhere;
//     the redirect parameter (auth-signin-redirect-param, default rd) is
//     added as ingress-nginx's buildAuthSignURL does, unless present.
//   - auth-method: GET HEAD POST PUT PATCH DELETE OPTIONS TRACE.
//   - auth-response-headers: header names ([A-Za-z0-9_-]) separated by
//     commas; auth-request-redirect: X-Auth-Request-Redirect (literal).
//   - auth-cache-key: a template of variables; auth-cache-duration: a list
//     separated by commas of "[code ...] time" (default "200 202 401 5m").
//   - auth-proxy-set-headers: a ConfigMap ("name" or "namespace/name", the
//     Ingress's namespace) of headers for the auth request (literal values).
//   - auth-always-set-cookie: the auth response's Set-Cookie on every answer.
//   - auth-keepalive, -requests, -timeout, -share-vars: validated, no effect.
//   - enable-global-auth: false opts the Ingress out of global-auth-url.
//
// Fail closed: auth-url present but not applicable (an invalid value of any
// of the annotations above but the keepalive ones, a missing or invalid
// auth-proxy-set-headers ConfigMap) gives the Ingress's locations an
// ExternalAuth with Unavailable set (503) and a Problem.

// parseNoAuthLocations accepts absolute paths separated by commas.
func parseNoAuthLocations(v string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if !strings.HasPrefix(p, "/") {
			return nil, intent.ErrPathRelative
		}
		for i := 0; i < len(p); i++ {
			if !intent.PathChar(p[i]) {
				return nil, intent.ErrPathChars
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// isExtAuthAnnotation reports whether name is read by applyExtAuth.
func isExtAuthAnnotation(name string) bool {
	switch name {
	case "auth-url", "auth-method", "auth-signin", "auth-signin-redirect-param", "auth-response-headers",
		"auth-request-redirect", "auth-cache-key", "auth-cache-duration", "auth-always-set-cookie",
		"auth-proxy-set-headers", "auth-keepalive", "auth-keepalive-requests", "auth-keepalive-timeout",
		"auth-keepalive-share-vars", "enable-global-auth":
		return true
	}
	return false
}

// applyExtAuth parses one external auth annotation; ok is false for other
// names. Values that fail closed are recorded in a.extAuth.err; the
// returned error is a Problem only (keepalive values, enable-global-auth).
func applyExtAuth(a *intent.Settings, name, v string) (bool, error) {
	if !isExtAuthAnnotation(name) {
		return false, nil
	}
	in := &a.ExtAuth
	switch name {
	case "auth-keepalive", "auth-keepalive-requests", "auth-keepalive-timeout":
		_, err := intent.ParseIntRange(v, 0, intent.MaxGlobalCount)
		return true, err
	case "auth-keepalive-share-vars":
		_, err := parseBool(v)
		return true, err
	case "enable-global-auth":
		on, err := parseBool(v)
		in.GlobalOff = err == nil && !on
		return true, err
	case "auth-url":
		in.Requested = true
	default:
		in.Others = append(in.Others, name)
	}
	if err := setExtAuth(in, name, v); err != nil && in.Err == "" {
		in.Err = fmt.Sprintf("annotation %s%s=%s: %v", AnnotationPrefix, name, intent.Quote(v), err)
	}
	return true, nil
}

// set parses the value of one auth-* name into in.
func setExtAuth(in *intent.ExtAuthSettings, name, v string) error {
	var err error
	switch name {
	case "auth-url":
		in.Host, err = intent.ParseAuthURL(v)
		in.URL = v
	case "auth-method":
		in.Method, err = parseAuthMethod(v)
	case "auth-signin":
		err = intent.ParseAuthSignin(v)
		in.Signin = v
	case "auth-signin-redirect-param":
		in.SigninParam, err = parseQueryName(v)
	case "auth-response-headers":
		in.ResponseHeaders, err = intent.ParseAuthHeaderList(v)
	case "auth-request-redirect":
		in.RequestRedirect, err = intent.ParseRequestRedirect(v)
	case "auth-cache-key":
		err = intent.ParseAuthTemplate(v, intent.CacheKeyChar)
		in.CacheKey = v
	case "auth-cache-duration":
		in.Durations, err = intent.ParseAuthCacheDurations(v)
	case "auth-always-set-cookie":
		in.AlwaysSetCookie, err = parseBool(v)
	case "auth-proxy-set-headers":
		in.ProxySetHeaders, err = parseAuthConfigMapRef(v)
	}
	return err
}

// finishExtAuth reports the auth-* annotations that do nothing without
// auth-url.
func finishExtAuth(a *intent.Settings) {
	in := &a.ExtAuth
	if in.Requested || len(in.Others) == 0 {
		return
	}
	a.Problems = append(a.Problems, fmt.Sprintf("annotations %s%s without %sauth-url: ignored", AnnotationPrefix,
		strings.Join(in.Others, ", "+AnnotationPrefix), AnnotationPrefix))
	in.Err = ""
}

func parseAuthMethod(v string) (string, error) {
	for _, m := range intent.AuthMethods {
		if v == m {
			return v, nil
		}
	}
	if v == "CONNECT" {
		return "", fmt.Errorf("%w: CONNECT auth requests (Lua subrequests cannot send them)", errUnsupported)
	}
	return "", errors.New("must be one of " + strings.Join(intent.AuthMethods, ", "))
}

// parseQueryName accepts a query parameter name: letters, digits, -._~.
func parseQueryName(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" || len(v) > 64 {
		return "", errors.New("must be 1 to 64 characters")
	}
	for i := 0; i < len(v); i++ {
		if !intent.IsAlnum(v[i]) && strings.IndexByte("-._~", v[i]) < 0 {
			return "", errors.New("may only hold letters, digits and -._~")
		}
	}
	return v, nil
}

// parseAuthConfigMapRef accepts "name" or "namespace/name".
func parseAuthConfigMapRef(v string) (string, error) {
	ns, name, found := strings.Cut(v, "/")
	if !found {
		name, ns = ns, ""
	}
	if found && !intent.IsDNSLabel(ns) || !intent.IsDNSSubdomain(name) {
		return "", errors.New(`must be "name" or "namespace/name" of a ConfigMap`)
	}
	return v, nil
}

// globalAuthKeys are the ConfigMap's global-auth-* keys: each validated as
// its annotation (see ExtAuthSettings.set), kept as written.
var globalAuthKeys = map[string]struct {
	annotation string
	field      func(*config.GlobalAuth) *string
}{
	"global-auth-url":                   {"auth-url", func(g *config.GlobalAuth) *string { return &g.URL }},
	"global-auth-method":                {"auth-method", func(g *config.GlobalAuth) *string { return &g.Method }},
	"global-auth-signin":                {"auth-signin", func(g *config.GlobalAuth) *string { return &g.Signin }},
	"global-auth-signin-redirect-param": {"auth-signin-redirect-param", func(g *config.GlobalAuth) *string { return &g.SigninRedirectParam }},
	"global-auth-response-headers":      {"auth-response-headers", func(g *config.GlobalAuth) *string { return &g.ResponseHeaders }},
	"global-auth-request-redirect":      {"auth-request-redirect", func(g *config.GlobalAuth) *string { return &g.RequestRedirect }},
	"global-auth-cache-key":             {"auth-cache-key", func(g *config.GlobalAuth) *string { return &g.CacheKey }},
	"global-auth-cache-duration":        {"auth-cache-duration", func(g *config.GlobalAuth) *string { return &g.CacheDuration }},
	"global-auth-always-set-cookie":     {"auth-always-set-cookie", func(g *config.GlobalAuth) *string { return &g.AlwaysSetCookie }},
}

// setGlobalAuth sets a global-auth-* key; ok is false for other keys.
func setGlobalAuth(g *config.Global, k, v string) (bool, error) {
	if len(v) > intent.MaxValueLen && (k == "no-auth-locations" || globalAuthKeys[k].field != nil) {
		return true, fmt.Errorf("longer than %d characters", intent.MaxValueLen)
	}
	if k == "no-auth-locations" {
		canon, err := parseLocationList(v)
		if err == nil {
			g.Auth.NoAuthLocations, g.Auth.NoAuthLocationsSet = canon, true
		}
		return true, err
	}
	f, ok := globalAuthKeys[k]
	if !ok {
		return false, nil
	}
	if v != "" || k == "global-auth-url" {
		var in intent.ExtAuthSettings
		if err := setExtAuth(&in, f.annotation, v); err != nil {
			return true, err
		}
	}
	*f.field(&g.Auth) = v
	return true, nil
}

// externalAuth returns the ExternalAuth of the global-auth-* keys, nil
// without global-auth-url.
func globalExternalAuth(ga *config.GlobalAuth) *config.ExternalAuth {
	if ga.URL == "" {
		return nil
	}
	var in intent.ExtAuthSettings
	for k, f := range globalAuthKeys {
		if v := *f.field(ga); v != "" {
			if err := setExtAuth(&in, f.annotation, v); err != nil {
				panic("model: global-auth key " + k + " was validated: " + err.Error())
			}
		}
	}
	return in.ExternalAuth()
}
