// Package testkit holds, in its subpackages, the harness of the tests, of
// the demo (hack/demo, behind make run) and of the load generator
// (hack/churn, behind make bench): a real kube-apiserver and etcd
// (testenv), nats-server (natstest), a 3-node cluster of nats-server
// processes (natscluster), network namespaces (netns), the whole system
// (world), echo backends, fixtures, golden files, the churn generator and
// its scenarios.
//
// It sits above the product it drives: it imports pkg/ and internal/, and
// nothing of the product (cmd/, pkg/, internal/, lua/) imports it but from
// _test.go files, so none of it ships in the syncer or the watcher. The
// programs built on it live in hack/. TestImportsRunOneWay checks this, and
// that the helpers of internal/ import nothing of pkg/.
package testkit
