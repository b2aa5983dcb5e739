// Package stream is the NATS transport of ingress-sync: it moves the events
// of pkg/events (the wire format) through JetStream. It holds what needs a
// NATS connection and nothing else: Connect (the one way to a Conn, the
// NATS connection and its JetStream context), stream provisioning (Ensure),
// the watcher's Publisher, the syncer's Consumer, the one reader of the
// event stream (ReadRange for replay, LastPerSubject for the watcher's
// reconcile, LastStatuses for `syncer fleet`). It imports nats.go only; an
// in-process server is in pkg/stream/embedded, so that only what embeds one
// links nats-server.
//
// # Streams
//
// Ensure provisions two streams from one Config:
//
//   - the event stream (e.g. INGRESS) on <prefix>.>: file storage, limits
//     retention, S2 compression, History messages per subject, no age limit
//     by default, a two-minute Nats-Msg-Id duplicate window;
//   - the status stream (<name>_STATUS) on <prefix>-status.>, where syncers
//     report (see events.StatusSubject). Reports are plain core NATS
//     publishes, so live readers use ordinary subscriptions; the stream
//     keeps the last StatusHistory reports of each reporter for
//     StatusMaxAge, so that a reader that starts later (a new watcher
//     leader) still finds them.
//
// # Publishing
//
// Publisher sends events asynchronously with a bounded number pending,
// retries with backoff under the same Nats-Msg-Id (so a retried send that
// had reached the stream is dropped as a duplicate), keeps the events of one
// object in order, and refuses events over the server's max_payload with
// ErrTooLarge. Each outcome is reported once: a refusal by Publish's error,
// the final outcome of an accepted event to the observer (WithObserver).
// Flush waits for the outcomes.
//
// # Reading
//
// Every read goes through one ordered (ephemeral) consumer type and one
// decode path, Message.Decode (events.DecodeMessage, which also checks the
// subject against the envelope), so that replay accepts exactly what a live
// syncer does.
//
// Consumer bootstraps a syncer: an ordered consumer delivers the last
// message of every subject, Handler.CaughtUp is called once the stream as
// it was at the start has been read, then live events follow. After an
// outage it resumes after the last sequence it handled, without losing or
// repeating events. LastPerSubject reads only the headers of the last
// message of every subject, for the watcher's reconcile on start. ReadRange
// reads a range of sequences, for replay.
//
// # A recreated stream
//
// A stream deleted and created again restarts its sequences. The Consumer
// notices (the stream's creation time changed, or its last sequence is
// below the last one handled) when its ordered consumer restarts and every
// WithStreamCheck interval. It then delivers nothing until the watcher has
// written its reconcile marker on the new stream (MarkReconciled: stream
// metadata naming the sequence up to which the stream holds the watcher's
// whole state, and the stream's creation time). Then it calls the
// WithStreamRecreated function and bootstraps from the new stream, so that
// a syncer never takes a half-republished stream for the whole state.
// ReadState reads the creation time, last sequence and marker.
package stream
