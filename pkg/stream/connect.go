package stream

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go"
)

// ConnectOptions say how the watcher and the syncer reach NATS.
type ConnectOptions struct {
	URL      string // comma-separated server URLs
	Name     string // connection name shown by the server
	User     string
	Password string
	Creds    string // path of a .creds file (JWT + nkey)
	// DialTimeout bounds each connection attempt (default 5s); RetryMax
	// bounds the wait between attempts (default 10s).
	DialTimeout time.Duration
	RetryMax    time.Duration
	// Once makes Connect try once and return the error, as a command line
	// tool should, instead of retrying.
	Once   bool
	Logger *slog.Logger
}

// Connect dials NATS until it succeeds or ctx is done, with exponential
// backoff between attempts and a log line for each failed one. Once
// connected, the client reconnects by itself forever and logs each
// disconnect and reconnect.
func Connect(ctx context.Context, o ConnectOptions) (*nats.Conn, error) {
	if o.URL == "" {
		return nil, ErrNoURL
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 5 * time.Second
	}
	if o.RetryMax <= 0 {
		o.RetryMax = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	for attempt := 1; ; attempt++ {
		nc, err := nats.Connect(o.URL, o.natsOptions()...)
		if err == nil {
			o.Logger.Info("connected to NATS", "url", nc.ConnectedUrlRedacted(), "attempts", attempt)
			return nc, nil
		}
		if o.Once {
			return nil, fmt.Errorf("stream: connecting to NATS at %s: %w", o.URL, err)
		}
		wait := backoff(attempt, 250*time.Millisecond, o.RetryMax, rand.Int64N)
		o.Logger.Warn("NATS connection failed, retrying", "url", o.URL, "attempt", attempt, "retryIn", wait, "err", err)
		if !sleep(ctx, nil, wait) {
			return nil, fmt.Errorf("stream: connecting to NATS at %s: %w (last error: %w)", o.URL, ctx.Err(), err)
		}
	}
}

func (o ConnectOptions) natsOptions() []nats.Option {
	log := o.Logger
	opts := []nats.Option{
		nats.Name(o.Name),
		nats.Timeout(o.DialTimeout),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(time.Second),
		nats.ReconnectJitter(500*time.Millisecond, time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil { // nil: our own Close, nothing to report
				log.Warn("disconnected from NATS", "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("reconnected to NATS", "url", nc.ConnectedUrlRedacted())
		}),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			subject := ""
			if sub != nil {
				subject = sub.Subject
			}
			log.Error("NATS asynchronous error", "subject", subject, "err", err)
		}),
	}
	if o.User != "" {
		opts = append(opts, nats.UserInfo(o.User, o.Password))
	}
	if o.Creds != "" {
		opts = append(opts, nats.UserCredentials(o.Creds))
	}
	return opts
}
