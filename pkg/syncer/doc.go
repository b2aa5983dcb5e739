// Package syncer is the syncer loop that runs beside each nginx: it feeds the
// events of the stream into a model.Store, coalesces bursts, rebuilds the
// Configuration with model.Build, skips it when it equals the last one
// applied, and otherwise hands it to an Applier. The Applier (pkg/nginx's,
// wrapped by Nginx) owns nginx's running state: it diffs, pushes routes,
// backends and certificates to the Lua endpoints, and reloads only when the
// global settings change nginx.conf. The syncer counts and logs the Change
// it returns.
//
// The Syncer never stops on bad input: a message that cannot be decoded is
// counted and skipped, a failed apply keeps the running configuration and is
// retried with backoff, and every outcome is reported as status on NATS.
//
// A stream deleted and created again (StreamRecreated, the consumer's hook)
// does not empty the configuration: the new stream's bootstrap goes into a
// store of its own while the running configuration keeps serving, and at
// CaughtUp it replaces the store; the first build from it is an ordinary
// diff.
package syncer
