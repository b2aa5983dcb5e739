// Package model is the source-neutral build: it turns the route intents
// of every source (pkg/intent; the Ingress translator is pkg/ingress) and
// the objects they reference into the Configuration that nginx serves
// (pkg/config). It holds the Store fed by events, the pure Build function
// (same Store in, same Configuration out, no I/O) and the Incremental. It
// knows nothing of annotations or of an API's field names: a Store is
// given its sources (NewStore), which translate their objects into
// entries; the Store keeps the Services, EndpointSlices, Secrets and
// ConfigMaps those entries reference, and indexes the entries by them and
// by host.
//
// Nothing in this package performs I/O: the live syncer, `syncer replay`
// and the tests all call the same Build.
//
// Work that depends on one object only (translation, TLS key pair checks,
// the ready endpoints of an EndpointSlice and their checksum) is done once
// when the object is applied to the Store; Build then runs in time linear
// in the number of objects (plus the sorting the output order needs). A
// Configuration shares immutable data with the Store it was built from
// (endpoint lists, certificate bytes): treat it as read-only.
//
// The syncer and replay do not call Build per burst but go through an
// Incremental: Store.Apply returns an Effect and Store.CanChange says
// whether it can change the Configuration; EndpointSlice changes patch the
// endpoints into a copy that shares every other part (and every unchanged
// Backend) with the previous Configuration, in time proportional to the
// change, with a checksum made of per-part trees (pkg/config); a route
// object's change rebuilds the Servers of the hosts it touches and of the
// entries that share them (incremental_hosts.go, whatever its source: what
// a source must provide for it is written in pkg/intent); any other
// relevant event is a full Build. A property test keeps the two equal.
//
// The build's semantics are documented on Build and buildTLS; the change
// classes on config.Diff.
package model
