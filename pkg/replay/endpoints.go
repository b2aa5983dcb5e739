package replay

import (
	"net"
	"slices"
	"strconv"

	"github.com/ingress-sync/ingress-sync/pkg/model"
)

// endpointChange lists the endpoints added and removed from old to new.
func endpointChange(old, new *model.Backend) EndpointChange {
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
func cmpEndpoint(a, b []model.Endpoint, i, j int) int {
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

func endpointString(e model.Endpoint) string {
	return net.JoinHostPort(e.Address, strconv.Itoa(int(e.Port)))
}

// backendHosts maps each backend name to the hosts that route to it
// (locations of servers, "_" for the default server), sorted.
func backendHosts(c *model.Configuration) map[string][]string {
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
