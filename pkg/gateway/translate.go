package gateway

import (
	"fmt"
	"slices"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// route is one HTTPRoute while it is translated.
type route struct {
	src *Source
	r   *gatewayv1.HTTPRoute
	e   *intent.Entry
	// hosts are the hostnames its accepted parents give it, each on the
	// nginx port of its listener.
	hosts []portHost
}

// portHost is a hostname on the nginx port of a listener; listener is
// the listener's own port, listeners the hostnames of the listeners that
// share it (portListeners).
type portHost struct {
	port      int
	host      string
	listener  int
	listeners []string
}

func comparePortHosts(a, b portHost) int {
	return config.CompareServerKeys(config.ServerKey(a.port, a.host), config.ServerKey(b.port, b.host))
}

func samePortHost(a, b portHost) bool { return comparePortHosts(a, b) == 0 }

// translate makes the entry of HTTPRoute r at key: its hosts from the
// listeners of our Gateways that accept it, and a path per match of its
// rules. What this step of the Gateway API support does not serve yet is
// left out with a Problem, never served otherwise than the spec says.
func (src *Source) translate(key intent.Key, r *gatewayv1.HTTPRoute) *intent.Entry {
	e := &intent.Entry{
		Origin:   intent.Origin{Kind: string(routeKind(r)), Namespace: key.Namespace, Name: key.Name, Generation: r.Generation},
		Key:      key,
		Name:     key.String(),
		Object:   r,
		Settings: &intent.Settings{},
		Created:  r.CreationTimestamp.Unix(), CreatedNanos: r.CreationTimestamp.Nanosecond(),
		SettingPrefix: "field ",
	}
	t := &route{src: src, r: r, e: e}
	for i := range r.Spec.ParentRefs {
		t.attach(&r.Spec.ParentRefs[i])
	}
	if len(t.hosts) == 0 {
		return e
	}
	slices.SortFunc(t.hosts, comparePortHosts)
	t.hosts = slices.CompactFunc(t.hosts, samePortHost)
	paths := t.paths()
	for _, h := range t.hosts {
		e.Rules = append(e.Rules, intent.Host{Host: h.host, Port: h.port, Raw: h.host, Paths: redirectsFrom(paths, h.listener),
			Listeners: h.listeners})
		e.Hosts = append(e.Hosts, config.ServerKey(h.port, h.host))
	}
	// A listener's port is plain HTTP or HTTPS: nothing is redirected
	// (ingress-nginx's ssl-redirect default).
	e.Settings.SSLRedirect = new(false)
	if IsGRPC(r) {
		// The backends of a GRPCRoute speak gRPC (HTTP/2 without TLS).
		e.Settings.Location.BackendProtocol = "GRPC"
	}
	slices.Sort(e.Hosts)
	e.Services = intent.UniqueKeys(e.Services)
	e.Secrets = intent.UniqueKeys(e.Secrets)
	e.ConfigMaps = intent.UniqueKeys(e.ConfigMaps)
	return e
}

// problem records a Problem of the route.
func (t *route) problem(format string, args ...any) {
	t.e.Problems = append(t.e.Problems, fmt.Sprintf(format, args...))
}

// attach adds the hostnames that parent ref p gives the route: those of
// every listener of a Gateway of ours that p selects and that accepts it.
func (t *route) attach(p *gatewayv1.ParentReference) {
	ns, name, ok := ParentGateway(p, t.r.Namespace)
	if !ok {
		return // not a Gateway: another controller's parent
	}
	gw := t.src.gateways[intent.Key{Namespace: ns, Name: name}]
	if !Ours(gw, func(name string) *gatewayv1.GatewayClass { return t.src.classes[name] }, t.src.controller) {
		return
	}
	for i := range gw.Spec.Listeners {
		l := &gw.Spec.Listeners[i]
		if !selects(p, l) {
			continue
		}
		t.listener(gw, l)
	}
}

// listener adds the hostnames listener l of gw gives the route, on the
// nginx port of the listener, unless it does not take the route or is not
// served (yet).
func (t *route) listener(gw *gatewayv1.Gateway, l *gatewayv1.Listener) {
	where := fmt.Sprintf("Gateway %s/%s listener %s", gw.Namespace, gw.Name, l.Name)
	if !allowsRoute(gw, l, t.r, t.src.namespaces[t.r.Namespace]) {
		return
	}
	var cert *SecretRef
	switch l.Protocol {
	case gatewayv1.HTTPProtocolType:
	case gatewayv1.HTTPSProtocolType:
		c, ok := t.certificate(gw, l, where)
		if !ok {
			return
		}
		cert = &c
	default:
		t.problem("%s: protocol %s is not served yet; not attached to it", where, l.Protocol)
		return
	}
	port, why := t.src.fleetPort(gw, l.Port)
	if why != "" {
		t.problem("%s: %s; not served yet", where, why)
		return
	}
	hosts := intersect(l.Hostname, t.r.Spec.Hostnames)
	if len(hosts) == 0 {
		t.problem("%s: no hostname of the route matches the listener's; not attached to it", where)
		return
	}
	listeners := portListeners(gw, l.Port)
	var out []string
	for _, h := range hosts {
		if err := intent.ValidHost(h); err != nil && h != config.DefaultServerName {
			t.problem("%s: hostname %q %v; left out", where, h, err)
			continue
		}
		if !isolated(listeners, l, h) {
			continue // a more specific listener of the port takes its requests
		}
		out = append(out, h)
		t.hosts = append(t.hosts, portHost{port: port, host: h, listener: int(l.Port), listeners: listeners})
	}
	// The listener's certificate is served for the route's names (their
	// Servers are TLS) and for every SNI name the listener's hostname
	// matches ("_": any name of the port no other listener names), whether
	// or not a route names it: the router answers 404 for a name without
	// routes, over TLS with the listener's certificate.
	if cert != nil && len(out) > 0 {
		hosts := slices.DeleteFunc(out, func(h string) bool { return h == config.DefaultServerName })
		if lh := listenerTLSHost(l); !slices.Contains(hosts, lh) {
			hosts = append(hosts, lh)
		}
		t.e.TLS = append(t.e.TLS, intent.TLS{Port: port, Hosts: hosts, Secret: cert.Name, Namespace: cert.Namespace})
		t.e.Secrets = append(t.e.Secrets, intent.Key(*cert))
	}
}

// listenerTLSHost is the name an HTTPS listener's certificate is claimed
// for on its port: its hostname, or the port's default server name.
func listenerTLSHost(l *gatewayv1.Listener) string {
	if l.Hostname == nil || *l.Hostname == "" {
		return config.DefaultServerName
	}
	return string(*l.Hostname)
}

// certificate returns the Secret an HTTPS listener terminates TLS with:
// its first certificateRef, a Secret of the Gateway's namespace or of one
// whose ReferenceGrant allows it. Passthrough and a listener without a
// usable certificate are not served (the route is not attached to it).
func (t *route) certificate(gw *gatewayv1.Gateway, l *gatewayv1.Listener, where string) (SecretRef, bool) {
	ref, err := listenerCertificate(gw, l, t.src.grantList())
	if err != nil {
		t.problem("%s: %v; not attached to it", where, err)
		return SecretRef{}, false
	}
	return ref, true
}

// paths returns the paths of the route's rules, the same on each of its
// hosts: one per match of a rule this step serves.
func (t *route) paths() []intent.Path {
	var out []intent.Path
	for i := range t.r.Spec.Rules {
		rule := &t.r.Spec.Rules[i]
		where := fmt.Sprintf("rule %d", i)
		if rule.Name != nil {
			where = fmt.Sprintf("rule %s", *rule.Name)
		}
		if why := unservedRule(rule); why != "" {
			t.problem("%s: %s is not served yet; rule left out", where, why)
			continue
		}
		filters, ok := t.filters(where, rule)
		timeouts, tok := t.timeouts(where, rule.Timeouts)
		if !ok || !tok {
			continue
		}
		var ref intent.BackendRef
		var weighted []intent.WeightedRef
		if filters == nil || filters.Redirect == nil { // a redirect needs no backend
			ref, weighted = t.backends(where, rule.BackendRefs)
		}
		mirrors := t.mirrors(where, rule)
		matches := rule.Matches
		if len(matches) == 0 {
			matches = []gatewayv1.HTTPRouteMatch{{}}
		}
		for j := range matches {
			if p, ok := t.match(fmt.Sprintf("%s match %d", where, j), &matches[j], filters); ok {
				p.Backend, p.Weighted, p.Filters, p.Timeouts, p.Mirrors = ref, weighted, filters, timeouts, mirrors
				out = append(out, p)
			}
		}
	}
	return out
}

// unservedRule names what of rule this step does not serve, "" for none.
func unservedRule(rule *gatewayv1.HTTPRouteRule) string {
	switch {
	case rule.SessionPersistence != nil:
		return "sessionPersistence"
	}
	return ""
}

// weight is a backendRef's weight, 1 when unset.
func weight(ref *gatewayv1.HTTPBackendRef) int {
	if ref.Weight == nil {
		return 1
	}
	return int(*ref.Weight)
}

// backend returns one backendRef of a rule: a Service port of the route's
// namespace, or of another that grants it, and the filter of its requests
// (backendFilters); false for a reference that cannot be served (its share
// of the requests answers 500).
func (t *route) backend(where string, ref *gatewayv1.HTTPBackendRef) (intent.BackendRef, *config.HeaderFilter, bool) {
	ns, err := backendService(routeKind(t.r), t.r.Namespace, &ref.BackendObjectReference, t.src.grantList())
	if err == nil && ref.Port == nil {
		err = fmt.Errorf("backendRef %s has no port", ref.Name)
	}
	var filter *config.HeaderFilter
	if err == nil {
		filter, err = backendFilters(ref)
	}
	if err != nil {
		t.problem("%s: %v; %s", where, err, share500)
		return intent.BackendRef{}, nil, false
	}
	t.e.Services = append(t.e.Services, intent.Key{Namespace: ns, Name: string(ref.Name)})
	out := intent.BackendRef{Service: string(ref.Name), PortNumber: int32(*ref.Port)}
	if ns != t.r.Namespace {
		out.Namespace = ns
	}
	t.withBackendTLS(ns, &out)
	return out, filter, true
}

// match returns the path of one match: Exact, PathPrefix (whole path
// elements, a trailing "/" ignored) or RegularExpression, with its
// conditions on headers, query parameters and the method (matches.go).
// A filter that replaces the matched prefix takes PathPrefix matches only.
func (t *route) match(where string, m *gatewayv1.HTTPRouteMatch, filters *config.Filters) (intent.Path, bool) {
	cond, ok := t.conditions(where, m)
	if !ok {
		return intent.Path{}, false
	}
	typ, value := gatewayv1.PathMatchPathPrefix, "/"
	if m.Path != nil {
		if m.Path.Type != nil {
			typ = *m.Path.Type
		}
		if m.Path.Value != nil {
			value = *m.Path.Value
		}
	}
	p := intent.Path{Raw: value, TypeName: string(typ), Path: value, Match: cond}
	var err error
	switch typ {
	case gatewayv1.PathMatchExact:
		p.PathType, err = config.PathExact, intent.ValidatePath(value)
	case gatewayv1.PathMatchPathPrefix:
		p.PathType, err, p.Path = config.PathPrefix, intent.ValidatePath(value), intent.NormalizePrefix(value)
	case gatewayv1.PathMatchRegularExpression:
		p.PathType, err = config.PathRegex, intent.ValidateRegexPath(value)
	default:
		err = fmt.Errorf("path type %q is not known", typ)
	}
	if err == nil && p.PathType != config.PathPrefix && replacesPrefix(filters) {
		err = errPrefixOnly
	}
	if err != nil {
		t.problem("%s: path %q %v; match left out", where, value, err)
		return intent.Path{}, false
	}
	return p, true
}
