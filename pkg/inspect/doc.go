// Package inspect builds the views of the inspection commands of the
// syncer (`syncer fleet`, `syncer certs`, `syncer general`) from what the
// stream and a running nginx hold, and prints them as tables or JSON. It
// does no I/O of its own: the commands read, this package explains.
package inspect
