package churn

import (
	"context"
	"testing"
	"time"
)

// BenchmarkGenerator is the cost of one generated change of the default
// mix (endpoints, Ingresses and Secret rotations over 1k Ingresses).
func BenchmarkGenerator(b *testing.B) {
	spec := DefaultSpec()
	spec.EndpointRate, spec.IngressRate, spec.SecretRate, spec.Duration = 200, 20, 2, time.Duration(1<<62)
	g, err := NewGenerator(spec, testPool)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := g.Next(); !ok {
			b.Fatal("generator ended")
		}
	}
}

// BenchmarkStreamPublish is the rate at which the stream target publishes
// endpoint changes (encode, Publisher, acks) into an embedded nats-server
// with the event stream (file storage, S2, 16 messages per subject), over
// 1k objects: the ceiling of the stream-only scenarios' live phase.
func BenchmarkStreamPublish(b *testing.B) {
	js := testStreamEnv(b, 0).JetStream() // the default history, as deployed
	spec := DefaultSpec()
	spec.EndpointRate, spec.Duration = 1e6, time.Duration(1<<62)
	g, err := NewGenerator(spec, testPool)
	if err != nil {
		b.Fatal(err)
	}
	t, err := NewStreamTarget(js, testPrefix, 8192)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		ch, _ := g.Next()
		if _, err := t.Write(ctx, ch); err != nil {
			b.Fatal(err)
		}
	}
	if n, err := t.Flush(ctx); n > 0 || err != nil {
		b.Fatalf("%d publishes failed: %v", n, err)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}
