package watch

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/internal/retry"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
)

// natsTimeout bounds each JetStream API call of the watcher.
const natsTimeout = stream.DefaultTimeout

// natsBackoff paces the watcher's retries of the stream: provisioning it,
// the leader's reconcile and reading the syncers' reports.
var natsBackoff = retry.Backoff{Base: 250 * time.Millisecond, Max: 10 * time.Second}

// natsLink is the NATS side of the watcher, set once connected and the
// stream ensured (then w.natsReady is closed).
type natsLink struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	stream jetstream.Stream
}

// prepareNATS connects to NATS (retrying forever with backoff, each attempt
// logged by stream.Connect), ensures the stream and then closes w.natsReady.
// It returns nil when ctx ends first.
func (w *Watcher) prepareNATS(ctx context.Context, url string) error {
	opts := []stream.ConnectOption{stream.WithName("ingress-sync-watcher/" + w.cfg.WatcherID), stream.WithConnectLogger(w.log)}
	if w.cfg.NATSUser != "" {
		opts = append(opts, stream.WithUserInfo(w.cfg.NATSUser, w.cfg.NATSPassword))
	}
	if w.cfg.NATSCredsFile != "" {
		opts = append(opts, stream.WithCredsFile(w.cfg.NATSCredsFile))
	}
	conn, err := stream.Connect(ctx, url, opts...)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	st, err := w.ensureStream(ctx, conn.JetStream())
	if err != nil {
		conn.Close()
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	w.nats = &natsLink{nc: conn.NATS(), js: conn.JetStream(), stream: st}
	close(w.natsReady)
	return nil
}

// ensureStream creates or updates the stream, retrying with backoff while
// JetStream is not available. A configuration JetStream refuses is retried
// too, and logged each time, as an operator may fix the server meanwhile.
func (w *Watcher) ensureStream(ctx context.Context, js jetstream.JetStream) (jetstream.Stream, error) {
	var st jetstream.Stream
	err := retry.Until(ctx, natsBackoff, func() error {
		callCtx, cancel := context.WithTimeout(ctx, natsTimeout)
		defer cancel()
		var err error
		st, err = stream.Ensure(callCtx, js, w.cfg.streamConfig())
		return err
	}, func(attempt int, wait time.Duration, err error) {
		w.log.Warn("ensure stream failed, retrying", "stream", w.cfg.Stream, "attempt", attempt, "retryIn", wait, "err", err)
	})
	if err != nil {
		return nil, err
	}
	w.log.Info("stream ready", "stream", w.cfg.Stream, "subjects", events.FilterSubject(w.cfg.SubjectPrefix))
	return st, nil
}

// natsConnected reports whether the NATS connection is up.
func (w *Watcher) natsConnected() bool {
	select {
	case <-w.natsReady:
		return w.nats.nc.IsConnected()
	default:
		return false
	}
}
