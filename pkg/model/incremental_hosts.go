package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"slices"
	"strings"
)

// Ingress changes are rebuilt per host (see rebuildHosts): an Ingress
// feeds the Servers of its hosts, the certificates of its TLS hosts and
// the Backends it routes to, and, but for the settings listed in
// hostLocal, nothing else. The Ingresses that can shape the same Servers
// are those that share a host with it, and so on from theirs: that
// closure, the island, is built with Build's own code, and its Servers,
// Backends, certificates and Problems replace the island's part of the
// running Configuration. Whatever an island cannot decide alone makes the
// next Configuration a full Build.

// ingressChange is a route event applied since the last Configuration:
// its key and the entry the Store held before it (nil for a create).
type entryChange struct {
	key    entryKey
	before *intent.Entry
}

// islandLimit is the most Ingresses a host rebuild takes out of n: past
// it, a full Build costs about as much.
func islandLimit(n int) int { return max(64, n/8) }

// island is the part of the Store that a set of Ingress changes can
// affect: the hosts, and the Ingresses with any of those hosts, the
// changed ones included (before holds the changed ones as they were).
type island struct {
	hosts  map[string]bool
	keys   map[entryKey]bool
	before []*intent.Entry
}

// hostVariants are the names whose Servers a rule on host can change: the
// host, and the name from-to-www-redirect pairs it with (see
// appendWWWRedirects).
func hostVariants(host string) []string {
	if host == config.DefaultServerName || strings.HasPrefix(host, "*.") || strings.Contains(host, ":") {
		return []string{host}
	}
	if bare, ok := strings.CutPrefix(host, "www."); ok {
		return []string{host, bare}
	}
	return []string{host, "www." + host}
}

// findIsland returns the island of the pending changes, or false when it
// holds more Ingresses than islandLimit.
func (in *Incremental) findIsland() (*island, bool) {
	is := &island{hosts: map[string]bool{}, keys: map[entryKey]bool{}}
	var queue []string
	addHosts := func(hosts []string) {
		for _, h := range hosts {
			for _, v := range hostVariants(h) {
				if !is.hosts[v] {
					is.hosts[v] = true
					queue = append(queue, v)
				}
			}
		}
	}
	for _, c := range in.changes {
		is.keys[c.key] = true
		if c.before != nil {
			is.before = append(is.before, c.before)
			addHosts(c.before.Hosts)
		}
		if now := in.s.entries[c.key]; now != nil {
			addHosts(now.Hosts)
		}
	}
	limit := islandLimit(len(in.s.entries))
	for len(queue) > 0 {
		h := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, k := range in.s.entriesByHost[intent.Key{Name: h}] {
			if is.keys[k] {
				continue
			}
			if is.keys[k] = true; len(is.keys) > limit {
				return nil, false
			}
			addHosts(in.s.entries[k].Hosts)
		}
	}
	return is, true
}

// hostLocal reports whether what e contributes to a Configuration is its
// hosts' only: it sets nothing that Build decides across hosts (the
// default backend, server aliases, www redirects, passthrough, backend
// TLS profiles, a Backend's balancing or service-upstream, error
// backends, streams).
func hostLocal(e *intent.Entry) bool {
	a := e.Settings
	return e.DefaultBackend == nil && len(e.Streams) == 0 && len(a.Upstream.Aliases) == 0 && !a.FromToWWW && !a.SSLPassthrough &&
		!a.ProxySSL.Requested && !a.BackendTLS && a.Balancing == nil && a.Upstream.ServiceUpstream == nil && a.ErrorService == ""
}

// rebuildHosts rebuilds the island of the pending Ingress changes and
// splices it into cur; false when it cannot (a full Build is then needed).
func (in *Incremental) rebuildHosts() bool {
	if !in.hostsOK {
		return false
	}
	is, ok := in.findIsland()
	if !ok {
		return false
	}
	entries := make([]*intent.Entry, 0, len(is.keys))
	for k := range is.keys {
		if e := in.s.entries[k]; e != nil {
			entries = append(entries, e)
		}
	}
	for _, e := range slices.Concat(entries, is.before) {
		if !hostLocal(e) {
			return false
		}
	}
	b := newBuilder(in.s, in.opts, len(entries))
	b.buildGlobal()
	if b.global.ServiceUpstream {
		return false
	}
	b.buildHeaders()
	b.buildListeners()
	b.problems = b.problems[:0] // the full Build's: the listeners are not the island's
	b.selectEntries(entries)
	var winner []*intent.Entry
	if e := in.s.entries[in.defaultWinner]; in.defaultWinner.Name != "" && e != nil {
		winner = []*intent.Entry{e}
	}
	b.buildDefaultBackend(winner)
	b.buildTLS()
	b.buildRules()
	b.buildCanaries()
	return in.splice(is, b, b.finishRoutes())
}

// splice replaces the island's part of cur by part, built from the island
// only; false when part disagrees with cur on what the island does not
// decide.
func (in *Incremental) splice(is *island, b *builder, part *config.Configuration) bool {
	cur := in.cur
	if part.DefaultBackend != cur.DefaultBackend || part.DefaultCertificate != cur.DefaultCertificate {
		return false
	}
	// A route may change how a listener port is served (a Gateway's port
	// serves h2c while only GRPCRoutes are attached): a full Build.
	if !slices.Equal(b.listenerList, cur.Listeners) {
		return false
	}
	out := *cur
	out.SplicedFrom(cur, sortedHosts(is.hosts))
	if !in.spliceServers(&out, is, part) || !in.spliceBackends(&out, is, b, part) {
		return false
	}
	in.spliceCertificates(&out, is, part)
	out.Problems = spliceProblems(cur.Problems, is, b.problems)
	out.Checksum = in.sums.Checksum(&out)
	in.cur = &out
	return true
}

// sortedHosts returns the hosts (ServerKeys) sorted by CompareServerKeys.
func sortedHosts(hosts map[string]bool) []string {
	out := make([]string, 0, len(hosts))
	for h := range hosts {
		out = append(out, h)
	}
	slices.SortFunc(out, config.CompareServerKeys)
	return out
}

// spliceServers replaces the Servers of the island's hosts.
func (in *Incremental) spliceServers(out *config.Configuration, is *island, part *config.Configuration) bool {
	w := config.NewHasher()
	add := make([]config.Server, 0, len(part.Servers))
	for _, s := range part.Servers {
		if s.RedirectTo != "" {
			return false
		}
		if is.hosts[s.Key()] {
			add = append(add, s)
			in.sums.SetServer(s.Key(), w.Server(&s))
		}
	}
	// The hostnames of the island, so that the Servers outside it (nearly
	// all) are passed over without making their key.
	names := make(map[string]bool, len(is.hosts))
	for k := range is.hosts {
		_, h := config.SplitServerKey(k)
		names[h] = true
	}
	merged := make([]config.Server, 0, len(out.Servers)+len(add))
	for i := range out.Servers {
		s := &out.Servers[i]
		if !names[s.Hostname] || !is.hosts[s.Key()] {
			for len(add) > 0 && config.CompareServers(&add[0], s) <= 0 {
				merged, add = append(merged, add[0]), add[1:]
			}
			merged = append(merged, *s)
			continue
		}
		if s.RedirectTo != "" {
			return false
		}
		if !slices.ContainsFunc(part.Servers, func(x config.Server) bool { return x.Port == s.Port && x.Hostname == s.Hostname }) {
			in.sums.RemoveServer(s.Key())
		}
	}
	out.Servers = append(merged, add...)
	return true
}

// mergeSorted merges two slices sorted by cmp.
func mergeSorted[T any](a, b []T, cmp func(x, y T) int) []T {
	if len(b) == 0 {
		return a
	}
	out := make([]T, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if cmp(a[0], b[0]) <= 0 {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// islandBackends are the names of the Backends the island's Servers of cur
// route to (servers are sorted by CompareServers).
func islandBackends(servers []config.Server, is *island) map[string]bool {
	out := map[string]bool{}
	for k := range is.hosts {
		var want config.Server
		want.Port, want.Hostname = config.SplitServerKey(k)
		i, ok := slices.BinarySearchFunc(servers, &want, func(s config.Server, t *config.Server) int { return config.CompareServers(&s, t) })
		if !ok {
			continue
		}
		for _, l := range servers[i].Locations {
			out[l.Backend] = true
			if l.Canary != nil {
				out[l.Canary.Backend] = true
			}
			if e := l.Settings.Errors; e != nil {
				out[e.Backend] = true
			}
			for _, w := range l.Backends {
				out[w.Backend] = true
			}
		}
	}
	delete(out, "")
	return out
}

// usedOutside reports whether something outside the island routes to
// the Backend name of cur.
func (in *Incremental) usedOutside(is *island, name string) bool {
	return slices.ContainsFunc(in.users[name], func(k entryKey) bool { return k == entryKey{} || !is.keys[k] })
}

// spliceBackends replaces the island's Backends: those only the island
// routes to are the island's; those something else routes to too must be
// the same in part as in cur.
func (in *Incremental) spliceBackends(out *config.Configuration, is *island, b *builder, part *config.Configuration) bool {
	cur := in.cur.Backends
	names := islandBackends(in.cur.Servers, is)
	for _, be := range part.Backends.All() {
		names[be.Name] = true
	}
	changed := map[string]*config.Backend{} // nil: removed
	for name := range names {
		nb, _, inPart := part.Backends.Find(name)
		old, _, inCur := cur.Find(name)
		outside := in.usedOutside(is, name)
		switch {
		case inCur && old.Affinity != nil || inPart && nb.Affinity != nil:
			return false // a canary takes its main backend's affinity, across Ingresses
		case inPart && name != (backendKey{nb.Namespace, nb.Service, nb.Port}).name():
			return false // renamed: names depend on every Backend
		case inPart && inCur && (old.Namespace != nb.Namespace || old.Service != nb.Service || old.Port != nb.Port):
			return false
		case outside && (!inCur || inPart && old.Checksum != nb.Checksum):
			return false
		case outside:
		case inPart && (!inCur || old.Checksum != nb.Checksum):
			changed[name] = nb
		case !inPart && inCur:
			changed[name] = nil
		}
	}
	in.updateUsers(is, b, names)
	if len(changed) == 0 {
		return true
	}
	out.Backends = in.applyBackendChanges(cur, changed)
	in.updateDeps(b, changed)
	return true
}

// updateUsers records who routes to the Backends names after the splice:
// their users outside the island and the island's.
func (in *Incremental) updateUsers(is *island, b *builder, names map[string]bool) {
	for name := range names {
		users := slices.DeleteFunc(slices.Clone(in.users[name]), func(k entryKey) bool { return k != entryKey{} && is.keys[k] })
		if len(users) == 0 {
			delete(in.users, name)
		} else {
			in.users[name] = users
		}
	}
	for _, be := range b.backendList {
		if be.used {
			in.users[be.name] = appendUsers(in.users[be.name], be.users)
		}
	}
}

// appendUsers appends the keys of users (entryKey{} for nil) to keys.
func appendUsers(keys []entryKey, users []*intent.Entry) []entryKey {
	for _, e := range users {
		k := entryKey{}
		if e != nil {
			k = keyOf(e)
		}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// applyBackendChanges returns cur with the changes (nil removes) and
// records them in the checksum tree.
func (in *Incremental) applyBackendChanges(cur config.BackendList, changed map[string]*config.Backend) config.BackendList {
	list := make([]*config.Backend, 0, cur.Len()+len(changed))
	var added []*config.Backend
	for _, be := range cur.All() {
		nb, ok := changed[be.Name]
		switch {
		case !ok:
			list = append(list, be)
		case nb != nil:
			list = append(list, nb)
		}
	}
	for name, nb := range changed {
		if nb == nil {
			in.sums.RemoveBackend(name)
			continue
		}
		in.sums.SetBackend(name, nb.Checksum)
		if _, _, found := cur.Find(name); !found {
			added = append(added, nb)
		}
	}
	slices.SortFunc(added, func(x, y *config.Backend) int { return strings.Compare(x.Name, y.Name) })
	return config.NewBackendList(mergeSorted(list, added, func(x, y *config.Backend) int { return strings.Compare(x.Name, y.Name) }))
}

// updateDeps records which Services feed the changed Backends.
func (in *Incremental) updateDeps(b *builder, changed map[string]*config.Backend) {
	for name := range changed {
		k, ok := in.depOf[name]
		if !ok {
			continue
		}
		delete(in.depOf, name)
		deps := slices.DeleteFunc(in.deps[k], func(d endpointDep) bool { return d.name == name })
		if len(deps) == 0 {
			delete(in.deps, k)
		} else {
			in.deps[k] = deps
		}
	}
	for _, be := range b.backendList {
		if nb := changed[be.name]; be.used && nb != nil && be.err == nil && !be.clusterIP {
			in.addDep(be)
		}
	}
}

// spliceCertificates gives the island's TLS hosts their certificates.
func (in *Incremental) spliceCertificates(out *config.Configuration, is *island, part *config.Configuration) {
	w := config.NewHasher()
	fresh := map[string]*config.Certificate{}
	for i := range part.Certificates {
		fresh[part.Certificates[i].Name] = &part.Certificates[i]
	}
	certs := make([]config.Certificate, 0, len(in.cur.Certificates))
	for _, c := range in.cur.Certificates {
		hosts := slices.DeleteFunc(slices.Clone(c.Hosts), func(h string) bool { return is.hosts[h] })
		if f := fresh[c.Name]; f != nil {
			hosts = append(hosts, f.Hosts...)
			slices.Sort(hosts)
			delete(fresh, c.Name)
		}
		if slices.Equal(hosts, c.Hosts) {
			certs = append(certs, c)
			continue
		}
		if len(hosts) == 0 && c.Name != out.DefaultCertificate {
			in.sums.RemoveCertificate(c.Name)
			continue
		}
		c.Hosts = hosts
		in.sums.SetCertificate(c.Name, w.CertificateEntry(&c))
		certs = append(certs, c)
	}
	var added []config.Certificate
	for _, f := range fresh {
		if len(f.Hosts) > 0 {
			in.sums.SetCertificate(f.Name, w.CertificateEntry(f))
			added = append(added, *f)
		}
	}
	slices.SortFunc(added, func(x, y config.Certificate) int { return strings.Compare(x.Name, y.Name) })
	out.Certificates = mergeSorted(certs, added, func(x, y config.Certificate) int { return strings.Compare(x.Name, y.Name) })
}

// spliceProblems replaces the Problems of the island's Ingresses. The
// island's other Problems (the ConfigMap's, the flags') are those of cur,
// and sortProblems drops the copies.
func spliceProblems(cur []config.Problem, is *island, add []config.Problem) []config.Problem {
	var out []config.Problem
	for _, p := range cur {
		if !is.keys[entryKey{p.Kind, intent.Key{Namespace: p.Namespace, Name: p.Name}}] {
			out = append(out, p)
		}
	}
	return sortProblems(append(out, add...))
}
