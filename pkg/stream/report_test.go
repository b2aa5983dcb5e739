package stream_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/events/eventstest"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
	"github.com/ingress-sync/ingress-sync/test/testkit/natstest"
)

// TestConsumerReportsDecodeErrorsOnce: a skipped message goes to the
// decode error handler and is not logged too; without a handler it is
// logged, once.
func TestConsumerReportsDecodeErrorsOnce(t *testing.T) {
	ctx := testContext(t)
	_, js, _ := setupStream(t)
	if _, err := js.Publish(ctx, "ingress.configmap.ingress.garbage", []byte("\xc1not msgpack")); err != nil {
		t.Fatal(err)
	}
	var handled atomic.Int32
	for _, tc := range []struct {
		name     string
		opts     []stream.ConsumerOption
		logLines int
	}{
		{"with a handler", []stream.ConsumerOption{stream.WithDecodeErrorHandler(func(uint64, string, error) { handled.Add(1) })}, 0},
		{"without", nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer // read once the consumer has stopped
			rec := newRecorder()
			opts := append([]stream.ConsumerOption{stream.WithConsumerLogger(slog.New(slog.NewTextHandler(&logs, nil)))}, tc.opts...)
			c, err := stream.NewConsumer(js, "INGRESS", prefix, rec, opts...)
			if err != nil {
				t.Fatal(err)
			}
			stop := runConsumer(t, c)
			rec.waitFor(t, ctx, "caught up", func(_ []events.Event, ups int) bool { return ups == 1 })
			stop()
			if got := strings.Count(logs.String(), "undecodable event skipped"); got != tc.logLines {
				t.Errorf("%d log lines about the message, want %d:\n%s", got, tc.logLines, logs.String())
			}
		})
	}
	if handled.Load() != 1 {
		t.Errorf("decode error handler called %d times, want 1", handled.Load())
	}
}

// TestPublisherLogsNoOutcome: a refusal is Publish's error and a final
// failure the observer's; the publisher itself logs neither.
func TestPublisherLogsNoOutcome(t *testing.T) {
	ctx := testContext(t)
	_, js, _ := setupStream(t, natstest.WithMaxPayload(64<<10))
	var logs bytes.Buffer // read once Flush has seen every outcome
	var obs observations
	p, err := stream.NewPublisher(js, "nostream", stream.WithPublisherLogger(slog.New(slog.NewTextHandler(&logs, nil))),
		stream.WithRetry(2, 10*time.Millisecond), stream.WithAckTimeout(time.Second), stream.WithObserver(obs.observe))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Publish(ctx, eventstest.Of(events.OpUpdate, eventstest.EndpointSlice(1000))); !errors.Is(err, stream.ErrTooLarge) {
		t.Fatalf("Publish of a huge slice = %v, want ErrTooLarge", err)
	}
	if err := p.Publish(ctx, configMapEvent("lost", 1)); err != nil {
		t.Fatal(err)
	}
	if err := p.Flush(ctx); err == nil {
		t.Fatal("Flush = nil, want the final failure")
	}
	if ok, failed := obs.counts(); ok != 0 || failed != 1 {
		t.Errorf("observer: %d ok, %d failed; want only the final failure", ok, failed)
	}
	if logs.String() != "" {
		t.Errorf("the publisher logged:\n%s", logs.String())
	}
}
