// Package gateway is the translator of the Gateway API
// (gateway.networking.k8s.io/v1, standard channel): its Source (see
// NewSource) keeps the GatewayClasses, Gateways and ReferenceGrants and
// turns each HTTPRoute, GRPCRoute, TLSRoute, TCPRoute and UDPRoute into
// one entry of route intents (pkg/intent), which the source-neutral build
// (pkg/model) places beside the
// Ingresses'. It also holds the rules the watcher applies to publish only
// the Secrets our Gateways may use (rules.go). It imports neither the
// build nor another translator.
//
// What is served today (docs/gateway-api.md keeps the list for users):
//   - Gateways of the GatewayClasses whose spec.controllerName is the
//     controller name (--gateway-controller-name); HTTP listeners on port
//     80 and HTTPS listeners on 443 that terminate TLS with their first
//     certificateRef (a Secret of another namespace only with a
//     ReferenceGrant); parentRefs by name, sectionName and port;
//     allowedRoutes namespaces Same and All, and kinds.
//   - Hostnames: the intersection of the listener's and the route's,
//     exact names and wildcards (on a Gateway's port "*.example.com"
//     matches any number of labels, the router's longest wildcard first);
//     a route and a listener without any go to the default server of the
//     listener's port.
//   - Listener isolation (isolation.go): of the listeners of a Gateway
//     that share a port, a request belongs to the most specific one its
//     host matches; a route's hostname that a more specific listener
//     takes is left out, and the Hosts of such a port carry the
//     listeners' hostnames (intent.Host.Listeners), with which the router
//     refuses the others and answers 421 to a misdirected TLS request.
//   - Rules with any number of backendRefs (Service ports of the route's
//     namespace, or of another with a ReferenceGrant), sharing the
//     requests by weight (backends.go, intent.WeightedRef; weight 0 takes
//     none), each with its own RequestHeaderModifier; a reference that
//     cannot be served (another kind, no grant, a missing Service, another
//     backendRef filter) answers 500 for its share, and a rule without
//     any backend every request,
//     matching on the path: Exact, PathPrefix and RegularExpression, and
//     on headers, query parameters and the method (matches.go: each
//     match of a rule is a path with its conditions, config.Match; the
//     build orders the candidates of a path as the specification's
//     precedence). Between routes, the build's rules hold: the oldest
//     wins a host, path and set of conditions.
//   - Filters (filters.go, config.Filters): RequestHeaderModifier,
//     ResponseHeaderModifier, RequestRedirect (a rule that redirects needs
//     no backend), URLRewrite (hostname, path) and CORS (cors.go).
//   - Timeouts (timeouts.go, config.Timeouts): request and backendRequest,
//     the shorter bounding each request to a backend.
//   - BackendTLSPolicies (backendtls.go, intent.BackendTLS): the Service
//     backends they target are reached over verified TLS, and their
//     status (backendtls_status.go).
//   - GRPCRoutes (grpc.go): translated, attached and given their status
//     as their HTTPView, the HTTPRoute they are on the wire (a method
//     match is the path /service/method), with backends spoken to in
//     gRPC; an HTTP listener's port serves h2c while only GRPCRoutes are
//     attached to it (grpc_listeners.go).
//   - TLSRoutes (on TLS listeners of mode Passthrough, by SNI name),
//     TCPRoutes and UDPRoutes (l4route.go): each becomes the entry's
//     intent.Streams, one per listener (and SNI name) that takes it, with
//     its weighted backendRefs; the build places them on the stream
//     block's ports (config.Stream). TLS mode Terminate is not served
//     (the listener is not Accepted): it would put certificates into
//     nginx.conf.
//
// Everything else is left out with a Problem that names it, never served
// otherwise than the specification says: the other
// filters (extension refs),
// sessionPersistence, backendRef filters other than RequestHeaderModifier
// (that reference answers 500).
//
// The status of our GatewayClasses, Gateways and of the routes attached
// to them is computed here too (status.go, l4status.go, World), from the
// same rules of attachment as the translation (attach.go); the watcher
// writes it. features.go lists the features GatewayClass status
// advertises.
package gateway
