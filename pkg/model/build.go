package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"cmp"
	"errors"
	"fmt"
	"slices"
)

// Build turns the Store into the Configuration nginx serves. It is pure
// and deterministic: the same Store and Options give an identical
// Configuration and Checksum, whatever the order in which objects were
// applied. It never fails: whatever it cannot serve is left out and listed
// in Configuration.Problems, and everything else is served.
//
// Build places the entries of every source (route intents, see
// pkg/intent); how an Ingress becomes an entry is pkg/ingress's. The
// semantics, in the order Build applies them:
//
//   - Served entries (intent.Source.Serving) are taken oldest first
//     (creation time, then namespace/name); wherever two of them disagree,
//     the oldest wins and the others get a Problem naming it. An entry
//     its source refused (Entry.Refused) is not served at all.
//   - Hosts: each host is one Server per port: nginx's own ports (the
//     Ingresses'), or the port of a Gateway listener (intent.Host.Port, one
//     of the Listeners that buildListeners validates); Servers of two ports
//     never conflict. The default server "_" of nginx's own ports always
//     exists. An invalid host of an entry is left out with a Problem.
//   - Paths: Exact, Prefix (element-wise) and regex paths, as the entry
//     gives them, validated and normalized by its source; the same host,
//     path and path type claimed twice is served by the oldest entry (or
//     its first claim).
//   - Backends: a Service port in the entry's namespace, by number or by
//     name (names must be DNS labels: they become part of backend names).
//     Endpoints are the ready ones (conditions.ready unset counts as
//     ready) of every EndpointSlice labelled with the Service name, taking
//     the slice port whose name equals the Service port's name (as
//     kube-proxy resolves targetPort). A Service with no ready endpoint is
//     still a Backend (nginx answers 503). An unknown Service, a missing
//     port, a reference to anything but a Service or an ExternalName
//     Service (not supported: the Lua balancer needs addresses) leave the
//     path out with a Problem.
//   - Backend names are "<namespace>-<service>-<port>". Should two
//     different Service ports give the same name (namespace "a-b" service
//     "c" and namespace "a" service "b-c"), the first in namespace, service,
//     port order keeps it and the others get "-" and 8 hex digits of a hash
//     of their identity appended.
//   - Load balancing (Settings.Balancing) belongs to a Backend: among the
//     entries that route to it and set it, the oldest decides; the others
//     get a Problem if they differ.
//   - Default backend: that of the oldest served entry that has a valid
//     one, otherwise Options.DefaultBackendService (its first port),
//     otherwise "" (the built-in 404). It is one for the whole
//     configuration, as in ingress-nginx's default server.
//   - Catch-all: every Server gets a Prefix "/" location to the default
//     backend, unless an entry gives that host a Prefix "/" path (or a
//     path its source leaves to the implementation, Path.Impl). An Exact
//     "/" does not replace it.
//   - TLS: see buildTLS.
//   - Settings: resolved per location (the Secrets and ConfigMaps they
//     name, see resolveRef), failing closed for access control.
//   - Canary entries (Settings.Canary) add no routes, TLS or default
//     backend of their own: see buildCanaries.
func Build(s *Store, opts Options) *config.Configuration {
	cfg, _ := build(s, opts)
	return cfg
}

// build is Build, returning the builder too (its sums and backend states
// are what Incremental keeps).
func build(s *Store, opts Options) (*config.Configuration, *builder) {
	b := newBuilder(s, opts, len(s.entries))
	b.buildGlobal()
	b.buildHeaders()
	b.buildListeners()
	b.selectEntries(s.allEntries())
	b.buildDefaultBackend(b.entries)
	b.buildTLS()
	b.buildRules()
	b.buildCanaries()
	return b.finish(), b
}

// builder holds the state of one Build.
type builder struct {
	s      *Store
	opts   Options
	global config.Global
	// ingresses are the served ones, oldest first.
	entries []*intent.Entry
	// canaries are the served canary Ingresses, oldest first: they add
	// no locations of their own (see buildCanaries).
	canaries []*intent.Entry
	backends map[backendKey]*backendState
	// backendList holds the values of backends in creation order.
	backendList []*backendState
	// lastBackend spares a map lookup for consecutive paths to one
	// backend.
	lastBackend *backendState
	// sums are the checksum trees of the result (see finish).
	sums *config.Sums
	// servers and tls are by config.ServerKey.
	servers map[string]*serverState
	tls     map[string]*tlsClaim
	// listeners are the valid ports of the Gateway listeners
	// (buildListeners), listenerList their Configuration.Listeners.
	listeners    map[int]bool
	listenerList []config.Listener
	// slabs of the states above.
	serverSlab  slab[serverState]
	backendSlab slab[backendState]
	// defaultBackend is nil for the built-in 404; defaultWinner is the
	// Ingress whose spec.defaultBackend it is, if any.
	defaultBackend *backendState
	defaultWinner  *intent.Entry
	certs          certificates
	// refs caches what each feature made of the Secret or ConfigMap an
	// Ingress's annotation names (see resolveRef).
	refs map[refUseKey]any
	// globalAuth is the ConfigMap's ExternalAuth (see externalAuth).
	globalAuth *config.ExternalAuth
	// gwTLS is what each BackendTLSPolicy made of its locations' backend
	// TLS, gwProfiles its profiles (resolve_backendtls.go).
	gwTLS      map[*intent.BackendTLSPolicy]*config.ProxySSL
	gwProfiles map[string]*config.UpstreamTLS
	// up holds the header ConfigMaps and server aliases.
	up       upstreamState
	problems []config.Problem

	// errorBackends are the default-backend annotations' backends.
	errorBackends map[*intent.Entry]*backendState
	// routeDefaults are the ConfigMap's per-route defaults that differ from
	// ingress-nginx's (see withGlobalDefaults), set by buildGlobal.
	routeDefaults routeDefaults
}

// newBuilder returns a builder sized for n Ingresses.
func newBuilder(s *Store, opts Options, n int) *builder {
	b := &builder{
		s:        s,
		opts:     opts,
		backends: make(map[backendKey]*backendState, n),
		servers:  make(map[string]*serverState, n+1),
		tls:      map[string]*tlsClaim{},
	}
	b.serverSlab.size, b.backendSlab.size = n+1, n
	b.server(0, config.DefaultServerName)
	return b
}

func (b *builder) problem(kind, namespace, name, format string, args ...any) {
	b.problems = append(b.problems, config.Problem{Kind: kind, Namespace: namespace, Name: name, Reason: fmt.Sprintf(format, args...)})
}

// ingressProblem is a Problem of the object e was translated from, named
// by its Origin.
func (b *builder) entryProblem(e *intent.Entry, format string, args ...any) {
	b.problem(e.Origin.Kind, e.Origin.Namespace, e.Origin.Name, format, args...)
}

// buildGlobal reads the controller ConfigMap.
func (b *builder) buildGlobal() {
	b.global = config.DefaultGlobal()
	if b.opts.ConfigMap == "" {
		return
	}
	key, err := intent.ParseKey(b.opts.ConfigMap)
	if err != nil {
		b.problem(config.ProblemKindOptions, "", "configmap", "%v", err)
		return
	}
	g, auth, problems := b.s.global(key)
	b.global = g
	b.routeDefaults = routeDefaultsOf(&g)
	b.globalAuth = auth
	for _, p := range problems {
		b.problem("ConfigMap", key.Namespace, key.Name, "%s", p)
	}
}

// selectIngresses keeps the served Ingresses among candidates, oldest
// first, and reports their annotation problems.
func (b *builder) selectEntries(candidates []*intent.Entry) {
	serves := b.s.serving(b.opts)
	b.entries = make([]*intent.Entry, 0, len(candidates))
	for _, e := range candidates {
		if serves(e) {
			b.entries = append(b.entries, e)
		}
	}
	slices.SortFunc(b.entries, compareAge)
	served := b.entries[:0]
	for _, e := range b.entries {
		for _, p := range e.Problems {
			b.entryProblem(e, "%s", p)
		}
		// An entry its source refuses (an Ingress with snippets, which
		// may carry access rules) is not served at all: fail closed.
		if e.Refused != "" {
			b.entryProblem(e, "%s", e.Refused)
			continue
		}
		if e.Settings.Canary != nil {
			b.canaries = append(b.canaries, e)
			continue
		}
		served = append(served, e)
	}
	b.entries = served
}

// compareAge orders Ingresses oldest first: creationTimestamp, then
// namespace, then name.
func compareAge(a, b *intent.Entry) int {
	if c := cmp.Compare(a.Created, b.Created); c != 0 {
		return c
	}
	if c := cmp.Compare(a.CreatedNanos, b.CreatedNanos); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Key.Namespace, b.Key.Namespace); c != 0 {
		return c
	}
	return cmp.Compare(a.Key.Name, b.Key.Name)
}

// buildDefaultBackend picks the default backend: the oldest valid
// spec.defaultBackend among candidates (served, oldest first), else
// Options.DefaultBackendService.
func (b *builder) buildDefaultBackend(candidates []*intent.Entry) {
	var winner *intent.Entry
	for _, e := range candidates {
		ref := e.DefaultBackend
		if ref == nil {
			continue
		}
		be, err := b.backendFor(e.Key.Namespace, *ref)
		switch {
		case err != nil:
			b.entryProblem(e, "spec.defaultBackend: %v; ignored", err)
		case b.defaultBackend == nil:
			b.defaultBackend, winner = be, e
			be.use(e)
		case b.defaultBackend != be:
			b.entryProblem(e, "spec.defaultBackend: ignored, %s is older and its default backend (service %s port %s) is used",
				winner, b.defaultBackend.key.service, b.defaultBackend.key.port)
		default:
			be.use(e)
		}
	}
	b.defaultWinner = winner
	if b.defaultBackend == nil && b.opts.DefaultBackendService != "" {
		b.defaultBackend = b.flagDefaultBackend()
	}
}

// buildRules adds a location for every valid path of every served Ingress.
func (b *builder) buildRules() {
	for _, e := range b.entries {
		for i := range e.Rules {
			b.buildRule(e, &e.Rules[i])
		}
	}
}

func (b *builder) buildRule(e *intent.Entry, rule *intent.Host) {
	if rule.Err != nil {
		b.entryProblem(e, "rule host %q %v; rule left out", rule.Raw, rule.Err)
		return
	}
	if rule.Port != 0 && !b.listeners[rule.Port] {
		b.entryProblem(e, "host %s: its listener's port %d is not served; rule left out", rule.Raw, rule.Port)
		return
	}
	srv := b.server(rule.Port, rule.Host)
	if rule.Listeners != nil {
		srv.listeners = rule.Listeners // the same for every route of the port
	}
	for i := range rule.Paths {
		b.buildPath(e, srv, &rule.Paths[i])
	}
}

func (b *builder) buildPath(e *intent.Entry, srv *serverState, p *intent.Path) {
	if p.Err != nil {
		b.entryProblem(e, "host %s path %q: %v; path left out", srv.hostname, p.Raw, p.Err)
		return
	}
	path, pathType := p.Path, p.PathType
	if p.Backend.Unsupported {
		b.entryProblem(e, "host %s path %s: only Service backends are supported; path left out", srv.hostname, path)
		return
	}
	be, err := b.pathBackend(e, srv.port, p)
	if err != nil {
		b.entryProblem(e, "host %s path %s: %v; path left out", srv.hostname, path, err)
		return
	}
	if winner := srv.claimedBy(pathKey{path, pathType, p.Match.Key()}); winner != nil {
		if winner == e {
			b.entryProblem(e, "host %s path %s (%s): defined twice; the first rule is used", srv.hostname, path, pathType)
		} else {
			b.entryProblem(e, "host %s path %s (%s): conflicts with %s, which is older and is used", srv.hostname, path, pathType, winner)
		}
		return
	}
	weighted := b.weightedFor(e, srv.hostname, p)
	switch {
	case plain(weighted):
		be, weighted = weighted[0].be, nil // one backend that resolves: routed as a plain one
	case be != nil:
		be.use(e)
	}
	b.errorBackendOf(e)
	srv.add(location{path: path, pathType: pathType, backend: be, entry: e, raw: cmp.Or(p.Raw, "/"), impl: p.Impl,
		match: p.Match, filters: p.Filters, weighted: weighted, timeouts: p.Timeouts, mirrors: b.mirrorsFor(e, srv.hostname, p),
		tls: b.backendTLSFor(e, srv.hostname, p, be, weighted)})
}

// errNoResponseFilter: nginx.conf runs no response header filter.
var errNoResponseFilter = errors.New("a response header filter needs the controller ConfigMap's add-headers or global-allowed-response-headers, or a Gateway listener's port (nginx.conf then runs the response header filter)")

// pathBackend resolves the backend of path p; nil for a path that
// redirects (a Gateway API RequestRedirect), which needs none, and for
// one with weighted backends (see weightedFor). A path
// whose response header filter nginx.conf would not run is refused: it
// runs while the ConfigMap sets response headers, and on every port when
// nginx listens on a Gateway listener's (port, of the path's Server, not
// 0: the path is served there only while the port is a listener).
func (b *builder) pathBackend(e *intent.Entry, port int, p *intent.Path) (*backendState, error) {
	switch f := p.Filters; {
	case f != nil && f.ResponseHeaders != nil && port == 0 && !b.global.ResponseHeaders():
		return nil, errNoResponseFilter
	case f != nil && f.Redirect != nil, len(p.Weighted) > 0:
		return nil, nil
	}
	return b.backendFor(e.Key.Namespace, p.Backend)
}
