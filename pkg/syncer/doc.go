// Package syncer is the syncer loop that runs beside each nginx: it feeds the
// events of the stream into a model.Store, coalesces bursts, rebuilds the
// Configuration with model.Build, skips it when it equals the running one,
// and otherwise applies the difference through an Applier: dynamically
// (backends and certificates through the Lua endpoints) or by a reload.
//
// The Syncer never stops on bad input: a message that cannot be decoded is
// counted and skipped, a failed apply keeps the running configuration and is
// retried with backoff, and every outcome is reported as status on NATS.
package syncer
