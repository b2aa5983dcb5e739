// Package replay reads the ingress event history from the JetStream stream
// and explains it: the Configuration as it was at any point (At), and which
// events changed it between two points (Timeline): dynamically (route
// tables of hosts, backends, certificates) or, for the global settings
// only, by a reload. Both rebuild with the builder the live syncer uses,
// given as Options.NewBuilder (the package depends on the Configuration
// contract, pkg/config, alone), so a checksum found here is the checksum
// a syncer built at that point, and
// classify with the same config.Diff the syncer's loop decides with (from
// the Configuration before the event).
//
// Reading is read-only: an ordered (ephemeral) consumer, never a durable
// one, and the stream is never modified. Every network call is bounded by
// Options.Timeout.
//
// The package also holds the output of the `syncer replay`, `syncer decode`,
// `syncer backends` and `syncer routes` subcommands: readable text and JSON
// for scripts. The route view (RouteView) is one format for the route table
// a running nginx holds and for that of a replayed Configuration, so that
// the two can be diffed.
package replay
