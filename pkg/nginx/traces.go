package nginx

import "context"

// Spans is GET /ingress_traces: the OpenTelemetry spans lua/tracing.lua
// recorded since the last read (taken off its queue, at most 2048 a read),
// after a first line "#d\t<n>", the spans it dropped meanwhile; then the
// spans' fields, separated by NUL, each span ended by a field "\n"
// (pkg/tracing parses them).
func (c *Client) Spans(ctx context.Context) ([]byte, error) {
	return c.getRaw(ctx, "/ingress_traces")
}
