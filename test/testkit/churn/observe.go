package churn

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
)

// natsCallTimeout bounds one JetStream API call of the observer.
const natsCallTimeout = 5 * time.Second

// Observer feeds a Recorder from NATS: a headers-only ordered consumer on
// the event stream (new messages only) gives the sequence of every event,
// a subscription to the status subjects gives the syncers' reports.
type Observer struct {
	js     jetstream.JetStream
	stream string
	rec    *Recorder
	cc     jetstream.ConsumeContext
	sub    *nats.Subscription
}

// StartObserver starts tapping the stream streamName (events under prefix)
// and the status reports, into rec.
func StartObserver(ctx context.Context, conn *stream.Conn, streamName, prefix string, rec *Recorder) (*Observer, error) {
	js := conn.JetStream()
	o := &Observer{js: js, stream: streamName, rec: rec}
	var err error
	o.sub, err = conn.NATS().Subscribe(events.StatusFilter(prefix), func(m *nats.Msg) {
		if st, err := events.DecodeStatus(m.Data); err == nil {
			rec.Status(st)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("churn: status subscription: %w", err)
	}
	cctx, cancel := context.WithTimeout(ctx, natsCallTimeout)
	defer cancel()
	oc, err := js.OrderedConsumer(cctx, streamName, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{events.FilterSubject(prefix)},
		DeliverPolicy:  jetstream.DeliverNewPolicy,
		HeadersOnly:    true,
	})
	if err == nil {
		o.cc, err = oc.Consume(func(m jetstream.Msg) { o.tap(m) })
	}
	if err != nil {
		_ = o.sub.Unsubscribe()
		return nil, fmt.Errorf("churn: tap on stream %s: %w", streamName, err)
	}
	return o, nil
}

func (o *Observer) tap(m jetstream.Msg) {
	md, err := m.Metadata()
	if err != nil {
		return
	}
	h := m.Headers()
	key := ObjectKey{Kind: events.Kind(h.Get(events.HeaderKind)), Namespace: h.Get(events.HeaderNamespace), Name: h.Get(events.HeaderName)}
	o.rec.Observe(key, events.Op(h.Get(events.HeaderOp)), h.Get(events.HeaderResourceVersion), md.Sequence.Stream, md.Timestamp)
}

// LastSeq is the stream's last sequence.
func (o *Observer) LastSeq(ctx context.Context) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, natsCallTimeout)
	defer cancel()
	s, err := o.js.Stream(ctx, o.stream)
	if err != nil {
		return 0, fmt.Errorf("churn: stream %s: %w", o.stream, err)
	}
	return s.CachedInfo().State.LastSeq, nil
}

// Close stops the tap and the subscription.
func (o *Observer) Close() {
	o.cc.Stop()
	_ = o.sub.Unsubscribe()
}
