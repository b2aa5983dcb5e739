// Package harness gives a bare kube-apiserver (test/testkit/testenv) what a
// cluster gives the Gateway API conformance suite, and nothing more, inside
// a network namespace the test made (test/testkit/netns):
//
//   - Deployments get Pods (no ReplicaSets), Pods become Running and Ready
//     with an IP of PodRange (a kubelet without containers);
//   - Pods of the echo-basic image are answered in process, on their IP,
//     with echo-basic's JSON (echo.go), and log a line per echoed request
//     as echo-basic does, which a Kubelet serves to the API server's
//     pods/log over TLS on the node's address (kubelet.go; the mirror
//     tests read them);
//   - EndpointSlices for Services with a selector, from their ready Pods
//     (the endpointslice controller);
//   - Services of type LoadBalancer get an address of LoadBalancerRange
//     (a cloud's or MetalLB's part);
//   - ClusterIP and LoadBalancer addresses are routed to endpoints with
//     iptables DNAT in the namespace's nat table (kube-proxy);
//   - deleted Namespaces are emptied and finalized (the namespace
//     controller).
//
// The product under test runs beside it as it would in a cluster and is
// never told about the harness. One reconcile loop polls the API server
// (Cluster.Run); every step logs its errors and the next round retries.
package harness
