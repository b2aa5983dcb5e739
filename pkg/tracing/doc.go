// Package tracing exports the OpenTelemetry spans of the data plane.
//
// ingress-nginx traces with an nginx module that exports from inside the
// nginx workers. Debian ships no such module, and exporting from a worker
// would put a network client on the request path, so the work is split:
// lua/tracing.lua makes the server span of each traced request (ids,
// W3C traceparent to the backend, sampling, the module's name and
// attributes) and appends it to a bounded list in a shared dict; the
// syncer reads the list from the loopback status server (GET
// /ingress_traces) and this package exports the spans with the
// OpenTelemetry Go SDK's OTLP/gRPC client to otlp-collector-host:port.
//
// Queues are bounded at both ends: nginx keeps at most 8192 spans not yet
// read, the Exporter at most otel-max-queuesize not yet exported. A span
// beyond either bound, or in a batch the collector did not take within
// the export timeout, is dropped and counted in
// ingress_sync_tracing_spans_dropped_total{reason}. A request never waits
// for any of it: the log phase only appends to the dict.
//
// The settings are read from the running Configuration on every round
// (config.OpenTelemetry): a new collector address reconnects the client, a
// new batch size or delay applies to the next export; none reloads nginx.
package tracing
