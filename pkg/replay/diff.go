package replay

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"slices"
	"strings"
)

// Diff is the short, readable difference one event made to the
// Configuration. Every list is sorted.
type Diff struct {
	BackendsAdded   []string `json:"backendsAdded,omitempty"`
	BackendsRemoved []string `json:"backendsRemoved,omitempty"`
	// Endpoints lists, per backend that stayed, the endpoints that came
	// and went.
	Endpoints []EndpointChange `json:"endpoints,omitempty"`
	// BackendsChanged are backends that stayed with the same endpoints but
	// other balancing (load-balance, upstream-hash-by, affinity).
	BackendsChanged []string `json:"backendsChanged,omitempty"`
	// RoutesUpserted are the hosts whose route table is pushed to the
	// router (new or changed in any way); the tables of ServersRemoved are
	// removed. Both are dynamic changes, never a reload.
	RoutesUpserted []string `json:"routesUpserted,omitempty"`
	// ServersAdded and ServersRemoved are the hosts that are new or gone.
	ServersAdded   []string `json:"serversAdded,omitempty"`
	ServersRemoved []string `json:"serversRemoved,omitempty"`
	// Locations are "<host> <path> -> <backend>" ("= /p" for Exact paths,
	// "~* /p" for regex paths, "404" for a location without backend).
	LocationsAdded   []string `json:"locationsAdded,omitempty"`
	LocationsRemoved []string `json:"locationsRemoved,omitempty"`
	// CertificatesAdded are new, CertificatesChanged have other content or
	// hosts, CertificatesRemoved are gone. Names are namespace/secret.
	CertificatesAdded   []string `json:"certificatesAdded,omitempty"`
	CertificatesChanged []string `json:"certificatesChanged,omitempty"`
	CertificatesRemoved []string `json:"certificatesRemoved,omitempty"`
	DefaultCertificate  string   `json:"defaultCertificate,omitempty"`
	// Hosts are the hosts the change touches: servers added, removed or
	// changed, hosts routing to a changed backend, hosts of a changed
	// certificate.
	Hosts []string `json:"hosts,omitempty"`
}

// EndpointChange is what happened to the endpoints of one backend.
type EndpointChange struct {
	Backend string   `json:"backend"`
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
	// Left is the number of endpoints after the change; 0 means requests
	// routed to the backend fail (503).
	Left int `json:"left"`
}

// summarize describes the change ch from old (config.Diff from old to the
// new Configuration). oldHosts and newHosts index the hosts routing to each
// backend (backendHosts) in old and in the new Configuration.
func summarize(old *config.Configuration, ch config.Change, oldHosts, newHosts map[string][]string) Diff {
	d := Diff{BackendsRemoved: ch.BackendsRemoved, CertificatesRemoved: ch.CertificatesRemoved,
		DefaultCertificate: ch.DefaultCertificate}
	hosts := map[string]bool{}
	for i := range ch.BackendsUpserted {
		nb := &ch.BackendsUpserted[i]
		ob, ok := backendNamed(old, nb.Name)
		switch {
		case !ok:
			d.BackendsAdded = append(d.BackendsAdded, nb.Name)
		case slices.Equal(ob.Endpoints, nb.Endpoints):
			d.BackendsChanged = append(d.BackendsChanged, nb.Name)
		default:
			d.Endpoints = append(d.Endpoints, endpointChange(ob, nb))
		}
		addAll(hosts, newHosts[nb.Name])
	}
	for _, name := range ch.BackendsRemoved {
		addAll(hosts, oldHosts[name])
	}
	for _, c := range ch.CertificatesUpserted {
		if slices.ContainsFunc(old.Certificates, func(o config.Certificate) bool { return o.Name == c.Name }) {
			d.CertificatesChanged = append(d.CertificatesChanged, c.Name)
		} else {
			d.CertificatesAdded = append(d.CertificatesAdded, c.Name)
		}
		addAll(hosts, c.Hosts)
	}
	for _, c := range old.Certificates {
		if slices.Contains(ch.CertificatesRemoved, c.Name) {
			addAll(hosts, c.Hosts)
		}
	}
	diffServers(old, ch, &d, hosts)
	for h := range hosts {
		d.Hosts = append(d.Hosts, h)
	}
	sortDiff(&d)
	return d
}

// backendNamed finds a Backend of c (sorted by name) in O(log n): a step
// costs in proportion to what it changed.
func backendNamed(c *config.Configuration, name string) (*config.Backend, bool) {
	b, _, ok := c.Backends.Find(name)
	return b, ok
}

func addAll(set map[string]bool, keys []string) {
	for _, k := range keys {
		set[k] = true
	}
}

// diffServers records the route tables ch pushes and removes, the servers
// and locations added and removed, and the hosts they touch.
func diffServers(old *config.Configuration, ch config.Change, d *Diff, hosts map[string]bool) {
	if len(ch.ServersUpserted) == 0 && len(ch.ServersRemoved) == 0 {
		return
	}
	oldServers := serversByHost(old)
	for i := range ch.ServersUpserted {
		ns := &ch.ServersUpserted[i]
		d.RoutesUpserted = append(d.RoutesUpserted, ns.Hostname)
		hosts[ns.Hostname] = true
		os, ok := oldServers[ns.Hostname]
		if !ok {
			d.ServersAdded = append(d.ServersAdded, ns.Hostname)
			d.LocationsAdded = append(d.LocationsAdded, locations(ns, nil)...)
			continue
		}
		d.LocationsAdded = append(d.LocationsAdded, locations(ns, os)...)
		d.LocationsRemoved = append(d.LocationsRemoved, locations(os, ns)...)
	}
	for _, h := range ch.ServersRemoved {
		d.ServersRemoved = append(d.ServersRemoved, h)
		if os, ok := oldServers[h]; ok {
			d.LocationsRemoved = append(d.LocationsRemoved, locations(os, nil)...)
		}
		hosts[h] = true
	}
}

func serversByHost(c *config.Configuration) map[string]*config.Server {
	out := make(map[string]*config.Server, len(c.Servers))
	for i := range c.Servers {
		out[c.Servers[i].Hostname] = &c.Servers[i]
	}
	return out
}

// locations lists the locations of s (as "<host> <path> -> <backend>") that
// other does not have with the same path and backend; other nil lists all.
func locations(s, other *config.Server) []string {
	have := map[string]bool{}
	if other != nil {
		for i := range other.Locations {
			have[locationString(other.Hostname, &other.Locations[i])] = true
		}
	}
	var out []string
	for i := range s.Locations {
		if l := locationString(s.Hostname, &s.Locations[i]); !have[l] {
			out = append(out, l)
		}
	}
	return out
}

func locationString(host string, l *config.Location) string {
	path := pathString(l)
	backend := l.Backend
	if backend == "" {
		backend = "404"
	}
	return host + " " + path + " -> " + backend
}

func sortDiff(d *Diff) {
	for _, l := range [][]string{d.BackendsAdded, d.BackendsRemoved, d.BackendsChanged, d.RoutesUpserted, d.ServersAdded,
		d.ServersRemoved, d.LocationsAdded, d.LocationsRemoved, d.CertificatesAdded, d.CertificatesChanged, d.CertificatesRemoved, d.Hosts} {
		slices.Sort(l)
	}
	slices.SortFunc(d.Endpoints, func(a, b EndpointChange) int { return strings.Compare(a.Backend, b.Backend) })
}

// touches reports whether the change concerns host (case-insensitive).
func (d *Diff) touches(host string) bool {
	return slices.ContainsFunc(d.Hosts, func(h string) bool { return strings.EqualFold(h, host) })
}
