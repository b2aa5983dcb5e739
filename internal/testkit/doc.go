// Package testkit holds, in its subpackages, the harnesses of the tests,
// the demo (make run) and the load generator (cmd/churn): a real
// kube-apiserver and etcd (testenv), nats-server (natstest), a 3-node
// cluster of nats-server processes (natscluster), network
// namespaces (netns), the whole system (world), echo backends, fixtures,
// golden files. None of it ships: the syncer and watcher binaries must not
// depend on it (TestBinariesDoNotLinkTestkit).
package testkit
