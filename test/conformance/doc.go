// Package conformance runs the official Gateway API conformance suite
// (sigs.k8s.io/gateway-api/conformance, unchanged) against the whole
// system: a real kube-apiserver and etcd, NATS, the watcher, a syncer and
// its nginx, in a network namespace of the test, with test/conformance/
// harness giving what a cluster's other parts would (Pods, EndpointSlices,
// kube-proxy, LoadBalancer addresses, the namespace finalizer).
//
// Its tests build only with the build tag conformance (go test ./... does
// not compile the suite) and run only with INGRESS_SYNC_CONFORMANCE=1, as
// `make conformance` runs them; the suite's flags follow -args (see the
// Makefile and docs/gateway-api.md, "Conformance").
package conformance
