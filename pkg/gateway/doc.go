// Package gateway is the translator of the Gateway API
// (gateway.networking.k8s.io/v1, standard channel): its Source (see
// NewSource) keeps the GatewayClasses, Gateways and ReferenceGrants and
// turns each HTTPRoute into one entry of route intents (pkg/intent),
// which the source-neutral build (pkg/model) places beside the
// Ingresses'. It also holds the rules the watcher applies to publish only
// the Secrets our Gateways may use (rules.go). It imports neither the
// build nor another translator.
//
// What is served today (docs/gateway-api.md keeps the list for users):
//
//   - Gateways of the GatewayClasses whose spec.controllerName is the
//     controller name (--gateway-controller-name); HTTP listeners on port
//     80 and HTTPS listeners on 443 that terminate TLS with their first
//     certificateRef (a Secret of another namespace only with a
//     ReferenceGrant); parentRefs by name, sectionName and port;
//     allowedRoutes namespaces Same and All, and kinds.
//   - Hostnames: the intersection of the listener's and the route's,
//     exact names; a route and a listener without any go to the default
//     server (requests for hosts no other route or Ingress names).
//   - Rules with one or two backendRefs (Service ports of the route's
//     namespace, or of another with a ReferenceGrant; two split the
//     requests by weight, intent.Split),
//     matching on the path: Exact, PathPrefix and RegularExpression. Between routes, the build's rules hold: the
//     oldest wins a host and path.
//
// Everything else is left out with a Problem that names it, never served
// otherwise than the specification says: TLS passthrough and other ports,
// wildcard hostnames, header, query and method matches, filters,
// timeouts, three or more weighted backends, references to other
// namespaces without a grant, allowedRoutes selectors.
//
// The status of our GatewayClasses, Gateways and of the HTTPRoutes
// attached to them is computed here too (status.go, World), from the
// same rules of attachment as the translation (attach.go); the watcher
// writes it. features.go lists the features GatewayClass status
// advertises.
package gateway
