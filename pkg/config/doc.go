// Package config is the contract between the builders of a Configuration
// and everything that consumes one: the Configuration types (Servers and
// their Locations, Backends, Certificates, the Global settings, the L4
// services and passthrough hosts), their canonical checksum, Diff and the
// Change it returns, and Problem, the report of what a source could not
// serve.
//
// Nothing here says where a route came from: an Ingress, an annotation or a
// Gateway API route are the business of the translators in pkg/model, and
// this package imports no package of this module (TestLayering). pkg/nginx,
// pkg/inspect and the syncer's apply path depend on this package alone.
//
// A Configuration is immutable once built and may share parts with the
// Configuration it was patched from. An incremental builder keeps the
// checksum trees of what it built (Sums, Hasher) and says what a patch
// changed (PatchedFrom, SplicedFrom), so that the checksum and Diff of a
// patch cost the change and not the whole Configuration.
//
// The validators here (ParseProxySSLProtocols and the others) are the
// checks of contract values that the data plane repeats before it renders
// them: the builders use the same ones on user input.
package config
