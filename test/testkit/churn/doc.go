// Package churn is the load generator behind hack/churn and the churn
// scenarios of `make bench`: it sets up a cluster of Ingresses, Services,
// EndpointSlices and TLS Secrets, then changes them at fixed rates, and
// measures how fast ingress-sync follows.
//
// A Generator turns a Spec and a seed into the same sequence of Changes
// every time: the setup objects, then endpoint changes (scale up, scale
// down, replace a pod IP), Ingress creates, updates and deletes, and TLS
// Secret rotations, each due at a fixed offset from the start (the k-th
// change of a rate r is due at k/r), bounded by a count and a duration.
//
// A Target writes them: KubeTarget through the Kubernetes API (the watcher
// then publishes them), StreamTarget straight to JetStream as events in the
// watcher's encoding, through pkg/stream's Publisher.
//
// Run drives a Target and measures, for every write:
//
//   - when the syncer applied it: a headers-only tap on the stream maps the
//     write (object and resourceVersion) to its stream sequence, and the
//     syncers' status reports say when each sequence was applied;
//   - when nginx served it: for a sample of the endpoint changes that add
//     an address, probe requests through nginx with the Ingress's Host
//     header until the new endpoint's echo backend answers (the backends
//     are internal/echo servers named by their address), and for Ingress
//     creates until any backend answers the new host (404 until then);
//
// and, around the churn, the syncers' metrics (reloads, dynamic updates,
// events applied, event lag), the stream lag (stream last sequence against
// the sequence each syncer applied) and the CPU and RSS of the watcher,
// syncer and nginx processes read from /proc. The Report is a table or
// JSON.
//
// Scenarios are the benchmark runs of `make bench` (hack/churn scenario):
// the whole system in a private network namespace with 1k Ingresses under
// 200 endpoint changes per second, the stream-only apply rate of one
// syncer, the bootstrap of a new syncer on 50k objects (time, nginx memory,
// nginx -t), the syncer's RSS with 10k Ingresses, and, on 10k Ingresses
// through the API, 50 new Ingresses per second (create → served) and 1,000
// at once (until the last is served), each compared with its target. They
// are benchmarks: they report what they measure and never fail on a missed
// target.
package churn
