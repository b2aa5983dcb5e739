package config

import (
	"cmp"
	"fmt"
	"slices"
)

// maxReloadReasons bounds Change.ReloadReasons; the rest are counted.
const maxReloadReasons = 10

// Diff classifies what differs from old, the running Configuration, to
// new. old nil means nothing runs yet: a reload with everything upserted.
// Both are expected as Build returns them (slices sorted); unsorted input
// is sorted on a copy. Work is linear in the size of both; equal stored
// checksums return at once.
//
//   - Dynamic, through the Lua endpoints: Servers (the route table of a
//     host) added, removed or with any other field or Location; Backends
//     added, removed, or with other endpoints or balancing (by Backend
//     checksum); Certificates added, removed, or with other content or
//     hosts; a new default certificate name (Change.DefaultCertificate, with
//     that certificate upserted). The default backend is part of every
//     Server's catch-all route.
//   - Reload: the Global settings that nginx.conf holds (see
//     Global.rendered), the backend TLS profiles and the Gateway
//     Listeners (their listen directives); the others (ssl-redirect, force-ssl-redirect,
//     allow-snippet-annotations) change routes only.
func Diff(old, new *Configuration) Change {
	if new == nil {
		return Change{}
	}
	if old == nil {
		return Change{
			Reload:               true,
			ReloadReasons:        []string{"initial configuration"},
			ServersUpserted:      slices.Clone(new.Servers),
			BackendsUpserted:     values(new.Backends),
			CertificatesUpserted: slices.Clone(new.Certificates),
			DefaultCertificate:   new.DefaultCertificate,
		}
	}
	if old.Checksum != "" && old.Checksum == new.Checksum {
		return Change{}
	}
	var ch Change
	r := reasons{}
	if old.Global.Rendered() != new.Global.Rendered() {
		r.add("global settings changed")
	}
	if !upstreamTLSEqual(old.UpstreamTLS, new.UpstreamTLS) {
		r.add("backend TLS profiles changed")
	}
	if !SameListenPorts(old.Listeners, new.Listeners) {
		r.add("Gateway listener ports changed")
	}
	ch.Reload, ch.ReloadReasons = r.result()
	// A part shared with old (Incremental patches only what changed) is
	// not compared.
	hint := new.patch != nil && old.gen != nil && new.patch.base == old.gen
	switch {
	case hint && new.patch.hosts != nil:
		ch.ServersUpserted, ch.ServersRemoved = diffHosts(old.Servers, new.Servers, new.patch.hosts)
	case !sameArray(old.Servers, new.Servers):
		ch.ServersUpserted, ch.ServersRemoved = diffServers(sortedServers(old.Servers), sortedServers(new.Servers))
	}
	switch {
	case hint && !new.patch.spliced:
		for _, i := range new.patch.backends {
			ch.BackendsUpserted = append(ch.BackendsUpserted, *new.Backends.At(i))
		}
		slices.SortFunc(ch.BackendsUpserted, func(a, b Backend) int { return cmp.Compare(a.Name, b.Name) })
	case !old.Backends.Same(new.Backends):
		ch.BackendsUpserted, ch.BackendsRemoved = diffBackends(old.Backends, new.Backends)
	}
	if !sameArray(old.Certificates, new.Certificates) {
		ch.CertificatesUpserted, ch.CertificatesRemoved = diffCertificates(old.Certificates, new.Certificates)
	}
	if old.DefaultCertificate != new.DefaultCertificate && new.DefaultCertificate != "" {
		ch.DefaultCertificate = new.DefaultCertificate
		ch.CertificatesUpserted = withCertificate(ch.CertificatesUpserted, new)
	}
	return ch
}

// sameArray reports whether a and b are the same slice (same length and
// first element): Configurations are never modified once built.
func sameArray[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// reasons collects reload reasons, keeping the first maxReloadReasons.
type reasons struct {
	list []string
	n    int
}

func (r *reasons) add(format string, args ...any) {
	r.n++
	if len(r.list) < maxReloadReasons {
		r.list = append(r.list, fmt.Sprintf(format, args...))
	}
}

func (r *reasons) result() (bool, []string) {
	if r.n > len(r.list) {
		r.list = append(r.list, fmt.Sprintf("and %d more", r.n-len(r.list)))
	}
	return r.n > 0, r.list
}

// mergeWalk walks two slices sorted by compare, calling onlyOld, onlyNew
// or both for each key.
func mergeWalk[T any](old, new []T, compare func(a, b *T) int, onlyOld, onlyNew, both func(o, n *T)) {
	i, j := 0, 0
	for i < len(old) || j < len(new) {
		var c int
		switch {
		case i == len(old):
			c = 1
		case j == len(new):
			c = -1
		default:
			c = compare(&old[i], &new[j])
		}
		switch {
		case c < 0:
			onlyOld(&old[i], nil)
			i++
		case c > 0:
			onlyNew(nil, &new[j])
			j++
		default:
			both(&old[i], &new[j])
			i++
			j++
		}
	}
}

// sortedBy returns s if it is sorted by compare, else a sorted copy.
func sortedBy[T any](s []T, compare func(a, b T) int) []T {
	if slices.IsSortedFunc(s, compare) {
		return s
	}
	c := slices.Clone(s)
	slices.SortFunc(c, compare)
	return c
}

// diffHosts is diffServers for Servers that differ at most on hosts
// (ServerKeys, unique): old and new are sorted.
func diffHosts(old, new []Server, hosts []string) (upserted []Server, removed []string) {
	find := func(s []Server, h string) *Server {
		i, ok := slices.BinarySearchFunc(s, h, func(x Server, h string) int { return CompareServerKeys(x.Key(), h) })
		if !ok {
			return nil
		}
		return &s[i]
	}
	for _, h := range hosts {
		o, n := find(old, h), find(new, h)
		switch {
		case n == nil && o != nil:
			removed = append(removed, h)
		case n != nil && (o == nil || !ServerEqual(o, n)):
			upserted = append(upserted, *n)
		}
	}
	return upserted, removed
}

func compareServers(a, b Server) int { return CompareServers(&a, &b) }

func sortedServers(s []Server) []Server { return sortedBy(s, compareServers) }

// diffServers returns the Servers of new that old lacks or has otherwise,
// and the ServerKeys of the Servers only old has.
func diffServers(old, new []Server) (upserted []Server, removed []string) {
	mergeWalk(old, new, func(a, b *Server) int { return compareServers(*a, *b) },
		func(o, _ *Server) { removed = append(removed, o.Key()) },
		func(_, n *Server) { upserted = append(upserted, *n) },
		func(o, n *Server) {
			if !ServerEqual(o, n) {
				upserted = append(upserted, *n)
			}
		})
	return upserted, removed
}

// diffBackends compares old and new between the chunks they share (an
// Incremental patch copies only the chunks it changes): in sorted lists a
// chunk shared at the same index splits both at the same place, so the
// work is proportional to the chunks not shared. Lists that share chunks
// are taken to be sorted (only Incremental makes them); the spans between
// are sorted on a copy if they are not.
func diffBackends(old, new BackendList) (upserted []Backend, removed []string) {
	d := backendDiff{w: newCanonicalWriter(smallWriter)}
	from := 0
	for i := range min(len(old.chunks), len(new.chunks)) {
		if sameArray(old.chunks[i], new.chunks[i]) {
			to := i * backendChunk
			d.walk(old.span(from, to), new.span(from, to))
			from = to + len(new.chunks[i])
		}
	}
	d.walk(old.span(from, old.n), new.span(from, new.n))
	return d.upserted, d.removed
}

// backendDiff collects what diffBackends finds.
type backendDiff struct {
	w        *canonicalWriter
	upserted []Backend
	removed  []string
}

// walk compares a span of old Backends with the span of new ones in the
// same place.
func (d *backendDiff) walk(old, new []*Backend) {
	byName := func(a, b *Backend) int { return cmp.Compare(a.Name, b.Name) }
	mergeWalk(sortedBy(old, byName), sortedBy(new, byName),
		func(a, b **Backend) int { return cmp.Compare((*a).Name, (*b).Name) },
		func(o, _ **Backend) { d.removed = append(d.removed, (*o).Name) },
		func(_, n **Backend) { d.upserted = append(d.upserted, **n) },
		func(o, n **Backend) {
			// A Backend shared with old (Incremental) is unchanged.
			if *o != *n && d.sum(*o) != d.sum(*n) {
				d.upserted = append(d.upserted, **n)
			}
		})
}

func (d *backendDiff) sum(b *Backend) string {
	if b.Checksum != "" {
		return b.Checksum
	}
	return d.w.backendSum(b, SumEndpoints(b.Endpoints))
}

// values returns copies of the Backends of l.
func values(l BackendList) []Backend {
	out := make([]Backend, l.Len())
	for i, p := range l.All() {
		out[i] = *p
	}
	return out
}

func diffCertificates(old, new []Certificate) (upserted []Certificate, removed []string) {
	byName := func(a, b Certificate) int { return cmp.Compare(a.Name, b.Name) }
	w := newCanonicalWriter(smallWriter)
	sum := func(c *Certificate) string {
		if c.Checksum != "" {
			return c.Checksum
		}
		return w.certSum(c.Cert, c.Key)
	}
	mergeWalk(sortedBy(old, byName), sortedBy(new, byName),
		func(a, b *Certificate) int { return cmp.Compare(a.Name, b.Name) },
		func(o, _ *Certificate) { removed = append(removed, o.Name) },
		func(_, n *Certificate) { upserted = append(upserted, *n) },
		func(o, n *Certificate) {
			if sum(o) != sum(n) || !slices.Equal(o.Hosts, n.Hosts) {
				upserted = append(upserted, *n)
			}
		})
	return upserted, removed
}

// withCertificate adds the default certificate of c to upserted unless it
// is there, keeping the order by Name.
func withCertificate(upserted []Certificate, c *Configuration) []Certificate {
	name := c.DefaultCertificate
	i, found := slices.BinarySearchFunc(upserted, name, func(x Certificate, n string) int { return cmp.Compare(x.Name, n) })
	if found {
		return upserted
	}
	for _, cert := range c.Certificates {
		if cert.Name == name {
			return slices.Insert(upserted, i, cert)
		}
	}
	return upserted
}
