// Package events is the bottom layer of ingress-sync: the wire format of
// the event that the watcher publishes for every change of an ingress
// input. It holds the envelope, its msgpack codec, the subject and header
// conventions, the validation and trimming of the objects, and the format
// of the syncers' status reports.
//
// A message on the stream is one Event. Its subject is
// <prefix>.<kind>.<namespace>.<name> (see Subject), its headers repeat the
// identifying fields in readable form so that `nats stream view` is useful
// without decoding, and its payload is the msgpack-encoded envelope holding
// the trimmed Kubernetes object. The kinds (Kinds) are the Ingress inputs,
// the Namespaces (their labels, for the Gateway listeners' namespace
// selectors) and the Gateway API ones (GatewayKinds: GatewayClass, Gateway,
// HTTPRoute, GRPCRoute, TLSRoute, TCPRoute, UDPRoute, ReferenceGrant,
// BackendTLSPolicy of gateway.networking.k8s.io/v1, as the typed objects of
// sigs.k8s.io/gateway-api).
//
// # Wire format
//
// Encode writes a msgpack map whose keys are the lowerCamel names of the
// envelope fields (schemaVersion first, then op, kind, namespace, name, uid,
// resourceVersion, observedAt, watcherId, object; empty ones left out). The
// object is encoded with its json field names, empty fields omitted and map
// keys sorted, so equal events encode to equal bytes and every field the
// configuration builder reads round-trips exactly. Decode skips unknown keys
// and fields, refuses a newer schemaVersion (ErrSchemaVersion) and reports
// anything else it cannot read as ErrMalformed; it never panics, and it
// checks every declared length against the input before decoding, so that a
// hostile payload cannot make it allocate without bound. Trim removes what
// the builder never reads before an object is published.
//
// # Messages
//
// DecodeMessage decodes the payload of a stream message and checks that its
// subject names the object its envelope carries; it is the one decode path
// of the live syncer and of replay. Headers and MsgID give the headers and
// the deduplication id of an event's message; SyncerStatus, StatusSubject
// and EncodeStatus the format of the syncers' status reports.
//
// This package is the format only: it imports no NATS package. Moving
// events through NATS (connection, stream provisioning, the publisher, the
// consumer) is pkg/stream's.
package events
