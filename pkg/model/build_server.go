package model

import (
	"cmp"
	"slices"
)

// serverState is a Server while it is built.
type serverState struct {
	hostname  string
	locations []location
	// inline holds the first locations, so that most servers need no
	// allocation of their own.
	inline [2]location
	// index finds a path in a server with many locations; nil until then.
	index map[pathKey]*ingressEntry
	// rootPrefix is set when a rule defines Prefix "/".
	rootPrefix bool
}

// pathKey is what two rules of one host may conflict on.
type pathKey struct {
	path     string
	pathType PathType
}

// indexAt is the number of locations from which a server indexes them.
const indexAt = 16

// location is a Location while it is built: its backend is named at the
// end, once every backend is known.
type location struct {
	path     string
	pathType PathType
	backend  *backendState
	ingress  *ingressEntry
	// canary is set by buildCanaries; nil when none.
	canary *canaryRoute
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

// server returns the Server of host, creating it.
func (b *builder) server(host string) *serverState {
	s := b.servers[host]
	if s == nil {
		s = b.serverSlab.alloc()
		s.hostname = host
		s.locations = s.inline[:0]
		b.servers[host] = s
	}
	return s
}

// claimedBy returns the Ingress whose location has path and pathType.
func (s *serverState) claimedBy(k pathKey) *ingressEntry {
	if s.index != nil {
		return s.index[k]
	}
	for i := range s.locations {
		if l := &s.locations[i]; l.path == k.path && l.pathType == k.pathType {
			return l.ingress
		}
	}
	return nil
}

func (s *serverState) add(l location) {
	if l.path == "/" && l.pathType == PathPrefix {
		s.rootPrefix = true
	}
	s.locations = append(s.locations, l)
	switch {
	case s.index != nil:
		s.index[pathKey{l.path, l.pathType}] = l.ingress
	case len(s.locations) >= indexAt:
		s.index = make(map[pathKey]*ingressEntry, 2*indexAt)
		for _, x := range s.locations {
			s.index[pathKey{x.path, x.pathType}] = x.ingress
		}
	}
}

// finish assembles the Configuration.
func (b *builder) finish() *Configuration {
	cfg := &Configuration{
		Global:             b.global,
		Backends:           b.finishBackends(),
		Certificates:       b.certs.finish(),
		DefaultCertificate: b.certs.defaultName(),
	}
	if b.defaultBackend != nil {
		cfg.DefaultBackend = b.defaultBackend.name
	}
	cfg.Servers = b.finishServers(cfg.DefaultBackend)
	cfg.Problems = sortProblems(b.problems)
	cfg.Checksum = configChecksum(cfg, true)
	return cfg
}

// finishServers returns the Servers, the default server first, then by
// Hostname.
func (b *builder) finishServers(defaultBackend string) []Server {
	redirect := [2]bool{false, true}
	states := make([]*serverState, 0, len(b.servers))
	n := 0
	for _, s := range b.servers {
		states = append(states, s)
		n += len(s.locations) + 1
	}
	slices.SortFunc(states, func(x, y *serverState) int { return compareHostnames(x.hostname, y.hostname) })
	locs := make([]Location, 0, n)
	out := make([]Server, len(states))
	for i, s := range states {
		m := len(locs) + len(s.locations) + 1
		out[i] = b.finishServer(s, defaultBackend, &redirect, locs[len(locs):len(locs):m])
		locs = locs[:m]
	}
	return out
}

// compareHostnames orders the default server first, then by name.
func compareHostnames(a, b string) int {
	if a == DefaultServerName || b == DefaultServerName {
		return boolRank(a != DefaultServerName) - boolRank(b != DefaultServerName)
	}
	return cmp.Compare(a, b)
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// finishServer builds one Server: TLS, redirect, its locations sorted and
// the catch-all, appended to locs (empty, with room for them all).
// redirect holds the shared false and true values that
// LocationSettings.SSLRedirect points to.
func (b *builder) finishServer(s *serverState, defaultBackend string, redirect *[2]bool, locs []Location) Server {
	srv := Server{Hostname: s.hostname}
	if c, ok := b.tls[s.hostname]; ok && s.hostname != DefaultServerName {
		srv.TLS = true
		srv.SSLRedirect = b.global.SSLRedirect
		if v := c.ingress.ann.sslRedirect; v != nil {
			srv.SSLRedirect = *v
		}
	}
	srv.Locations = locs
	for _, l := range s.locations {
		loc := Location{Path: l.path, PathType: l.pathType, Backend: l.backend.name, Ingress: l.ingress.name}
		loc.Settings = l.ingress.ann.location
		loc.Canary = l.canary.location()
		if r := loc.Settings.AllowSourceRange; r != nil {
			loc.Settings.AllowSourceRange = slices.Clone(r)
		}
		if v, override := locationRedirect(l.ingress, &srv, b.global.ForceSSLRedirect); override {
			loc.Settings.SSLRedirect = &redirect[boolRank(v)]
		}
		srv.Locations = append(srv.Locations, loc)
	}
	if !s.rootPrefix {
		srv.Locations = append(srv.Locations, Location{Path: "/", PathType: PathPrefix, Backend: defaultBackend})
	}
	slices.SortFunc(srv.Locations, compareLocations)
	return srv
}

// locationRedirect says whether a location of e redirects to HTTPS, and
// whether that differs from its server (then LocationSettings.SSLRedirect
// records it): force-ssl-redirect=true always redirects; ssl-redirect
// applies to TLS servers only. forceDefault is the ConfigMap's
// force-ssl-redirect, the default of the annotation: an Ingress without a
// valid force-ssl-redirect annotation takes it, one with "false" opts out.
func locationRedirect(e *ingressEntry, srv *Server, forceDefault bool) (redirect, override bool) {
	redirect = srv.SSLRedirect
	force := e.ann.forceSSLRedirect
	if forceDefault && !force {
		v, set := e.obj.Annotations[AnnotationPrefix+"force-ssl-redirect"]
		on, err := parseBool(v)
		force = !set || err != nil || on
	}
	switch {
	case force:
		redirect = true
	case e.ann.sslRedirect != nil && srv.TLS:
		redirect = *e.ann.sslRedirect
	}
	return redirect, redirect != srv.SSLRedirect
}

// compareLocations orders locations longest path first, then by path, and
// for the same path Exact, then Regex, then Prefix (a total order: a
// server has one location per path and type).
func compareLocations(a, b Location) int {
	if c := cmp.Compare(len(b.Path), len(a.Path)); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Path, b.Path); c != 0 {
		return c
	}
	return cmp.Compare(pathTypeRank(a.PathType), pathTypeRank(b.PathType))
}

// pathTypeRank orders the path types of one path.
func pathTypeRank(t PathType) int {
	switch t {
	case PathExact:
		return 0
	case PathRegex:
		return 1
	}
	return 2
}

// RedirectsToHTTPS reports whether requests for l over plain HTTP are
// redirected to HTTPS: l.Settings.SSLRedirect when set, else s.SSLRedirect.
func (s *Server) RedirectsToHTTPS(l *Location) bool {
	if l.Settings.SSLRedirect != nil {
		return *l.Settings.SSLRedirect
	}
	return s.SSLRedirect
}

// sortProblems sorts by kind, namespace, name and reason, without
// duplicates.
func sortProblems(ps []Problem) []Problem {
	slices.SortFunc(ps, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace),
			cmp.Compare(a.Name, b.Name), cmp.Compare(a.Reason, b.Reason))
	})
	return slices.Compact(ps)
}
