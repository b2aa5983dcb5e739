// Package model turns the ingress inputs into the Configuration that nginx
// serves. It holds the Store of typed Kubernetes objects fed by events, the
// pure Build function (same Store in, same Configuration out, no I/O), the
// Configuration types with their canonical checksum, Diff, which says whether
// a change can be applied through the Lua endpoints or needs a reload, and the
// typed annotation parsers with their allow-list validators.
//
// Nothing in this package performs I/O: the live syncer, `syncer replay` and
// the tests all call the same Build.
//
// Work that depends on one object only (annotation parsing and validation,
// TLS key pair checks, the ready endpoints of an EndpointSlice and their
// checksum) is done once when the object is applied to the Store; Build
// then runs in time linear in the number of objects (plus the sorting the
// output order needs). A Configuration shares immutable data with the Store
// it was built from (endpoint lists, certificate bytes): treat it as
// read-only.
//
// The syncer and replay do not call Build per burst but go through an
// Incremental: Store.Apply returns an Effect and Store.CanChange says
// whether it can change the Configuration; EndpointSlice changes patch the
// endpoints into a copy that shares every other part (and every unchanged
// Backend) with the previous Configuration, in time proportional to the
// change, with a checksum made of per-part trees (checksum_tree.go); any
// other relevant event is a full Build. A property test keeps the two equal.
//
// The Ingress semantics (hosts, path types, conflicts, default backend,
// TLS, annotations) are documented on Build, buildTLS and parseAnnotations;
// the class rule on Store.Serves; the change classes on Diff.
package model
