package events

// The headers of every event message. They repeat the identity of the event
// unencoded, so that `nats stream view` and `nats sub` are readable without
// decoding the payload.
const (
	HeaderOp              = "Ingress-Sync-Op"
	HeaderKind            = "K8s-Kind"
	HeaderNamespace       = "K8s-Namespace"
	HeaderName            = "K8s-Name"
	HeaderResourceVersion = "K8s-Resource-Version"
	HeaderUID             = "K8s-Uid"
	HeaderContentType     = "Content-Type"
	// HeaderMsgID is the header JetStream deduplicates publishes by.
	HeaderMsgID = "Nats-Msg-Id"
)

// Headers are the message headers of ev: op, kind, namespace, name,
// resourceVersion and uid (each left out when empty, so a cluster-scoped
// object has no K8s-Namespace), Content-Type: application/msgpack, and
// Nats-Msg-Id: MsgID(ev), which JetStream uses to drop a duplicate publish
// within the stream's duplicate window. The map has the type of a NATS
// message header (nats.Header), so it can be assigned to one as it is.
func Headers(ev Event) map[string][]string {
	h := make(map[string][]string, 8)
	set := func(k, v string) {
		if v != "" {
			h[k] = []string{v}
		}
	}
	set(HeaderOp, string(ev.Op))
	set(HeaderKind, string(ev.Kind))
	set(HeaderNamespace, ev.Namespace)
	set(HeaderName, ev.Name)
	set(HeaderResourceVersion, ev.ResourceVersion)
	set(HeaderUID, ev.UID)
	set(HeaderContentType, ContentType)
	set(HeaderMsgID, MsgID(ev))
	return h
}

// MsgID is the deduplication id of ev: "<uid>/<rv>/<op>". The same change
// published twice (a retry, or a standby watcher that took over) has the
// same id. An event without a UID (a delete known only by its key) uses
// "<kind>/<namespace>/<name>" in place of the uid.
func MsgID(ev Event) string {
	id := ev.UID
	if id == "" {
		id = KindToken(ev.Kind) + "/" + ev.Namespace + "/" + ev.Name
	}
	return id + "/" + ev.ResourceVersion + "/" + string(ev.Op)
}
