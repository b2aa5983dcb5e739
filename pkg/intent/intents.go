package intent

import "github.com/ingress-sync/ingress-sync/pkg/config"

// Origin names the object that routes, certificate claims and Problems
// come from, whatever its kind.
type Origin struct {
	Kind       string
	Namespace  string
	Name       string
	Generation int64
}

// BackendRef names a port of a Service, by name or by number, in
// Namespace: "" for the origin's; a translator that names another has
// checked that the reference is allowed (a ReferenceGrant). Unsupported
// marks a reference to something that is not a Service (an Ingress
// resource backend): it cannot be served.
type BackendRef struct {
	Service     string
	Namespace   string
	PortName    string
	PortNumber  int32
	Unsupported bool
	// TLS, when set, are the BackendTLSPolicies that target the Service
	// (Gateway API): the backend is then reached over verified TLS.
	TLS *BackendTLS
}

// BackendTLS are the BackendTLSPolicies that apply to one Service, each
// the one that takes precedence for its target: by the name of the
// Service port its targetRef's sectionName names, "" for the policy of the
// whole Service. The build applies the policy of the backend's port name,
// or else the whole Service's.
type BackendTLS struct {
	Policies map[string]*BackendTLSPolicy
}

// For returns the policy that applies to the Service port named port; nil
// for none.
func (t *BackendTLS) For(port string) *BackendTLSPolicy {
	if t == nil {
		return nil
	}
	if p := t.Policies[port]; p != nil && port != "" {
		return p
	}
	return t.Policies[""]
}

// BackendTLSPolicy is what one BackendTLSPolicy asks of the connections
// to its targets: verify the backend's certificate against the ca.crt of
// each ConfigMap CAConfigMaps names (in the policy's namespace) for
// Hostname, which is also sent as SNI; with SystemCA, against the system's
// CA certificates instead (wellKnownCACertificates System). Invalid, when
// set, says why the policy cannot be applied: connections to its targets
// fail (503), never without the verification asked for.
type BackendTLSPolicy struct {
	Origin       Origin
	CAConfigMaps []string
	SystemCA     bool
	Hostname     string
	Invalid      string
}

// Host is one host of an object. Its Server exists even when it has
// no path; a host that is not valid (err) is left out with a Problem.
type Host struct {
	// host is the Server's name: config.DefaultServerName for none.
	Host string
	// Port is the nginx port of the Gateway listener the host is served
	// on (a config.Listener's), 0 for nginx's own ports (Ingresses).
	Port int
	// raw is the host as the object wrote it ("" for none).
	Raw   string
	Err   error
	Paths []Path
	// Listeners are the hostnames of the Gateway listeners that share
	// Port (config.Server.Listeners), nil when one listener has it.
	Listeners []string
}

// Path is one path of a host, validated and normalized as its
// object's settings say (regex or not); err says why it cannot be served.
type Path struct {
	Path     string
	PathType config.PathType
	Err      error
	// raw is the path as written; typeName is its
	// path type as written, for Problems; impl marks a path whose type
	// leaves its meaning to the implementation (see regexLocations).
	Raw      string
	TypeName string
	Impl     bool
	Backend  BackendRef
	// Weighted, when set, shares the path's requests at random between
	// backends by weight (Gateway API backendRefs); Backend is then
	// unused.
	Weighted []WeightedRef
	// Match, when set, holds the conditions besides the path that a
	// request must meet to take it (Gateway API's header, query and
	// method matches), validated and in canonical order.
	Match *config.Match
	// Filters, when set, are what the path does besides routing (Gateway
	// API filters), validated.
	Filters *config.Filters
	// Timeouts, when set, are the path's Gateway API timeouts.
	Timeouts *config.Timeouts
	// Mirrors get a copy of the path's requests (Gateway API
	// RequestMirror filters), in the order given.
	Mirrors []MirrorRef
}

// MirrorRef is one mirror of a path: Backend gets the copies, Spec says
// how many and what they carry (its Backend is set by the build once the
// reference resolves). A reference that cannot be served is left out of
// the translator's entry with a Problem; one that does not resolve in the
// build is left out likewise, and never changes how the path is served.
type MirrorRef struct {
	Backend BackendRef
	Spec    config.Mirror
}

// WeightedRef is one backend of a path's Weighted: Weight (at least 1)
// of every total of the weights of requests go to Backend, at random. An
// Invalid one is a reference that cannot be served: its share of the
// requests answers 500.
type WeightedRef struct {
	Backend BackendRef
	Weight  int
	Invalid bool
	// RequestHeaders change the requests sent to this backend only (a
	// backendRef's RequestHeaderModifier), after the path's filters; nil
	// for none.
	RequestHeaders *config.HeaderFilter
}

// Stream asks that connections to the nginx port Port of a Gateway
// listener of protocol Protocol (config.L4TCP, L4UDP or L4TLS) go to
// Backends by weight; on a TLS port, those whose SNI name Hostname
// matches ("" any). Gateway is the listener's Gateway, "namespace/name".
// A backend marked Invalid closes its share of the connections.
type Stream struct {
	Protocol config.L4Protocol
	Port     int
	Hostname string
	Gateway  string
	Backends []WeightedRef
}

// TLS asks for the certificate of Secret Secret ("" for the default
// certificate) on Hosts; no hosts means every valid host of the object.
// The Secret is in Namespace, "" for the origin's: a translator that names
// another has checked that the reference is allowed (a ReferenceGrant).
type TLS struct {
	// Port is the nginx port of the Gateway HTTPS listener the hosts are
	// served on, 0 for nginx's own HTTPS port.
	Port      int
	Hosts     []string
	Secret    string
	Namespace string
}
