package gateway

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Which protocol an HTTP listener's port speaks. gRPC clients speak HTTP/2
// with prior knowledge (h2c) on a port without TLS, and nginx 1.22 serves
// either h2c or HTTP/1.1 on such a port, never both (HTTP/1.1 clients get
// a connection closed, h2c clients an error: it reads no HTTP/2
// preface). So a Gateway's port without TLS serves h2c while at least one
// GRPCRoute and no HTTPRoute is attached to its listeners, HTTP/1.1
// otherwise; its GRPCRoutes are then attached but gRPC clients cannot
// reach them (docs/gateway-api.md says so). The protocol of a port
// changes with the kinds of the routes attached to it, and that reloads
// nginx (as a new port does); HTTPS ports negotiate HTTP/2 by ALPN with
// the http2 setting and need none of this.

// h2cPorts returns the ports of gw's listeners without TLS that serve h2c:
// those with a GRPCRoute attached and no HTTPRoute.
func (src *Source) h2cPorts(gw *gatewayv1.Gateway) map[gatewayv1.PortNumber]bool {
	out := map[gatewayv1.PortNumber]bool{}
	if src.grpcRoutes == 0 {
		return out // without a GRPCRoute, no route of every Gateway is looked at
	}
	grpc, http := src.attachedKinds(gw)
	for p := range grpc {
		if !http[p] {
			out[p] = true
		}
	}
	return out
}

// attachedKinds returns the ports of gw's HTTP listeners that a GRPCRoute,
// and those that an HTTPRoute, is attached to (attach.go's rules: a
// parentRef that selects the listener, which allows the route and whose
// hostname intersects the route's).
func (src *Source) attachedKinds(gw *gatewayv1.Gateway) (grpc, http map[gatewayv1.PortNumber]bool) {
	grpc, http = map[gatewayv1.PortNumber]bool{}, map[gatewayv1.PortNumber]bool{}
	for _, r := range src.routes {
		for i := range r.Spec.ParentRefs {
			p := &r.Spec.ParentRefs[i]
			if ns, name, ok := ParentGateway(p, r.Namespace); !ok || ns != gw.Namespace || name != gw.Name {
				continue
			}
			for j := range gw.Spec.Listeners {
				l := &gw.Spec.Listeners[j]
				if l.Protocol != gatewayv1.HTTPProtocolType || !selects(p, l) ||
					!allowsRoute(gw, l, r, src.namespaces[r.Namespace]) || len(intersect(l.Hostname, r.Spec.Hostnames)) == 0 {
					continue
				}
				if IsGRPC(r) {
					grpc[l.Port] = true
				} else {
					http[l.Port] = true
				}
			}
		}
	}
	return grpc, http
}
