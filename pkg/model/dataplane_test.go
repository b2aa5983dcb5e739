package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The data plane contract: what lua/configuration.lua and lua/router.lua
// take (see their normalisers), checked here independently of the
// validators Build uses where that is possible. Build must never emit a
// value outside it: the data plane would refuse the host (it then answers
// 503) or the whole push.
var (
	dnsLabelRE   = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	luaNameRE    = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._/-]*$`)
	hashByRE     = regexp.MustCompile(`^[A-Za-z0-9_${}-]{1,256}$`)
	cookieNameRE = regexp.MustCompile("^[A-Za-z0-9!#%&'*+.^_`|~-]{1,64}$")
	protocols    = []string{"", "HTTP", "HTTPS", "GRPC", "GRPCS", "AUTO_HTTP"}
)

// cookieDomainRE is what lua/configuration.lua takes as cookieDomain.
var cookieDomainRE = regexp.MustCompile(`^\.?[A-Za-z0-9.-]{1,253}$`)

// contract collects the violations of one Configuration.
type contract struct {
	cfg        *config.Configuration
	backends   map[string]bool
	violations []string
}

func (c *contract) fail(format string, args ...any) {
	c.violations = append(c.violations, fmt.Sprintf(format, args...))
}

// dataPlaneViolations lists what in cfg the data plane cannot take.
func dataPlaneViolations(cfg *config.Configuration) []string {
	c := &contract{cfg: cfg, backends: map[string]bool{}}
	c.global(&cfg.Global)
	for _, b := range cfg.Backends.All() {
		c.backend(b)
	}
	for i := range cfg.Certificates {
		c.certificate(&cfg.Certificates[i])
	}
	if len(cfg.Servers) == 0 || cfg.Servers[0].Hostname != config.DefaultServerName {
		c.fail("the default server is not first")
	}
	for i := range cfg.Servers {
		c.server(&cfg.Servers[i])
	}
	return c.violations
}

func (c *contract) global(g *config.Global) {
	for _, t := range []int{g.ProxyConnectTimeout, g.ProxyReadTimeout, g.ProxySendTimeout} {
		if t < 1 || t > intent.MaxProxyTimeout {
			c.fail("global timeout %d", t)
		}
	}
	if _, ok := g.ProxyBodySize.Bytes(); !ok {
		c.fail("global body size %q", g.ProxyBodySize)
	}
}

// hostnameOK: "_", or an optional "*." and a lower-case DNS name.
func hostnameOK(h string) bool {
	if h == config.DefaultServerName {
		return true
	}
	name := strings.TrimPrefix(h, "*.")
	if name == "" || len(name) > 253 {
		return false
	}
	for _, l := range strings.Split(name, ".") {
		if !dnsLabelRE.MatchString(l) {
			return false
		}
	}
	return true
}

// luaNameOK mirrors is_name of lua/configuration.lua (320: "<namespace>/<secret>").
func luaNameOK(n string) bool { return len(n) <= 320 && luaNameRE.MatchString(n) }

func (c *contract) backend(b *config.Backend) {
	if !luaNameOK(b.Name) || c.backends[b.Name] {
		c.fail("backend name %q invalid or repeated", b.Name)
	}
	c.backends[b.Name] = true
	for _, ep := range b.Endpoints {
		a, err := netip.ParseAddr(ep.Address)
		if err != nil || a.Zone() != "" || a.String() != ep.Address || ep.Port < 1 || ep.Port > 65535 {
			c.fail("backend %s endpoint %q port %d", b.Name, ep.Address, ep.Port)
		}
	}
	if b.LoadBalance != config.LoadBalanceRoundRobin && b.LoadBalance != config.LoadBalanceEWMA {
		c.fail("backend %s load balance %q", b.Name, b.LoadBalance)
	}
	if b.UpstreamHashBy != "" && !hashByRE.MatchString(b.UpstreamHashBy) {
		c.fail("backend %s hash by %q", b.Name, b.UpstreamHashBy)
	}
	if b.UpstreamHashBySubsetSize < 0 || b.UpstreamHashBySubsetSize > intent.MaxSubsetSize {
		c.fail("backend %s subset size %d", b.Name, b.UpstreamHashBySubsetSize)
	}
	if a := b.Affinity; a != nil {
		if !cookieNameRE.MatchString(a.CookieName) || a.CookiePath != "" && !cookiePathOK(a.CookiePath) ||
			a.CookieMaxAge < 0 || a.CookieExpires < 0 || a.Mode != config.AffinityBalanced && a.Mode != config.AffinityPersistent ||
			a.CookieDomain != "" && !cookieDomainRE.MatchString(a.CookieDomain) ||
			!slices.Contains([]string{"", "None", "Lax", "Strict"}, a.CookieSameSite) {
			c.fail("backend %s affinity %+v", b.Name, *a)
		}
	}
}

func (c *contract) certificate(cert *config.Certificate) {
	if !luaNameOK(cert.Name) {
		c.fail("certificate name %q (%d characters)", cert.Name, len(cert.Name))
	}
	for _, h := range cert.Hosts {
		if h == config.DefaultServerName || !hostnameOK(h) {
			c.fail("certificate %s host %q", cert.Name, h)
		}
	}
}

func (c *contract) server(s *config.Server) {
	if !hostnameOK(s.Hostname) {
		c.fail("server hostname %q", s.Hostname)
	}
	if s.AppRoot != "" && intent.ValidatePath(s.AppRoot) != nil {
		c.fail("server %s: app root %q", s.Hostname, s.AppRoot)
	}
	c.headers("server "+s.Hostname+" request", s.RequestHeaders, true)
	c.headers("server "+s.Hostname+" response", s.ResponseHeaders, true)
	c.clientAuth(s.Hostname, s.ClientAuth)
	if s.RedirectTo != "" {
		if intent.ValidHost(s.RedirectTo) != nil || len(s.Locations) > 0 || s.AppRoot != "" {
			c.fail("server %s: redirect to %q with %d locations", s.Hostname, s.RedirectTo, len(s.Locations))
		}
		return
	}
	regexHost := slices.ContainsFunc(s.Locations, func(l config.Location) bool { return l.PathType == config.PathRegex })
	roots := 0
	for i := range s.Locations {
		l := &s.Locations[i]
		if i > 0 {
			// Only the regex locations of a regex host, and candidates
			// of one path with different conditions, may tie (the oldest
			// route first).
			prev := &s.Locations[i-1]
			candidates := prev.Match != nil && l.Match != nil && prev.Match.Key() != l.Match.Key()
			if d := compareLocations(*prev, *l); d > 0 || d == 0 && l.PathType != config.PathRegex && !candidates {
				c.fail("server %s: location %s %q not strictly after the one before", s.Hostname, l.PathType, l.Path)
			}
		}
		if regexHost && l.PathType != config.PathRegex {
			c.fail("server %s: %s location %q on a regex host", s.Hostname, l.PathType, l.Path)
		}
		if l.Path == "/" && (l.PathType == config.PathPrefix || regexHost) && l.Match == nil {
			roots++
		}
		c.location(s.Hostname, l)
	}
	if roots != 1 && !(regexHost && roots > 1) {
		c.fail("server %s has %d Prefix / locations", s.Hostname, roots)
	}
}

func (c *contract) location(host string, l *config.Location) {
	where := fmt.Sprintf("server %s location %s %q", host, l.PathType, l.Path)
	switch l.PathType {
	case config.PathExact, config.PathPrefix:
		if err := intent.ValidatePath(l.Path); err != nil || l.PathType == config.PathPrefix && l.Path != intent.NormalizePrefix(l.Path) {
			c.fail("%s: %v", where, err)
		}
	case config.PathRegex:
		if err := intent.ValidateRegexPath(l.Path); err != nil {
			c.fail("%s: %v", where, err)
		}
		if _, err := regexp.Compile("(?i)^" + l.Path); err != nil {
			c.fail("%s: %v", where, err)
		}
	default:
		c.fail("%s: unknown path type", where)
	}
	if l.Backend != "" && !c.backends[l.Backend] {
		c.fail("%s: backend %q is not sent", where, l.Backend)
	}
	c.settings(where, &l.Settings)
	c.canary(where, l)
	c.match(where, l.Match)
	c.filters(where, l)
	c.weighted(where, l)
	c.mirrors(where, l)
	if t := l.Timeouts; t != nil {
		for _, ms := range []int{t.RequestMillis, t.BackendRequestMillis} {
			if ms < 0 || ms > config.MaxTimeoutMillis {
				c.fail("%s: timeouts %+v", where, t)
			}
		}
		if t.RequestMillis == 0 && t.BackendRequestMillis == 0 {
			c.fail("%s: empty timeouts", where)
		}
	}
}

// weighted checks l.Backends as lua/routes.lua's compile_weighted takes
// them: 1 to 64 of weight 1 to 1000000, each a backend sent or "" (500);
// Backend is then "".
func (c *contract) weighted(where string, l *config.Location) {
	if l.Backends == nil {
		return
	}
	if l.Backend != "" || len(l.Backends) == 0 || len(l.Backends) > 64 {
		c.fail("%s: backend %q with %d weighted backends", where, l.Backend, len(l.Backends))
	}
	for _, b := range l.Backends {
		if b.Weight < 1 || b.Weight > 1000000 || b.Backend != "" && !c.backends[b.Backend] {
			c.fail("%s: weighted backend %+v", where, b)
		}
	}
}

// mirrors checks l.Mirrors as lua/mirror.lua compiles them: at most
// config.MaxMirrors, each a backend sent or an http(s) URL with a template
// of variables (intent.ParseMirrorURL), a Host as upstream-vhost takes it,
// and 0 <= numerator <= denominator <= 1000000.
func (c *contract) mirrors(where string, l *config.Location) {
	if len(l.Mirrors) > config.MaxMirrors {
		c.fail("%s: %d mirrors", where, len(l.Mirrors))
	}
	for _, m := range l.Mirrors {
		target := m.Backend != "" && c.backends[m.Backend] && m.URL == ""
		if m.Backend == "" {
			_, err := intent.ParseMirrorURL(m.URL)
			target = err == nil
		}
		hostOK := m.Host == ""
		if !hostOK {
			_, err := intent.ParseUpstreamVhost(m.Host)
			hostOK = err == nil
		}
		if !target || !hostOK || m.Denominator < 1 || m.Denominator > config.MaxMirrorDenominator || m.Numerator < 0 || m.Numerator > m.Denominator {
			c.fail("%s: mirror %+v", where, m)
		}
	}
}

// filters checks l.Filters as lua/filters.lua compiles them, and what
// Build promises on top: a Location without a backend only redirects.
func (c *contract) filters(where string, l *config.Location) {
	f := l.Filters
	if f == nil {
		return
	}
	for _, h := range []*config.HeaderFilter{f.RequestHeaders, f.ResponseHeaders} {
		if h == nil {
			continue
		}
		c.headers(where+" filter", h.Set, false)
		c.headers(where+" filter", h.Add, false)
		for i, n := range h.Remove {
			if !headerTokenRE.MatchString(n) || i > 0 && h.Remove[i-1] >= n {
				c.fail("%s: filter removes %q", where, n)
			}
		}
	}
	if r := f.Redirect; r != nil {
		if !slices.Contains([]int{301, 302, 303, 307, 308}, r.Code) || !slices.Contains([]string{"", "http", "https"}, r.Scheme) ||
			r.Port < 0 || r.Port > 65535 || r.Hostname != "" && intent.ValidHost(r.Hostname) != nil || strings.HasPrefix(r.Hostname, "*") {
			c.fail("%s: redirect %+v", where, r)
		}
		c.pathModifier(where, l, r.Path)
	}
	if cors := f.CORS; cors != nil {
		for _, o := range cors.AllowOrigins {
			if o != "*" && !corsOriginRE.MatchString(o) {
				c.fail("%s: CORS origin %q", where, o)
			}
		}
		for _, v := range slices.Concat(cors.AllowMethods, cors.AllowHeaders, cors.ExposeHeaders) {
			if !headerTokenRE.MatchString(v) {
				c.fail("%s: CORS value %q", where, v)
			}
		}
		if cors.MaxAge < 0 || cors.MaxAge > 86400 {
			c.fail("%s: CORS maxAge %d", where, cors.MaxAge)
		}
	}
	if f.RewriteHost != "" && (intent.ValidHost(f.RewriteHost) != nil || strings.HasPrefix(f.RewriteHost, "*")) {
		c.fail("%s: rewrite host %q", where, f.RewriteHost)
	}
	c.pathModifier(where, l, f.RewritePath)
}

func (c *contract) pathModifier(where string, l *config.Location, m *config.PathModifier) {
	if m == nil {
		return
	}
	if intent.ValidatePath(m.Value) != nil || m.Type != config.PathModifierFull && (m.Type != config.PathModifierPrefix || l.PathType != config.PathPrefix) {
		c.fail("%s: path modifier %+v", where, m)
	}
}

// corsOriginRE mirrors lua/cors.lua's origin_pattern.
var corsOriginRE = regexp.MustCompile(`^https?://[A-Za-z0-9.*-]+(:[0-9]+)?$`)

// methodRE and luaHeaderRE mirror lua/routes.lua's compile_match.
var (
	methodRE    = regexp.MustCompile(`^[A-Z]{1,32}$`)
	luaHeaderRE = regexp.MustCompile("^[a-z0-9!#$%&'*+.^_`|~-]{1,256}$")
)

// match checks l.Match as lua/routes.lua's compile_match takes it, and
// what Build promises on top: conditions sorted by name, one per name,
// regular expressions that Go and PCRE read alike, no empty match.
func (c *contract) match(where string, m *config.Match) {
	if m == nil {
		return
	}
	if m.Method == "" && len(m.Headers) == 0 && len(m.Query) == 0 || m.Method != "" && !methodRE.MatchString(m.Method) {
		c.fail("%s: match %+v", where, m)
	}
	for _, l := range []struct {
		header bool
		list   []config.MatchValue
	}{{true, m.Headers}, {false, m.Query}} {
		for i, v := range l.list {
			nameOK := len(v.Name) > 0 && len(v.Name) <= 256 && !strings.ContainsFunc(v.Name, func(r rune) bool { return r < ' ' || r == 0x7f })
			if l.header {
				nameOK = luaHeaderRE.MatchString(v.Name)
			}
			if !nameOK || intent.CheckHeaderValue(v.Value) != nil || i > 0 && l.list[i-1].Name >= v.Name || len(l.list) > 64 {
				c.fail("%s: match condition %+v", where, v)
			}
			if _, err := regexp.Compile(v.Value); v.Regex && (err != nil || intent.ValidateHeaderPattern(v.Value) != nil) {
				c.fail("%s: match regex %q", where, v.Value)
			}
		}
	}
}

// headerNameRE mirrors the header check of lua/canary.lua.
var headerNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)

// canary checks l.Canary as lua/canary.lua compiles it, and what Build
// promises on top: a backend that is sent and is not the main one, no
// canary on a catch-all, a value or pattern only with a header, one of
// them only.
func (c *contract) canary(where string, l *config.Location) {
	k := l.Canary
	if k == nil {
		return
	}
	if k.Backend == "" || !c.backends[k.Backend] || k.Backend == l.Backend || l.Ingress == "" || !luaNameOK(k.Ingress) {
		c.fail("%s: canary backend %q of %q", where, k.Backend, k.Ingress)
	}
	if k.WeightTotal < 1 || k.WeightTotal > intent.MaxCanaryWeight || k.Weight < 0 || k.Weight > k.WeightTotal {
		c.fail("%s: canary weight %d of %d", where, k.Weight, k.WeightTotal)
	}
	if k.Header != "" && !headerNameRE.MatchString(k.Header) || k.Cookie != "" && !cookieNameRE.MatchString(k.Cookie) {
		c.fail("%s: canary header %q cookie %q", where, k.Header, k.Cookie)
	}
	if k.Header == "" && (k.HeaderValue != "" || k.HeaderPattern != "") || k.HeaderValue != "" && k.HeaderPattern != "" ||
		strings.ContainsFunc(k.HeaderValue, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		c.fail("%s: canary header %q value %q pattern %q", where, k.Header, k.HeaderValue, k.HeaderPattern)
	}
	if p := k.HeaderPattern; p != "" {
		if _, err := regexp.Compile(p); err != nil || intent.ValidateRegexPath("/"+p) != nil {
			c.fail("%s: canary header pattern %q", where, p)
		}
	}
}

func (c *contract) settings(where string, s *config.LocationSettings) {
	for _, t := range []int{s.ProxyConnectTimeout, s.ProxyReadTimeout, s.ProxySendTimeout} {
		if t != 0 && (t < 1 || t > intent.MaxProxyTimeout) {
			c.fail("%s: timeout %d", where, t)
		}
	}
	if n, ok := s.ProxyBodySize.Bytes(); s.ProxyBodySize != "" && (!ok || n < 0) {
		c.fail("%s: body size %q", where, s.ProxyBodySize)
	}
	if !slices.Contains(protocols, s.BackendProtocol) {
		c.fail("%s: protocol %q", where, s.BackendProtocol)
	}
	if t := s.RewriteTarget; t != "" && (!strings.HasPrefix(t, "/") || strings.ContainsAny(t, " ;{}\"'`\\\n\r\t?#")) {
		c.fail("%s: rewrite target %q", where, t)
	}
	c.allowList(where, s.AllowSourceRange)
	c.allowList(where, s.DenySourceRange)
	if p := s.XForwardedPrefix; p != "" && (s.RewriteTarget == "" || strings.ContainsFunc(p, func(r rune) bool { return r > 0x7f || !intent.PathChar(byte(r)) })) {
		c.fail("%s: forwarded prefix %q without rewrite or with other characters", where, p)
	}
	if r := s.Redirect; r != nil {
		if _, err := intent.ParseRedirectURL(r.URL); err != nil || r.Code < 300 || r.Code > 308 {
			c.fail("%s: redirect %q %d", where, r.URL, r.Code)
		}
	}
	c.cors(where, s.CORS)
	if _, err := intent.ParseUpstreamVhost(s.UpstreamVhost); s.UpstreamVhost != "" && err != nil {
		c.fail("%s: upstream vhost %q", where, s.UpstreamVhost)
	}
	if h := s.ConnectionHeader; h != "" && h != "close" && h != "keep-alive" {
		c.fail("%s: connection header %q", where, h)
	}
	c.headers(where+" response", s.ResponseHeaders, false)
	c.proxy(where, s.Proxy)
	c.errors(where, s.Errors)
	c.rateLimit(where, s.RateLimit)
	c.basicAuth(where, s.BasicAuth)
	c.externalAuth(where, s.ExternalAuth)
	c.proxySSL(where, s.ProxySSL)
	// ModSecurity: the renderer and Lua take what Validate accepts, else
	// the route answers 503 (Unavailable).
	if m := s.ModSecurity; m != nil && !m.Unavailable && m.Validate() != nil {
		c.fail("%s: ModSecurity %+v: %v", where, *m, m.Validate())
	}
}

// basicAuth: a valid realm; users with valid names and hashes, sorted and
// unique; none when unavailable.
func (c *contract) basicAuth(where string, a *config.BasicAuth) {
	if a == nil {
		return
	}
	if !intent.ValidRealm(a.Realm) || a.Unavailable && len(a.Users) > 0 {
		c.fail("%s: basic auth %+v", where, *a)
	}
	for i, u := range a.Users {
		if _, _, err := authUser(u.Name, u.Hash, map[string]bool{}); err != nil || i > 0 && a.Users[i-1].Name >= u.Name {
			c.fail("%s: basic auth user %q %q", where, u.Name, u.Hash)
		}
	}
}

// errors: codes 400 to 599, sorted and unique; a known backend; names.
func (c *contract) errors(where string, e *config.CustomErrors) {
	if e == nil {
		return
	}
	if len(e.Codes) == 0 && !e.Fallback || !slices.IsSorted(e.Codes) || len(slices.Compact(slices.Clone(e.Codes))) != len(e.Codes) {
		c.fail("%s: error codes %v", where, e.Codes)
	}
	for _, code := range e.Codes {
		if code < 400 || code > 599 {
			c.fail("%s: error code %d", where, code)
		}
	}
	if e.Backend != "" && !c.backends[e.Backend] || e.Fallback && e.Backend == "" {
		c.fail("%s: error backend %q", where, e.Backend)
	}
	if e.Service != "" && !intent.IsDNSLabel(e.Service) || e.ServicePort != "" && !luaNameOK(e.ServicePort) {
		c.fail("%s: error service %q port %q", where, e.Service, e.ServicePort)
	}
}

// proxy: the enums router.lua takes, tries in range, URL characters only.
func (c *contract) proxy(where string, p *config.ProxySettings) {
	if p == nil {
		return
	}
	onOff := func(v string) bool { return v == "" || v == "on" || v == "off" }
	urlOK := func(v string) bool { return v == "" || intent.ProxyURLRE.MatchString(v) }
	if !onOff(p.Buffering) || !onOff(p.RequestBuffering) || p.HTTPVersion != "" && p.HTTPVersion != "1.0" && p.HTTPVersion != "1.1" ||
		p.NextUpstreamTries < 0 || p.NextUpstreamTries > ingress.MaxNextUpstreamTries ||
		(p.RedirectFrom == "") != (p.RedirectTo == "") || (p.CookieDomainFrom == "") != (p.CookieDomainTo == "") ||
		(p.CookiePathFrom == "") != (p.CookiePathTo == "") {
		c.fail("%s: proxy %+v", where, *p)
	}
	for _, v := range []string{p.RedirectFrom, p.RedirectTo, p.CookieDomainFrom, p.CookieDomainTo, p.CookiePathFrom, p.CookiePathTo} {
		if !urlOK(v) {
			c.fail("%s: proxy rewrite value %q", where, v)
		}
	}
}

func (c *contract) cors(where string, p *config.CORS) {
	if p == nil {
		return
	}
	if !intent.CORSMethodsRE.MatchString(p.Methods) || !intent.CORSHeadersRE.MatchString(p.Headers) ||
		p.Expose != "" && !intent.CORSExposeRE.MatchString(p.Expose) || p.MaxAge < 0 {
		c.fail("%s: CORS %+v", where, *p)
	}
	if p.Origins != nil && len(p.Origins) == 0 {
		c.fail("%s: CORS without any allowed origin", where)
	}
	for _, o := range p.Origins {
		if !intent.CORSOriginRE.MatchString(o) {
			c.fail("%s: CORS origin %q", where, o)
		}
	}
}

func (c *contract) allowList(where string, list []string) {
	if list == nil {
		return
	}
	if len(list) == 0 || len(list) > intent.MaxSourceRanges || !slices.IsSorted(list) {
		c.fail("%s: allow-list of %d entries, sorted %v", where, len(list), slices.IsSorted(list))
	}
	for _, r := range list {
		p, err := netip.ParsePrefix(r)
		if err != nil || p != p.Masked() || p.String() != r {
			c.fail("%s: allow entry %q", where, r)
		}
	}
}

// checkDataPlane fails t with the contract violations of cfg.
func checkDataPlane(t testing.TB, cfg *config.Configuration) {
	t.Helper()
	if v := dataPlaneViolations(cfg); len(v) > 0 {
		if len(v) > 20 {
			v = append(v[:20], fmt.Sprintf("and %d more", len(v)-20))
		}
		t.Errorf("data plane contract:\n%s", strings.Join(v, "\n"))
	}
}

// TestDataPlaneContract checks the contract checker itself on values the
// data plane refuses.
func TestDataPlaneContract(t *testing.T) {
	good := func() *config.Configuration { return diffBase(t) }
	tests := map[string]struct {
		mutate func(c *config.Configuration)
		want   string
	}{
		"valid":           {func(c *config.Configuration) {}, ""},
		"upper-case host": {func(c *config.Configuration) { c.Servers[1].Hostname = "A.com" }, `server hostname "A.com"`},
		"deep wildcard":   {func(c *config.Configuration) { c.Servers[1].Hostname = "*.*.a.com" }, `server hostname`},
		"regex in prefix": {func(c *config.Configuration) { c.Servers[1].Locations[0].Path = "/a b" }, `location Prefix "/a b"`},
		"invalid regex": {func(c *config.Configuration) {
			c.Servers[1].Locations[0].PathType = config.PathRegex
			c.Servers[1].Locations[0].Path = "/("
		}, `location Regex "/("`},
		"unknown type":     {func(c *config.Configuration) { c.Servers[1].Locations[0].PathType = "Glob" }, `unknown path type`},
		"timeout":          {func(c *config.Configuration) { c.Servers[1].Locations[0].Settings.ProxyReadTimeout = 86401 }, `timeout 86401`},
		"body size":        {func(c *config.Configuration) { c.Servers[1].Locations[0].Settings.ProxyBodySize = "2t" }, `body size "2t"`},
		"protocol":         {func(c *config.Configuration) { c.Servers[1].Locations[0].Settings.BackendProtocol = "FCGI" }, `protocol "FCGI"`},
		"relative rewrite": {func(c *config.Configuration) { c.Servers[1].Locations[0].Settings.RewriteTarget = "x" }, `rewrite target "x"`},
		"allow entry": {func(c *config.Configuration) {
			c.Servers[1].Locations[0].Settings.AllowSourceRange = []string{"10.0.0.1/8"}
		}, `allow entry "10.0.0.1/8"`},
		"empty allow-list": {func(c *config.Configuration) { c.Servers[1].Locations[0].Settings.AllowSourceRange = []string{} }, `allow-list of 0 entries`},
		"unsorted": {func(c *config.Configuration) {
			c.Servers[1].Locations = slices.Clone(c.Servers[1].Locations)
			slices.Reverse(c.Servers[1].Locations)
		}, `not strictly after`},
		"no catch-all":    {func(c *config.Configuration) { c.Servers[1].Locations = c.Servers[1].Locations[:1] }, `has 0 Prefix / locations`},
		"unknown backend": {func(c *config.Configuration) { c.Servers[1].Locations[0].Backend = "nope" }, `backend "nope" is not sent`},
		"endpoint port":   {func(c *config.Configuration) { c.Backends.At(1).Endpoints[0].Port = 0 }, `endpoint "10.0.0.1" port 0`},
		"long cert name":  {func(c *config.Configuration) { c.Certificates[1].Name = "ns/" + strings.Repeat("a", 318) }, `certificate name`},
		"valid mirrors": {func(c *config.Configuration) {
			c.Servers[1].Locations[0].Mirrors = []config.Mirror{{Backend: "ns-api-80", Numerator: 1, Denominator: 2, Body: true},
				{URL: "https://m.example.com$request_uri", Host: "shadow.example.com", Numerator: 1, Denominator: 1}}
		}, ""},
		"mirror backend not sent": {func(c *config.Configuration) {
			c.Servers[1].Locations[0].Mirrors = []config.Mirror{{Backend: "nope", Numerator: 1, Denominator: 1}}
		}, `mirror {Backend:nope`},
		"mirror url variable": {func(c *config.Configuration) {
			c.Servers[1].Locations[0].Mirrors = []config.Mirror{{URL: "https://m.example.com/$document_root", Numerator: 1, Denominator: 1}}
		}, `mirror {Backend: URL:https://m.example.com/$document_root`},
		"mirror fraction": {func(c *config.Configuration) {
			c.Servers[1].Locations[0].Mirrors = []config.Mirror{{Backend: "ns-api-80", Numerator: 3, Denominator: 2}}
		}, `mirror {Backend:ns-api-80`},
		"valid canary": {func(c *config.Configuration) {
			c.Servers[1].Locations[0].Canary = &config.Canary{Backend: "ns-api-80", Ingress: "ns/c", Weight: 5, WeightTotal: 100,
				Header: "X-Canary", HeaderPattern: `^v\d$`, Cookie: "c"}
		}, ""},
		"canary backend not sent": {func(c *config.Configuration) {
			c.Servers[1].Locations[0].Canary = &config.Canary{Backend: "nope", Ingress: "ns/c", WeightTotal: 100}
		}, `canary backend "nope"`},
		"canary to the main backend": {func(c *config.Configuration) {
			c.Servers[1].Locations[0].Canary = &config.Canary{Backend: "ns-web-80", Ingress: "ns/c", WeightTotal: 100}
		}, `canary backend "ns-web-80"`},
		"canary weight above total": {func(c *config.Configuration) {
			c.Servers[1].Locations[0].Canary = &config.Canary{Backend: "ns-api-80", Ingress: "ns/c", Weight: 101, WeightTotal: 100}
		}, `canary weight 101 of 100`},
		"canary header": {func(c *config.Configuration) {
			c.Servers[1].Locations[0].Canary = &config.Canary{Backend: "ns-api-80", Ingress: "ns/c", WeightTotal: 100, Header: "X.Canary"}
		}, `canary header "X.Canary"`},
		"canary pattern": {func(c *config.Configuration) {
			c.Servers[1].Locations[0].Canary = &config.Canary{Backend: "ns-api-80", Ingress: "ns/c", WeightTotal: 100, Header: "X", HeaderPattern: "(a"}
		}, `canary header pattern "(a"`},
		"canary value without header": {func(c *config.Configuration) {
			c.Servers[1].Locations[0].Canary = &config.Canary{Backend: "ns-api-80", Ingress: "ns/c", WeightTotal: 100, HeaderValue: "yes"}
		}, `canary header "" value "yes"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := good()
			tc.mutate(c)
			v := dataPlaneViolations(c)
			switch {
			case tc.want == "" && len(v) > 0:
				t.Errorf("violations: %q", v)
			case tc.want != "" && !slices.ContainsFunc(v, func(s string) bool { return strings.Contains(s, tc.want) }):
				t.Errorf("violations %q lack %q", v, tc.want)
			}
		})
	}
}
