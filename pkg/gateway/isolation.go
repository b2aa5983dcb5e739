package gateway

import (
	"math"
	"slices"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// Listener isolation: of the HTTP and HTTPS listeners that share a port
// of a Gateway, a request belongs to the most specific one its host
// matches (an exact hostname, then the longest wildcard, then the
// listener without a hostname), and only routes attached to that
// listener may serve it. The translator leaves out the hostnames of a
// route that a more specific listener of the port takes (they could only
// ever serve that listener's requests), and gives every Host of a port
// with several listeners their hostnames (config.Server.Listeners): the
// router then refuses a request whose listener is not the one of the
// Server it found (a wildcard of a less specific listener standing in
// for a listener without a route of that name), and answers 421 to a
// request over TLS whose SNI name selects another listener than its Host
// header.

// portListeners returns the hostnames of the HTTP and HTTPS listeners of
// gw on port p ("_" for one without a hostname; invalid ones left out),
// sorted and once each; nil when there is at most one: a port of one
// listener needs no isolation.
func portListeners(gw *gatewayv1.Gateway, p gatewayv1.PortNumber) []string {
	var out []string
	for i := range gw.Spec.Listeners {
		l := &gw.Spec.Listeners[i]
		if l.Port != p || (l.Protocol != gatewayv1.HTTPProtocolType && l.Protocol != gatewayv1.HTTPSProtocolType) {
			continue
		}
		h := listenerTLSHost(l)
		if h != config.DefaultServerName && intent.ValidHost(h) != nil {
			continue
		}
		out = append(out, h)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) < 2 {
		return nil
	}
	return out
}

// listenerOf returns the listener hostname of listeners ("_" for one
// without a hostname) that takes the requests for host (a name, a
// wildcard standing for the names it matches, or "_" for any other
// name): the most specific one that matches it; "" for none.
func listenerOf(listeners []string, host string) string {
	best, rank := "", -1
	for _, l := range listeners {
		r := -1
		switch {
		case l == host:
			r = math.MaxInt
		case l == config.DefaultServerName:
			r = 0
		case host != config.DefaultServerName && matches(l, host):
			r = len(l)
		}
		if r > rank {
			best, rank = l, r
		}
	}
	return best
}

// isolated reports whether host, which the route gets on listener l of a
// port whose listeners are listeners (portListeners), is served there: l
// is the listener that takes its requests. Every host is when the port
// has one listener.
func isolated(listeners []string, l *gatewayv1.Listener, host string) bool {
	return listeners == nil || listenerOf(listeners, host) == listenerTLSHost(l)
}
