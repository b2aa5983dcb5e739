package watch

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
)

// natsTimeout bounds each JetStream API call of the watcher.
const natsTimeout = 10 * time.Second

// Backoff of the stream provisioning retries.
const (
	ensureBase = 250 * time.Millisecond
	ensureMax  = 10 * time.Second
)

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
	nc, err := stream.Connect(ctx, stream.ConnectOptions{
		URL: url, Name: "ingress-sync-watcher/" + w.cfg.WatcherID,
		User: w.cfg.NATSUser, Password: w.cfg.NATSPassword, Creds: w.cfg.NATSCredsFile,
		Logger: w.log,
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return fmt.Errorf("jetstream: %w", err)
	}
	stream, err := w.ensureStream(ctx, js)
	if err != nil {
		nc.Close()
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	w.nats = &natsLink{nc: nc, js: js, stream: stream}
	close(w.natsReady)
	return nil
}

// ensureStream creates or updates the stream, retrying with backoff while
// JetStream is not available. A configuration JetStream refuses is retried
// too, and logged each time, as an operator may fix the server meanwhile.
func (w *Watcher) ensureStream(ctx context.Context, js jetstream.JetStream) (jetstream.Stream, error) {
	for attempt := 1; ; attempt++ {
		callCtx, cancel := context.WithTimeout(ctx, natsTimeout)
		stream, err := stream.Ensure(callCtx, js, w.cfg.streamConfig())
		cancel()
		if err == nil {
			w.log.Info("stream ready", "stream", w.cfg.Stream, "subjects", events.FilterSubject(w.cfg.SubjectPrefix))
			return stream, nil
		}
		wait := backoff(attempt, ensureBase, ensureMax)
		w.log.Warn("ensure stream failed, retrying", "stream", w.cfg.Stream, "attempt", attempt, "retryIn", wait, "err", err)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
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

// backoff is base doubled per attempt, capped at max.
func backoff(attempt int, base, max time.Duration) time.Duration {
	d := base
	for i := 1; i < attempt && d < max; i++ {
		d *= 2
	}
	return min(d, max)
}
