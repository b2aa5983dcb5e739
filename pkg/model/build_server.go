package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"cmp"
	"slices"
	"strings"
)

// serverState is a Server while it is built.
type serverState struct {
	hostname string
	// port is the Gateway listener's nginx port, 0 for nginx's own; key
	// is config.ServerKey of both.
	port      int
	key       string
	locations []location
	// inline holds the first locations, so that most servers need no
	// allocation of their own.
	inline [2]location
	// index finds a path in a server with many locations; nil until then.
	index map[pathKey]*intent.Entry
	// rootPrefix is set when a rule defines Prefix "/".
	rootPrefix bool
	// listeners are the hostnames of the Gateway listeners of its port
	// (config.Server.Listeners).
	listeners []string
}

// pathKey is what two rules of one host may conflict on: a path, its type
// and its conditions (config.Match.Key).
type pathKey struct {
	path     string
	pathType config.PathType
	match    string
}

// indexAt is the number of locations from which a server indexes them.
const indexAt = 16

// location is a Location while it is built: its backend is named at the
// end, once every backend is known.
type location struct {
	path     string
	pathType config.PathType
	backend  *backendState
	entry    *intent.Entry
	// canary is set by buildCanaries; nil when none.
	canary *canaryRoute
	// raw is the path as the rule wrote it; impl marks an
	// ImplementationSpecific path (see regexLocations).
	raw  string
	impl bool
	// match holds the conditions besides the path; nil for none.
	match *config.Match
	// filters are the path's Gateway API filters; nil for none.
	filters *config.Filters
	// weighted are the path's weighted backends (backend nil then).
	weighted []weightedBackend
	// timeouts are the path's Gateway API timeouts; nil for none.
	timeouts *config.Timeouts
	// mirrors get copies of the path's requests; nil for none.
	mirrors []mirrorTarget
	// tls is the backend TLS its BackendTLSPolicy asks; nil for none.
	tls *config.ProxySSL
}

// slab allocates values of T in chunks, to spare the allocator and the
// garbage collector one allocation per value.
type slab[T any] struct {
	chunk []T
	size  int
}

func (s *slab[T]) alloc() *T {
	if len(s.chunk) == cap(s.chunk) {
		s.chunk = make([]T, 0, max(s.size, 16))
	}
	s.chunk = s.chunk[:len(s.chunk)+1]
	return &s.chunk[len(s.chunk)-1]
}

// server returns the Server of host on nginx port port (0: nginx's own),
// creating it.
func (b *builder) server(port int, host string) *serverState {
	key := config.ServerKey(port, host)
	s := b.servers[key]
	if s == nil {
		s = b.serverSlab.alloc()
		s.hostname, s.port, s.key = host, port, key
		s.locations = s.inline[:0]
		b.servers[key] = s
	}
	return s
}

// claimedBy returns the Ingress whose location has path and pathType.
func (s *serverState) claimedBy(k pathKey) *intent.Entry {
	if s.index != nil {
		return s.index[k]
	}
	for i := range s.locations {
		if l := &s.locations[i]; l.path == k.path && l.pathType == k.pathType && l.match.Key() == k.match {
			return l.entry
		}
	}
	return nil
}

func (s *serverState) add(l location) {
	if l.path == "/" && l.pathType == config.PathPrefix && l.match == nil {
		s.rootPrefix = true
	}
	s.locations = append(s.locations, l)
	switch {
	case s.index != nil:
		s.index[l.key()] = l.entry
	case len(s.locations) >= indexAt:
		s.index = make(map[pathKey]*intent.Entry, 2*indexAt)
		for _, x := range s.locations {
			s.index[x.key()] = x.entry
		}
	}
}

// key is what l conflicts on.
func (l *location) key() pathKey { return pathKey{l.path, l.pathType, l.match.Key()} }

// finish assembles the Configuration.
func (b *builder) finish() *config.Configuration {
	cfg := b.finishRoutes()
	cfg.L4 = b.buildL4()
	cfg.Streams = b.buildStreams()
	cfg.Listeners = b.listenerList
	b.finishPassthrough(cfg)
	cfg.Problems = sortProblems(b.problems)
	b.sums = config.NewSums(cfg)
	cfg.Checksum = b.sums.Checksum(cfg)
	return cfg
}

// finishRoutes assembles what the Ingresses make of the Configuration:
// everything but the TCP and UDP services, the passthrough hosts, the
// Problems and the checksum.
func (b *builder) finishRoutes() *config.Configuration {
	cfg := &config.Configuration{
		Global:             b.global,
		Backends:           b.finishBackends(),
		Certificates:       b.certs.finish(),
		DefaultCertificate: b.certs.defaultName(),
	}
	if b.defaultBackend != nil {
		cfg.DefaultBackend = b.defaultBackend.name
	}
	cfg.Servers = b.finishServers(cfg.DefaultBackend)
	b.finishUpstream(cfg)
	b.finishBlock(cfg)
	b.finishUpstreamTLS(cfg)
	return cfg
}

// finishServers returns the Servers, the default server first, then by
// Hostname.
func (b *builder) finishServers(defaultBackend string) []config.Server {
	redirect := [2]bool{false, true}
	states := make([]*serverState, 0, len(b.servers))
	n := 0
	for _, s := range b.servers {
		states = append(states, s)
		n += len(s.locations) + 1
	}
	slices.SortFunc(states, func(x, y *serverState) int {
		return cmp.Or(cmp.Compare(x.port, y.port), config.CompareHostnames(x.hostname, y.hostname))
	})
	locs := make([]config.Location, 0, n)
	out := make([]config.Server, len(states))
	for i, s := range states {
		m := len(locs) + len(s.locations) + 1
		out[i] = b.finishServer(s, defaultBackend, &redirect, locs[len(locs):len(locs):m])
		locs = locs[:m]
	}
	return b.appendWWWRedirects(b.appendAliases(out, states, defaultBackend), states)
}

// appendWWWRedirects adds the servers of from-to-www-redirect: for a host
// with a path of an Ingress that sets it, "www.<host>" (or, for a host
// starting with "www.", the host without it) redirects every request to
// the host, unless a rule defines that name itself (it is then served as
// its rules say). Wildcard hosts and the default server get none.
func (b *builder) appendWWWRedirects(out []config.Server, states []*serverState) []config.Server {
	n := len(out)
	for _, s := range states {
		if s.port != 0 || s.hostname == config.DefaultServerName || strings.HasPrefix(s.hostname, "*.") ||
			!slices.ContainsFunc(s.locations, func(l location) bool { return l.entry.Settings.FromToWWW }) {
			continue
		}
		from, ok := strings.CutPrefix(s.hostname, "www.")
		if !ok {
			from = "www." + s.hostname
		}
		if b.servers[from] != nil || b.up.aliases[from] || intent.ValidHost(from) != nil {
			continue
		}
		out = append(out, config.Server{Hostname: from, RedirectTo: s.hostname})
	}
	if len(out) > n {
		slices.SortFunc(out, func(x, y config.Server) int { return config.CompareServers(&x, &y) })
	}
	return out
}

// finishServer builds one Server: TLS, redirect, its locations sorted and
// the catch-all, appended to locs (empty, with room for them all).
// redirect holds the shared false and true values that
// LocationSettings.SSLRedirect points to.
func (b *builder) finishServer(s *serverState, defaultBackend string, redirect *[2]bool, locs []config.Location) config.Server {
	srv := config.Server{Hostname: s.hostname, Port: s.port, Listeners: s.listeners}
	if c, ok := b.tls[s.key]; ok && s.hostname != config.DefaultServerName {
		srv.TLS = true
		srv.SSLRedirect = b.global.SSLRedirect
		if v := c.entry.Settings.SSLRedirect; v != nil {
			srv.SSLRedirect = *v
		}
	}
	regexHost := s.regexHost()
	srv.Locations = locs
	for i := range s.locations {
		l := &s.locations[i]
		loc := config.Location{Path: l.path, PathType: l.pathType, Ingress: l.entry.Name, Kind: originKind(l.entry)}
		if l.backend != nil {
			loc.Backend = l.backend.name
		}
		loc.Settings = b.settingsOf(l.entry, &srv, redirect)
		if loc.Settings.ExternalAuth != nil && noExternalAuth(&b.global.Auth, l.path) {
			loc.Settings.ExternalAuth = nil
		}
		if pathInList(l.path, b.global.NoTLSRedirectLocations) && srv.RedirectsToHTTPS(&loc) {
			loc.Settings.SSLRedirect = &redirect[0] // no-tls-redirect-locations
		}
		b.setErrors(l.entry, &loc.Settings, l.backend)
		if l.tls != nil {
			loc.Settings.ProxySSL, loc.Settings.BackendProtocol = l.tls, "HTTPS"
		}
		loc.Canary = l.canary.location()
		loc.Match, loc.Filters, loc.Backends, loc.Timeouts = l.match, l.filters, weightedOf(l.weighted), l.timeouts
		loc.Mirrors = mirrorsOf(l.mirrors)
		if !l.rewrites() {
			loc.Settings.RewriteTarget, loc.Settings.XForwardedPrefix = "", ""
		}
		if !regexHost {
			srv.Locations = append(srv.Locations, loc)
			continue
		}
		srv.Locations = b.appendRegex(srv.Locations, s, l, loc)
	}
	if !s.rootPrefix {
		srv.Locations = append(srv.Locations, b.catchAll(s, &srv, defaultBackend, regexHost, redirect))
	}
	slices.SortStableFunc(srv.Locations, compareLocations)
	srv.AppRoot = s.appRoot(srv.Locations)
	srv.ClientAuth = b.clientAuthOf(s)
	return srv
}

// settingsOf returns the settings of e's locations on srv: its
// annotations, the HTTPS redirect resolved against srv, and the ConfigMap's
// proxy timeouts and body size where the annotations set none (see
// withGlobalDefaults).
func (b *builder) settingsOf(e *intent.Entry, srv *config.Server, redirect *[2]bool) config.LocationSettings {
	st := e.Settings.Location
	if r := st.AllowSourceRange; r != nil {
		st.AllowSourceRange = slices.Clone(r)
	} else if b.global.AllowSourceRange != "" && !e.Settings.AllowlistInvalid {
		st.AllowSourceRange = strings.Split(b.global.AllowSourceRange, ",")
	}
	if r := st.DenySourceRange; r != nil {
		st.DenySourceRange = slices.Clone(r)
	} else if b.global.DenySourceRange != "" && !st.SourceRangeInvalid {
		st.DenySourceRange = strings.Split(b.global.DenySourceRange, ",")
	}
	if v, override := locationRedirect(e, srv, b.global.ForceSSLRedirect); override {
		i := 0
		if v {
			i = 1
		}
		st.SSLRedirect = &redirect[i]
	}
	b.withGlobalDefaults(&st)
	st.RateLimit = rateLimitWithGlobal(st.RateLimit, &e.Settings.Limit, &b.global)
	custom := b.customHeaders(e)
	st.ResponseHeaders, st.CustomHeadersUnavailable = custom.headers, custom.closed
	st.BasicAuth = b.basicAuth(e)
	st.ExternalAuth = b.externalAuth(e)
	st.ClientAuthUnavailable = b.clientAuthClosed(e)
	st.ModSecurity = intent.ResolveModSecurity(e.Settings.ModSecurity, &b.global.ModSecurity)
	t := &e.Settings.Tracing
	st.Tracing = b.global.OpenTelemetry.LocationTracing(t.Enable, t.TrustIncoming, t.OperationName)
	return st
}

// routeDefaults are the ConfigMap's proxy timeouts and body size where
// they differ from ingress-nginx's defaults (which nginx.conf holds; 0 and
// "" where they do not), and its proxy settings.
type routeDefaults struct {
	connect, read, send int
	body                config.Size
	proxy               config.ProxySettings
	any                 bool
}

func routeDefaultsOf(g *config.Global) routeDefaults {
	d := config.DefaultGlobal()
	var r routeDefaults
	differs := func(v, def int) int {
		if v != def {
			return v
		}
		return 0
	}
	r.connect = differs(g.ProxyConnectTimeout, d.ProxyConnectTimeout)
	r.read = differs(g.ProxyReadTimeout, d.ProxyReadTimeout)
	r.send = differs(g.ProxySendTimeout, d.ProxySendTimeout)
	gb, _ := g.ProxyBodySize.Bytes()
	if db, _ := d.ProxyBodySize.Bytes(); gb != db {
		r.body = g.ProxyBodySize
	}
	r.proxy = g.Proxy
	r.any = r != (routeDefaults{})
	return r
}

// withGlobalDefaults fills the proxy timeouts, body size and proxy settings
// st does not set from the ConfigMap (b.routeDefaults): per-route
// defaults, so that changing them pushes routes and never reloads nginx.
func (b *builder) withGlobalDefaults(st *config.LocationSettings) {
	r := &b.routeDefaults
	if !r.any {
		return
	}
	fill := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	fill(&st.ProxyConnectTimeout, r.connect)
	fill(&st.ProxyReadTimeout, r.read)
	fill(&st.ProxySendTimeout, r.send)
	if st.ProxyBodySize == "" {
		st.ProxyBodySize = r.body
	}
	withProxyDefaults(st, &r.proxy)
}

// catchAll is the "/" location a host gets when no rule defines one: the
// default backend, with the settings of the host's oldest Ingress, as
// ingress-nginx gives its root location the annotations of the Ingress
// that created the server (its allow-list and redirects then cover every
// path of the host); a rewrite is not applied to it.
func (b *builder) catchAll(s *serverState, srv *config.Server, defaultBackend string, regexHost bool, redirect *[2]bool) config.Location {
	l := config.Location{Path: "/", PathType: config.PathPrefix, Backend: defaultBackend}
	if regexHost {
		l.PathType = config.PathRegex
	}
	if len(s.locations) > 0 {
		l.Settings = b.settingsOf(s.locations[0].entry, srv, redirect)
		l.Settings.RewriteTarget, l.Settings.XForwardedPrefix = "", ""
		b.setErrors(s.locations[0].entry, &l.Settings, b.defaultBackend)
	} else {
		b.withGlobalDefaults(&l.Settings)
		b.setErrors(nil, &l.Settings, b.defaultBackend)
	}
	return l
}

// rewrites reports whether l's rewrite-target applies: set and not equal to
// the path, as ingress-nginx decides.
func (l *location) rewrites() bool {
	t := l.entry.Settings.Location.RewriteTarget
	return t != "" && t != l.raw
}

// regexHost reports whether every path of s is a regular expression: as in
// ingress-nginx, one path with use-regex or a rewrite-target on a host makes
// all its paths regex locations.
func (s *serverState) regexHost() bool {
	for i := range s.locations {
		if l := &s.locations[i]; l.entry.Settings.UseRegex || l.rewrites() {
			return true
		}
	}
	return false
}

// appendRegex appends the regex locations that stand for l on a regex host
// (see regexHost), as ingress-nginx writes them: a Prefix path "/foo" of an
// Ingress without regex or rewrite is "^/foo/" plus "^/foo" (unless an
// Exact "/foo" exists), every other path its own text. A text that is not a
// valid regular expression is left out with a Problem.
func (b *builder) appendRegex(out []config.Location, s *serverState, l *location, loc config.Location) []config.Location {
	paths := []string{l.path}
	switch {
	case l.pathType == config.PathRegex, l.pathType == config.PathExact:
	case l.impl || l.raw == "/" || l.entry.Settings.UseRegex || l.rewrites():
		paths[0] = l.raw
	default:
		paths[0] = strings.TrimSuffix(l.raw, "/") + "/"
		if s.claimedBy(pathKey{path: l.raw, pathType: config.PathExact}) == nil {
			paths = append(paths, l.raw)
		}
	}
	loc.PathType = config.PathRegex
	for _, p := range paths {
		if err := intent.ValidateRegexPath(p); err != nil {
			b.entryProblem(l.entry, "host %s path %q: %v (every path of this host is a regular expression, as one of its Ingresses sets use-regex or rewrite-target); path left out", s.hostname, p, err)
			continue
		}
		loc.Path = p
		out = append(out, loc)
	}
	return out
}

// appRoot is the app-root of the first location (in order) whose Ingress
// sets one: ingress-nginx applies every such annotation host-wide, the
// first one winning.
func (s *serverState) appRoot(locs []config.Location) string {
	roots := map[string]string{}
	for i := range s.locations {
		if e := s.locations[i].entry; e.Settings.AppRoot != "" {
			roots[e.Name] = e.Settings.AppRoot
		}
	}
	if len(roots) == 0 {
		return ""
	}
	for i := range locs {
		if r, ok := roots[locs[i].Ingress]; ok {
			return r
		}
	}
	return ""
}

// locationRedirect says whether a location of e redirects to HTTPS, and
// whether that differs from its server (then LocationSettings.SSLRedirect
// records it): force-ssl-redirect=true always redirects; ssl-redirect
// applies to TLS servers only. forceDefault is the ConfigMap's
// force-ssl-redirect, the default of the annotation: an Ingress without a
// valid force-ssl-redirect annotation takes it, one with "false" opts out.
func locationRedirect(e *intent.Entry, srv *config.Server, forceDefault bool) (redirect, override bool) {
	redirect = srv.SSLRedirect
	force := e.Settings.ForceSSLRedirect
	if forceDefault && !force {
		force = !e.Settings.ForceSSLRedirectOff
	}
	switch {
	case force:
		redirect = true
	case e.Settings.SSLRedirect != nil && srv.TLS:
		redirect = *e.Settings.SSLRedirect
	}
	return redirect, redirect != srv.SSLRedirect
}

// compareLocations orders locations as ingress-nginx orders its regex
// locations: longest path first, then by path in reverse byte order; for
// the same path Exact, then Regex, then Prefix. Only regex locations of a
// regex host (see regexHost) can tie; a stable sort keeps them oldest
// Ingress first.
func compareLocations(a, b config.Location) int {
	if c := cmp.Compare(len(b.Path), len(a.Path)); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Path, a.Path); c != 0 {
		return c
	}
	if c := cmp.Compare(pathTypeRank(a.PathType), pathTypeRank(b.PathType)); c != 0 {
		return c
	}
	return config.CompareMatches(a.Match, b.Match)
}

// pathTypeRank orders the path types of one path.
func pathTypeRank(t config.PathType) int {
	switch t {
	case config.PathExact:
		return 0
	case config.PathRegex:
		return 1
	}
	return 2
}

// sortProblems sorts by kind, namespace, name and reason, without
// duplicates.
func sortProblems(ps []config.Problem) []config.Problem {
	slices.SortFunc(ps, func(a, b config.Problem) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace),
			cmp.Compare(a.Name, b.Name), cmp.Compare(a.Reason, b.Reason))
	})
	return slices.Compact(ps)
}

// originKind is config.Location.Kind of a path of e: its origin's kind,
// "" for an Ingress.
func originKind(e *intent.Entry) string {
	if e.Origin.Kind == intent.KindIngress {
		return ""
	}
	return e.Origin.Kind
}
