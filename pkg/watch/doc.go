// Package watch is the watcher of ingress-sync: it keeps informers on every
// ingress input (Ingress, IngressClass, Service, EndpointSlice, TLS Secret, the
// ConfigMaps named by flags and the ConfigMaps they or Ingresses reference:
// configmaps.go), and on the Gateway API inputs (GatewayClass, Gateway,
// HTTPRoute, ReferenceGrant, BackendTLSPolicy: gateway.go, backendtls.go)
// while the cluster serves them, and
// publishes each change as an events.Event to the JetStream stream.
//
// Design:
//
//   - Every replica runs the informers, so a standby has warm caches. Only the
//     Lease leader publishes (and writes Ingress status); a replica that loses
//     the Lease stops publishing at once. The default timings (3 s lease,
//     2 s renew deadline, 0.5 s retry period) make a standby lead about 4 s
//     after the leader dies.
//   - Publishing is fenced (fence.go): each event expects the stream
//     sequence of the last message of its subject, so that two replicas
//     that both believe they lead (a paused leader) never store an older
//     version of an object after a newer one. A refused event makes the
//     term read the subject again; a version older than the stream's is
//     dropped (ingress_sync_watcher_stale_versions_dropped_total).
//   - Informer handlers do not publish. They put the object's key on a
//     rate-limited workqueue (and keep the last state of a deleted object).
//     A worker publishes the current cache state of the key. So nothing is
//     lost while NATS is down: a failed publish puts the key back with
//     exponential backoff, and whatever the object looks like when NATS
//     returns is published (a delete still carries its last state).
//   - The worker compares the object with what it last published by a digest
//     of what matters: for an EndpointSlice its endpoints, ports, address
//     type and Service label; for an Ingress everything but status (so our
//     own status writes do not loop back into the stream); for the others the
//     trimmed object without resourceVersion. Equal digests are dropped and
//     counted (ingress_sync_watcher_noop_updates_dropped_total).
//   - The Gateway API kinds are optional (Config.GatewayClient): every
//     Config.GatewayAPIPollInterval the watcher asks discovery whether
//     gateway.networking.k8s.io/v1 is served, starts the informer of a kind
//     whose CRD appeared and stops that of one whose CRD went, publishing
//     the deletes of the objects it held (gateway.go). Every Gateway,
//     HTTPRoute, ReferenceGrant and GatewayClass is published, whatever its
//     class, as every Ingress is; the syncers pick theirs. Secrets are the
//     exception: only those a listener of a Gateway of our class names
//     (Config.GatewayControllerName), across namespaces only with a
//     ReferenceGrant (gateway_secrets.go). Their status is left out of the
//     digest, as an Ingress's is.
//   - On becoming leader it reconciles: it reads the last message of every
//     subject (stream.LastPerSubject) and publishes only objects with no
//     message, a deleted one, another UID or a changed digest; subjects whose
//     object is gone get a delete. Nothing unchanged is published again.
//     Only subjects within the watcher's scope (its namespace, the ConfigMaps
//     it was given outside it) are considered.
//   - While leading it checks the event stream every StreamCheckInterval,
//     and at once when a publish conflicts or fails (recreate.go): a stream
//     still missing a second later is created again, and a stream created
//     after the one it reconciled with (its sequences restarted) is
//     reconciled again once it has a leader, its records of what the stream
//     holds forgotten and the publisher told that no subject has a message
//     (Publisher.ExpectEmpty).
//     Once every key a reconcile queued is in the stream, it marks the
//     stream reconciled (stream.MarkReconciled, round.go): syncers that
//     found the stream recreated wait for that marker before they bootstrap
//     from it again.
//   - With Config.RESTConfig the informers list and watch through a gate
//     (apigate.go) that holds their requests while the kube-apiserver is
//     unreachable and probes its /readyz every Config.APIProbeInterval;
//     once it answers, the informers resume at once (standbys after a
//     jitter) instead of after client-go's backoff of up to a minute, and
//     the leader reconciles the stream with the API again.
//   - While leading it reads the syncers' status reports (the status stream:
//     the last report of every syncer, then live ones) and posts Kubernetes
//     Events on the Ingresses it serves (reports.go): a Warning per Problem
//     when it first appears in any current report, and a Normal "Sync" once
//     every current syncer has applied a change it published (by stream
//     sequence). The ledger (ledger.go) makes each one once per change, not
//     once per syncer and build; client-go's recorder aggregates repeats and
//     limits the rate per Ingress.
//   - With --publish-service or --publish-status-address it writes the
//     address into the status of the Ingresses it serves (status.go) once
//     the syncers serve them (statusgate.go): enough current syncers
//     (Config.StatusSyncers) have applied the stream sequence at which the
//     term published the Ingress, and do not report it unserved. After
//     Config.StatusMaxWait without them it writes the address anyway, with
//     a Warning Event.
//   - With the Gateway API watched it writes the status of our
//     GatewayClasses, Gateways and of the HTTPRoutes attached to them, as
//     pkg/gateway computes it (gwstatus.go), and with
//     Config.GatewayServiceSelector keeps a Service per Gateway of ours in
//     its namespace, with targetPorts allocated from
//     Config.GatewayPortRange (gwservice.go), published like any Service.
//     A Gateway is Programmed once it has an address and the syncers serve
//     the versions of it and of its Service the term published.
//   - An object over the server's max_payload is logged with its kind,
//     namespace, name and size and counted
//     (ingress_sync_watcher_oversize_objects_total); everything else goes on.
//
// HTTP endpoints on Config.MetricsAddr:
//
//   - /metrics: Prometheus metrics from the watcher's own registry.
//   - /healthz: 200 once the informer caches have synced, else 503 naming
//     the failing check. NATS is not part of it: an outage makes the
//     watcher unready, not unhealthy, so a liveness probe on /healthz does
//     not restart it while NATS is down (nothing is lost either way).
//   - /readyz: /healthz plus the NATS connection being up and, on the
//     leader, the start-up reconcile having finished; 503 naming the
//     failing check otherwise.
package watch
