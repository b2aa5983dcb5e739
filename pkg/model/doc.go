// Package model turns the ingress inputs into the Configuration that nginx
// serves. It holds the Store of typed Kubernetes objects fed by events, the
// pure Build function (same Store in, same Configuration out, no I/O), the
// Configuration types with their canonical checksum, Diff, which says whether
// a change can be applied through the Lua endpoints or needs a reload, and the
// typed annotation parsers with their allow-list validators.
//
// Nothing in this package performs I/O: the live syncer, `syncer replay` and
// the tests all call the same Build.
package model
