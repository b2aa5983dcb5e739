// Package faults is the fault suite of ingress-sync (`make faults`): the
// real components in a private network namespace (a control plane, a
// 3-node cluster of nats-server processes, two watchers, two syncers with
// their nginx, echo backends), churn of EndpointSlices and Ingresses
// throughout, probes through every nginx, and faults injected one after
// another: SIGKILL of the leading watcher, of a NATS node and of the
// stream's leader, of a syncer and of an nginx master, a syncer stopped
// with SIGSTOP, kube-apiserver down, the stream deleted and recreated, and
// garbage published into the stream. After each fault it waits, bounded,
// for the system to converge, and at the end it checks the stream, the
// syncers' checksums, every host and the balancers' backends against the
// API.
//
// The default run (`go test ./test/faults`, part of `make test`) is short:
// a few faults. FAULTS=full runs every fault once and writes the report
// (RELIABILITY.md, FAULTS_REPORT names the file); FAULTS_DURATION=30m is a
// soak that repeats the faults in a random order from a seed it prints
// (FAULTS_SEED repeats one). This file's package holds the report's
// renderer; the suite is in the test files.
package faults
