package replay

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"maps"
	"net"
	"slices"
	"strconv"
)

// endpointChange lists the endpoints added and removed from old to new.
func endpointChange(old, new *config.Backend) EndpointChange {
	c := EndpointChange{Backend: new.Name, Left: len(new.Endpoints)}
	i, j := 0, 0
	for i < len(old.Endpoints) || j < len(new.Endpoints) {
		switch cmpEndpoint(old.Endpoints, new.Endpoints, i, j) {
		case -1:
			c.Removed = append(c.Removed, endpointString(old.Endpoints[i]))
			i++
		case 1:
			c.Added = append(c.Added, endpointString(new.Endpoints[j]))
			j++
		default:
			i++
			j++
		}
	}
	return c
}

// cmpEndpoint compares a[i] with b[j]; an exhausted side sorts last.
func cmpEndpoint(a, b []config.Endpoint, i, j int) int {
	switch {
	case i == len(a):
		return 1
	case j == len(b):
		return -1
	}
	x, y := a[i], b[j]
	switch {
	case x.Address < y.Address || x.Address == y.Address && x.Port < y.Port:
		return -1
	case x == y:
		return 0
	}
	return 1
}

func endpointString(e config.Endpoint) string {
	return net.JoinHostPort(e.Address, strconv.Itoa(int(e.Port)))
}

// backendHosts maps each backend name to the hosts that route to it
// (locations of servers, "_" for the default server), sorted.
func backendHosts(c *config.Configuration) map[string][]string {
	out := make(map[string][]string, c.Backends.Len())
	for _, s := range c.Servers {
		for _, l := range s.Locations {
			if l.Backend == "" {
				continue
			}
			if hs := out[l.Backend]; len(hs) == 0 || hs[len(hs)-1] != s.Hostname {
				out[l.Backend] = append(hs, s.Hostname)
			}
		}
	}
	for k, hs := range out {
		slices.Sort(hs)
		out[k] = slices.Compact(hs)
	}
	return out
}

// rehost is backendHosts of the Configuration that ch made of old, whose
// backendHosts is hosts: hosts is left as it is (a new map shares the lists
// of the backends whose hosts did not change).
func rehost(hosts map[string][]string, old *config.Configuration, ch config.Change) map[string][]string {
	changed := make(map[string]bool, len(ch.ServersUpserted)+len(ch.ServersRemoved))
	for _, s := range ch.ServersUpserted {
		changed[s.Hostname] = true
	}
	for _, h := range ch.ServersRemoved {
		changed[h] = true
	}
	if len(changed) == 0 {
		return hosts
	}
	out := maps.Clone(hosts)
	for _, s := range old.Servers {
		if !changed[s.Hostname] {
			continue
		}
		for _, l := range s.Locations {
			if hs, ok := out[l.Backend]; ok {
				if hs = slices.DeleteFunc(slices.Clone(hs), func(h string) bool { return h == s.Hostname }); len(hs) == 0 {
					delete(out, l.Backend)
				} else {
					out[l.Backend] = hs
				}
			}
		}
	}
	return addHosts(out, ch.ServersUpserted)
}

// addHosts adds the hosts of servers to the sorted lists of the backends
// they route to, copying each list it changes.
func addHosts(out map[string][]string, servers []config.Server) map[string][]string {
	for _, s := range servers {
		for _, l := range s.Locations {
			if l.Backend == "" {
				continue
			}
			hs := out[l.Backend]
			if i, found := slices.BinarySearch(hs, s.Hostname); !found {
				out[l.Backend] = slices.Insert(slices.Clone(hs), i, s.Hostname)
			}
		}
	}
	return out
}
