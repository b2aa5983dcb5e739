// Package replay reads the ingress event history from the JetStream stream
// and explains it: the Configuration as it was at any point (At), and which
// events changed it, dynamically or by a reload, between two points
// (Timeline). Both rebuild with the same model.Build as the live syncer, so a
// checksum found here is the checksum a syncer built at that point.
//
// Reading is read-only: an ordered (ephemeral) consumer, never a durable
// one, and the stream is never modified. Every network call is bounded by
// Options.Timeout.
//
// The package also holds the output of the `syncer replay`, `syncer decode`
// and `syncer backends` subcommands: readable text and JSON for scripts.
package replay
