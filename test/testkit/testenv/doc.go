// Package testenv starts a real Kubernetes control plane for tests and for
// `make run`: an etcd and a kube-apiserver built from the Go module proxy by
// `make controlplane` (see hack/controlplane/build.sh).
//
// The processes listen on 127.0.0.1 on free ports, keep their data and
// certificates in a temporary folder and authenticate an admin through a
// static token in the group system:masters. No controllers run: nothing
// allocates EndpointSlices, nothing garbage-collects and deleted namespaces
// stay Terminating, so tests use a fresh namespace each (NewNamespace).
//
// The binaries are taken from $INGRESS_SYNC_CONTROLPLANE_DIR, by default
// <repository>/.cache/controlplane. When they are missing, Start fails the
// test with a message to run `make controlplane`; it never skips.
//
// Outside a network namespace the apiserver refuses loopback EndpointSlice
// addresses; tests use 198.18.0.0/24 addresses and never send traffic there.
package testenv
