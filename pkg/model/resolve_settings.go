package model

import (
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// cookiePathOK reports whether p can be a cookie's Path attribute as it
// is: an absolute path of printable ASCII without ';' (a regex path
// written as ingress-nginx writes it passes).
func cookiePathOK(p string) bool {
	if p == "" || p[0] != '/' || len(p) > intent.MaxValueLen {
		return false
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; c <= ' ' || c >= 0x7f || c == ';' {
			return false
		}
	}
	return true
}

// commonCookiePath returns the longest path, by whole path elements, that
// starts every one of paths ("/" at least).
func commonCookiePath(paths []string) string {
	if len(paths) == 0 {
		return "/"
	}
	common := paths[0]
	for _, p := range paths[1:] {
		q := strings.TrimSuffix(p, "/")
		for common != "/" && p != common {
			c := strings.TrimSuffix(common, "/")
			if q == c || strings.HasPrefix(q, c+"/") {
				common = c
				break
			}
			common = c[:max(strings.LastIndexByte(c, '/'), 1)]
		}
	}
	return common
}

// withGlobal returns r with the ConfigMap's status codes, and its
// limit-rate and limit-rate-after where l's annotations set none (as
// ingress-nginx's defaults of those annotations). It returns a copy: the
// Ingress's settings are shared by its locations and Builds.
func rateLimitWithGlobal(r *config.RateLimit, l *intent.LimitSettings, g *config.Global) *config.RateLimit {
	rate, after := !l.RateSet && g.LimitRate > 0, !l.RateAfterSet && g.LimitRateAfter > 0
	if r == nil && !rate {
		return nil
	}
	if r != nil && !rate && !after && r.ReqStatus == g.LimitReqStatusCode && r.ConnStatus == g.LimitConnStatusCode {
		return r
	}
	var c config.RateLimit
	if r != nil {
		c = *r
	}
	if rate {
		c.Rate = g.LimitRate
	}
	if after {
		c.RateAfter = g.LimitRateAfter
	}
	c.ReqStatus, c.ConnStatus = g.LimitReqStatusCode, g.LimitConnStatusCode
	return &c
}

// withProxyDefaults fills the proxy settings st does not set from the
// ConfigMap's (Global.Proxy). The redirect and the cookie rewrites come as
// pairs.
func withProxyDefaults(st *config.LocationSettings, g *config.ProxySettings) {
	if *g == (config.ProxySettings{}) {
		return
	}
	p := config.ProxySettings{}
	if st.Proxy != nil {
		p = *st.Proxy
	}
	fill := func(v *string, def string) {
		if *v == "" {
			*v = def
		}
	}
	fill(&p.RequestBuffering, g.RequestBuffering)
	fill(&p.HTTPVersion, g.HTTPVersion)
	if p.NextUpstreamTries == 0 {
		p.NextUpstreamTries = g.NextUpstreamTries
	}
	if p.RedirectFrom == "" && p.RedirectTo == "" && g.RedirectFrom != "" && g.RedirectTo != "" {
		p.RedirectFrom, p.RedirectTo = g.RedirectFrom, g.RedirectTo
	}
	if p.CookieDomainFrom == "" {
		p.CookieDomainFrom, p.CookieDomainTo = g.CookieDomainFrom, g.CookieDomainTo
	}
	if p.CookiePathFrom == "" {
		p.CookiePathFrom, p.CookiePathTo = g.CookiePathFrom, g.CookiePathTo
	}
	if p != (config.ProxySettings{}) {
		st.Proxy = &p
	}
}
