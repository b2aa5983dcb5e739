package model

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// buildHeaders resolves the header ConfigMaps the controller ConfigMap
// names. A missing ConfigMap gives no headers, with a Problem.
func (b *builder) buildHeaders() {
	own := func(n string) string {
		if slices.Contains(proxyOwnHeaders, strings.ToLower(n)) {
			return "is set by the proxy itself (use upstream-vhost for Host, connection-proxy-header for Connection)"
		}
		return ""
	}
	b.up.requestHeaders = b.globalHeaders("proxy-set-headers", b.global.ProxySetHeaders, headerRule{noDollar: true, refused: own})
	b.up.responseHeaders = b.globalHeaders("add-headers", b.global.AddHeaders, headerRule{noDollar: true})
}

func (b *builder) globalHeaders(key, ref string, rule headerRule) []config.Header {
	if ref == "" {
		return nil
	}
	k, _ := intent.ParseKey(ref) // validated by the ConfigMap key's parser
	e := b.s.configMaps[k]
	if e == nil {
		b.problem("ConfigMap", k.Namespace, k.Name, "ConfigMap %s named by the controller ConfigMap's %s not found; no headers", ref, key)
		return nil
	}
	rule.what = "ConfigMap " + key
	hs, problems := headersOf(e.obj, rule)
	for _, p := range problems {
		b.problem("ConfigMap", k.Namespace, k.Name, "%s", p)
	}
	return hs
}

// customHeaderSet is what e's custom-headers gives its routes: the
// response headers, or closed (the routes answer 503).
type customHeaderSet struct {
	headers []config.Header
	closed  bool
}

// customHeaders returns the response headers of e's custom-headers
// annotation, resolved once per Build (see resolveRef): a ConfigMap of e's
// namespace, only names that global-allowed-response-headers lists (as
// ingress-nginx, which denies the others). Values are sent as written ('$'
// included). It fails closed, as ingress-nginx: a ConfigMap of another
// namespace or a missing one makes the routes answer 503, with a Problem.
func (b *builder) customHeaders(e *intent.Entry) customHeaderSet {
	ref := e.Settings.Upstream.CustomHeaders
	if ref == "" {
		return customHeaderSet{}
	}
	return resolveRef(b, e, refUse[customHeaderSet]{
		objectRef:   objectRef{refConfigMap, "custom-headers", ref},
		parse:       (*builder).customHeadersFrom,
		unavailable: func(*intent.Entry) customHeaderSet { return customHeaderSet{closed: true} },
	})
}

// customHeadersFrom returns the headers of e's custom-headers o that
// global-allowed-response-headers lists; the others are left out with a
// Problem.
func (b *builder) customHeadersFrom(e *intent.Entry, o refObject) (customHeaderSet, string) {
	allowed := strings.Split(b.global.AllowedResponseHeaders, ",")
	hs, problems := o.headers(headerRule{refused: func(n string) string {
		if !slices.Contains(allowed, strings.ToLower(n)) {
			return "is not listed in the controller ConfigMap's global-allowed-response-headers"
		}
		return ""
	}})
	for _, p := range problems {
		b.entryProblem(e, "%s", p)
	}
	return customHeaderSet{headers: hs}, ""
}

// headers validates the data of the header ConfigMap o (see headersOf).
func (o refObject) headers(rule headerRule) ([]config.Header, []string) {
	rule.what = o.settingPrefix + o.annotation + " " + o.kind + " " + o.key.String()
	return headersOf(o.configMap, rule)
}

// finishUpstream gives every Server the ConfigMap's request and response
// headers (shared slices: Servers are not modified after Build), and the
// aliases their certificates.
func (b *builder) finishUpstream(cfg *config.Configuration) {
	if b.aliasCertificates() {
		cfg.Certificates = b.certs.finish()
	}
	if b.up.requestHeaders == nil && b.up.responseHeaders == nil {
		return
	}
	for i := range cfg.Servers {
		cfg.Servers[i].RequestHeaders, cfg.Servers[i].ResponseHeaders = b.up.requestHeaders, b.up.responseHeaders
	}
}

// aliasCertificates serves each alias, by SNI, the certificate of its host
// when that certificate covers the alias name, as ingress-nginx does, and
// is a Secret of the aliasing Ingress's namespace (the others get the
// default certificate); an alias that is a TLS host itself keeps its own.
// It reports whether a certificate got an alias.
func (b *builder) aliasCertificates() bool {
	if len(b.up.aliasOf) == 0 {
		return false
	}
	byHost := map[string]*certState{}
	for _, c := range b.certs.byName {
		for _, h := range c.hosts {
			byHost[h] = c
		}
	}
	changed := false
	for alias, of := range b.up.aliasOf {
		c := byHost[of[0]]
		if c == nil || c.entry == nil || b.tls[alias] != nil || !strings.HasPrefix(c.name, of[1]+"/") ||
			c.entry.leaf.VerifyHostname(strings.Replace(alias, "*", "x", 1)) != nil {
			continue
		}
		c.hosts = append(c.hosts, alias)
		changed = true
	}
	if changed {
		for _, c := range b.certs.byName {
			slices.Sort(c.hosts)
		}
	}
	return changed
}

// appendAliases adds a Server for each server-alias name: a copy of its
// host's Server under the alias name. As in ingress-nginx, the oldest
// Ingress with a path on the host that sets server-alias gives the host
// its aliases (later ones get a Problem), and a name that is the host of a
// rule, or an alias of an older Ingress, is not an alias. The default
// server and redirect servers get none. Unlike ingress-nginx, the alias
// serves only the paths of Ingresses in the aliasing Ingress's namespace
// (and the default backend for the rest): an Ingress cannot publish
// another namespace's routes under a name of its choosing.
func (b *builder) appendAliases(out []config.Server, states []*serverState, defaultBackend string) []config.Server {
	n := len(out)
	type claim struct {
		host string
		e    *intent.Entry
	}
	claims := map[string]claim{}
	for _, s := range states {
		if s.hostname == config.DefaultServerName {
			continue
		}
		e := s.aliasEntry(b)
		if e == nil {
			continue
		}
		for _, alias := range e.Settings.Upstream.Aliases {
			if alias == s.hostname {
				continue
			}
			if b.servers[alias] != nil {
				b.entryProblem(e, "%s: %s is a host of a rule; not an alias of %s", e.Setting("server-alias"), alias, s.hostname)
				continue
			}
			if c, ok := claims[alias]; ok {
				if compareAge(c.e, e) > 0 {
					b.entryProblem(c.e, "%s: %s is an alias of %s for %s %s, which is older; not an alias of %s", c.e.Setting("server-alias"), alias, s.hostname, e.Origin.Kind, e.Name, c.host)
					claims[alias] = claim{s.hostname, e}
				} else {
					b.entryProblem(e, "%s: %s is an alias of %s for %s %s, which is older; not an alias of %s", e.Setting("server-alias"), alias, c.host, c.e.Origin.Kind, c.e.Name, s.hostname)
				}
				continue
			}
			claims[alias] = claim{s.hostname, e}
		}
	}
	if len(claims) == 0 {
		return out
	}
	byHost := make(map[string]*config.Server, len(out))
	for i := range out {
		byHost[out[i].Hostname] = &out[i]
	}
	b.up.aliases = make(map[string]bool, len(claims))
	b.up.aliasOf = make(map[string][2]string, len(claims))
	for alias, c := range claims {
		b.up.aliasOf[alias] = [2]string{c.host, c.e.Key.Namespace}
		src := *byHost[c.host]
		src.Hostname = alias
		src.Locations = aliasLocations(src.Locations, c.e.Key.Namespace, defaultBackend)
		out = append(out, src)
		b.up.aliases[alias] = true
	}
	if len(out) > n {
		slices.SortFunc(out, func(x, y config.Server) int { return config.CompareHostnames(x.Hostname, y.Hostname) })
	}
	return out
}

// aliasIngress returns the oldest Ingress with a location on s that sets
// server-alias, reporting the younger ones that set it too.
func (s *serverState) aliasEntry(b *builder) *intent.Entry {
	var winner *intent.Entry
	var others []*intent.Entry
	for i := range s.locations {
		e := s.locations[i].entry
		if len(e.Settings.Upstream.Aliases) == 0 || e == winner {
			continue
		}
		switch {
		case winner == nil:
			winner = e
		case compareAge(e, winner) < 0:
			others = append(others, winner)
			winner = e
		default:
			others = append(others, e)
		}
	}
	slices.SortFunc(others, compareAge)
	for _, e := range slices.Compact(others) {
		if e != winner {
			b.entryProblem(e, "%s: host %s has the aliases of %s %s, which is older; ignored for this host", e.Setting("server-alias"), s.hostname, winner.Origin.Kind, winner.Name)
		}
	}
	return winner
}

// serviceUpstream says whether e routes to the Service's ClusterIP: its
// service-upstream annotation, else the ConfigMap's service-upstream.
func (b *builder) serviceUpstream(e *intent.Entry) bool {
	if v := e.Settings.Upstream.ServiceUpstream; v != nil {
		return *v
	}
	return b.global.ServiceUpstream
}

// applyServiceUpstream replaces the endpoints of out with the Service's
// ClusterIP and port when the Ingresses routing to be say so: the oldest of
// those that set service-upstream decides (the others get a Problem if
// they differ), else the ConfigMap's default. A Service without a
// ClusterIP (headless) keeps its endpoints, with a Problem, as
// ingress-nginx falls back to them.
func (b *builder) applyServiceUpstream(be *backendState, out *config.Backend) {
	on := b.global.ServiceUpstream
	if len(be.upstreamOpinions) > 0 {
		slices.SortFunc(be.upstreamOpinions, compareAge)
		ops := slices.Compact(be.upstreamOpinions)
		winner := ops[0]
		on = b.serviceUpstream(winner)
		for _, e := range ops[1:] {
			if b.serviceUpstream(e) != on {
				b.entryProblem(e, "backend %s: service-upstream differs from %s, which is older and is used; ignored", be.name, winner)
			}
		}
	}
	if !on {
		return
	}
	svc := b.s.services[intent.Key{Namespace: be.key.namespace, Name: be.key.service}]
	if svc == nil {
		return
	}
	ip := svc.clusterIP
	if ip == "" || ip == corev1.ClusterIPNone {
		b.problem("Service", be.key.namespace, be.key.service, "service-upstream: the Service has no ClusterIP (headless); its endpoints are used")
		return
	}
	for i := range svc.ports {
		p := &svc.ports[i]
		if p.name == be.key.port || fmt.Sprint(p.port) == be.key.port {
			out.Endpoints = []config.Endpoint{{Address: ip, Port: p.port}}
			be.epSum, be.clusterIP = config.SumEndpoints(out.Endpoints), true
			return
		}
	}
}

// noteServiceUpstream records that e, which routes to be, sets
// service-upstream.
func (be *backendState) noteServiceUpstream(e *intent.Entry) {
	if e == nil || e.Settings.Upstream.ServiceUpstream == nil {
		return
	}
	if n := len(be.upstreamOpinions); n == 0 || be.upstreamOpinions[n-1] != e {
		be.upstreamOpinions = append(be.upstreamOpinions, e)
	}
}

// proxyOwnHeaders are the request headers nginx.conf sets for every
// backend: proxy-set-headers cannot replace them (nginx would send its own).
var proxyOwnHeaders = []string{"connection", "host", "proxy", "upgrade", "x-forwarded-for", "x-forwarded-host",
	"x-forwarded-port", "x-forwarded-proto", "x-forwarded-scheme", "x-original-forwarded-for", "x-real-ip", "x-request-id", "x-scheme"}

// headerRule says which headers a header ConfigMap may hold.
type headerRule struct {
	// what names the ConfigMap's use in Problems.
	what string
	// noDollar refuses '$': ingress-nginx expands nginx variables in
	// these values, which ingress-sync does not.
	noDollar bool
	// refused returns why a (valid) name may not be set, or "".
	refused func(name string) string
}

// headersOf validates the data of a header ConfigMap: each entry is a
// header, sorted by name; a bad entry is left out and its reason returned.
// Names that differ only in case keep the first in sorted order.
func headersOf(cm *corev1.ConfigMap, rule headerRule) ([]config.Header, []string) {
	keys := make([]string, 0, len(cm.Data))
	for k := range cm.Data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []config.Header
	var problems []string
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		v := cm.Data[k]
		reason := ""
		switch lower := strings.ToLower(k); {
		case !intent.ValidHeaderName(k):
			reason = "is not a header name (RFC 7230 token)"
		case seen[lower]:
			reason = "repeats a header name in another case"
		case len(out) >= intent.MaxHeaders:
			reason = fmt.Sprintf("is beyond %d headers", intent.MaxHeaders)
		case rule.noDollar && strings.Contains(v, "$"):
			reason = "holds '$': nginx variables are not expanded by ingress-sync"
		default:
			if err := intent.CheckHeaderValue(v); err != nil {
				reason = err.Error()
			} else if rule.refused != nil {
				reason = rule.refused(k)
			}
		}
		seen[strings.ToLower(k)] = true
		if reason != "" {
			problems = append(problems, fmt.Sprintf("%s: header %s %s; left out", rule.what, intent.Quote(k), reason))
			continue
		}
		out = append(out, config.Header{Name: k, Value: v})
	}
	return out, problems
}

// upstreamState is the part of a Build that the header ConfigMaps and
// server-alias need.
type upstreamState struct {
	// requestHeaders and responseHeaders are the ConfigMap's
	// proxy-set-headers and add-headers, for every Server.
	requestHeaders, responseHeaders []config.Header
	// aliases are the names taken by server-alias; aliasOf maps each to
	// its host and the aliasing Ingress's namespace.
	aliases map[string]bool
	aliasOf map[string][2]string
}

// aliasLocations returns the locations of Ingresses of namespace ns among
// locs, and a catch-all to the default backend when the host's is not
// among them.
func aliasLocations(locs []config.Location, ns, defaultBackend string) []config.Location {
	out := make([]config.Location, 0, len(locs)+1)
	regex, root := false, false
	for _, l := range locs {
		regex = regex || l.PathType == config.PathRegex
		if l.Ingress != "" && !strings.HasPrefix(l.Ingress, ns+"/") {
			continue
		}
		root = root || l.Path == "/" && l.PathType != config.PathExact
		out = append(out, l)
	}
	if !root {
		catchAll := config.Location{Path: "/", PathType: config.PathPrefix, Backend: defaultBackend}
		if regex {
			catchAll.PathType = config.PathRegex
		}
		out = append(out, catchAll)
		slices.SortStableFunc(out, compareLocations)
	}
	return out
}
