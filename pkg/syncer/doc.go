// Package syncer is the syncer loop that runs beside each nginx: it feeds the
// events of the stream into a model.Store, coalesces bursts, rebuilds the
// Configuration with model.Build, and decides, in one place (decide), what
// changed from the last one applied: nothing (an equal checksum: the build
// is skipped), or config.Diff(running, next). pkg/replay's timeline uses
// the same config.Diff.
//
// Only then does it call the Applier, with next and that Change:
// Apply(ctx, next, ch) brings the data plane from the running Configuration
// to next by acting on ch, and reports whether nginx reloaded; no layer
// below the loop diffs Configurations again. Nginx is the real Applier: its
// first Apply writes nginx.conf and starts nginx, later ones go to
// pkg/nginx's Applier, which pushes ch's routes, backends and certificates
// to the Lua endpoints and reloads only when the nginx.conf rendered for
// next differs from the installed one. The loop counts and logs each apply,
// the first as a reload, and tells Options.Observe (ControllerMetrics,
// ingress-nginx's controller metrics) of it.
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
