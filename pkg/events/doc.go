// Package events is the bottom layer of ingress-sync: the event envelope that
// the watcher publishes for every change of an ingress input, its msgpack
// codec, the NATS subject and header conventions, JetStream stream
// provisioning, an asynchronous publisher and an ordered consumer.
//
// A message on the stream is one Event. Its subject is
// <prefix>.<kind>.<namespace>.<name> (see Subject), its headers repeat the
// identifying fields in readable form so that `nats stream view` is useful
// without decoding, and its payload is the msgpack-encoded envelope holding
// the trimmed Kubernetes object.
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
// # Streams
//
// EnsureStream provisions two streams from one StreamConfig:
//
//   - the event stream (e.g. INGRESS) on <prefix>.>: file storage, limits
//     retention, S2 compression, History messages per subject, no age limit
//     by default, a two-minute Nats-Msg-Id duplicate window;
//   - the status stream (<name>_STATUS) on <prefix>-status.>, where syncers
//     report (see StatusSubject). Reports are plain core NATS publishes, so
//     live readers use ordinary subscriptions; the stream keeps the last
//     StatusHistory reports of each reporter for StatusMaxAge, so that a
//     reader that starts later (a new watcher leader) still finds them.
//
// # Publishing
//
// Publisher sends events asynchronously with a bounded number pending,
// retries with backoff under the same Nats-Msg-Id (so a retried send that
// had reached the stream is dropped as a duplicate), keeps the events of one
// object in order, and refuses events over the server's max_payload with
// ErrTooLarge. Flush waits for the outcome.
//
// # Consuming
//
// Consumer bootstraps a syncer: an ordered consumer delivers the last
// message of every subject, Handler.CaughtUp is called once the stream as
// it was at the start has been read, then live events follow. After an
// outage it resumes after the last sequence it handled, without losing or
// repeating events. LastPerSubject reads only the headers of the last
// message of every subject, for the watcher's reconcile on start.
//
// StartEmbedded runs a NATS server with JetStream in-process for a
// one-machine setup; internal/natstest wraps it for tests.
package events
