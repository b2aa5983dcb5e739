package stream

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Connection defaults.
const (
	DefaultDialTimeout    = 5 * time.Second
	DefaultConnectBackoff = 10 * time.Second
	DefaultReconnectWait  = time.Second
)

// Conn is a NATS connection and the JetStream context on it: what the
// watcher, the syncer and the tools read and write the stream through.
// Close it when done.
type Conn struct {
	nc *nats.Conn
	js jetstream.JetStream
}

// NATS is the core NATS connection (status reports, subscriptions).
func (c *Conn) NATS() *nats.Conn { return c.nc }

// JetStream is the JetStream context on the connection.
func (c *Conn) JetStream() jetstream.JetStream { return c.js }

// Close closes the connection; closing a closed Conn does nothing.
func (c *Conn) Close() { c.nc.Close() }

// ConnectOption configures Connect. Options validate their input: Connect
// returns an error wrapping ErrInvalidConfig for a bad one.
type ConnectOption func(*connectConfig) error

type connectConfig struct {
	name          string
	user          string
	password      string
	creds         string
	dialTimeout   time.Duration
	backoffMax    time.Duration
	reconnectWait time.Duration
	once          bool
	logger        *slog.Logger
}

func defaultConnectConfig() connectConfig {
	return connectConfig{
		dialTimeout:   DefaultDialTimeout,
		backoffMax:    DefaultConnectBackoff,
		reconnectWait: DefaultReconnectWait,
		logger:        slog.Default(),
	}
}

// WithName sets the connection name the server shows (in `nats server
// report connections`, for one).
func WithName(name string) ConnectOption {
	return func(c *connectConfig) error {
		if name == "" {
			return fmt.Errorf("empty connection name")
		}
		c.name = name
		return nil
	}
}

// WithUserInfo authenticates as user with password.
func WithUserInfo(user, password string) ConnectOption {
	return func(c *connectConfig) error {
		if user == "" {
			return fmt.Errorf("empty NATS user")
		}
		c.user, c.password = user, password
		return nil
	}
}

// WithCredsFile authenticates with the JWT and nkey of a .creds file, read
// at every connection attempt.
func WithCredsFile(path string) ConnectOption {
	return func(c *connectConfig) error {
		if path == "" {
			return fmt.Errorf("empty credentials file path")
		}
		c.creds = path
		return nil
	}
}

// WithDialTimeout bounds each connection attempt, the handshake included
// (default DefaultDialTimeout).
func WithDialTimeout(d time.Duration) ConnectOption {
	return func(c *connectConfig) error {
		if d <= 0 {
			return fmt.Errorf("dial timeout %s <= 0", d)
		}
		c.dialTimeout = d
		return nil
	}
}

// WithConnectBackoff bounds the wait between two attempts of the first
// connection, which starts at 250ms and doubles (default
// DefaultConnectBackoff).
func WithConnectBackoff(max time.Duration) ConnectOption {
	return func(c *connectConfig) error {
		if max <= 0 {
			return fmt.Errorf("connect backoff %s <= 0", max)
		}
		c.backoffMax = max
		return nil
	}
}

// WithConnectOnce makes Connect try once and return the error, as a command
// line tool should, instead of retrying until its context ends.
func WithConnectOnce() ConnectOption {
	return func(c *connectConfig) error {
		c.once = true
		return nil
	}
}

// WithReconnectWait sets the wait between two reconnection attempts of an
// established connection that lost its server, with up to half of it added
// at random (default DefaultReconnectWait).
func WithReconnectWait(d time.Duration) ConnectOption {
	return func(c *connectConfig) error {
		if d <= 0 {
			return fmt.Errorf("reconnect wait %s <= 0", d)
		}
		c.reconnectWait = d
		return nil
	}
}

// WithConnectLogger sets the logger of connection attempts, disconnects,
// reconnects and asynchronous errors (default slog.Default()).
func WithConnectLogger(l *slog.Logger) ConnectOption {
	return func(c *connectConfig) error {
		if l == nil {
			return fmt.Errorf("nil logger")
		}
		c.logger = l
		return nil
	}
}

// Connect connects to the NATS servers of url (comma-separated) and makes
// the JetStream context on the connection. It dials until it succeeds or
// ctx is done (or once, with WithConnectOnce), each attempt bounded by the
// dial timeout, with exponential backoff between attempts and a log line
// for each failed one. Once connected, the client reconnects by itself
// forever and logs each disconnect and reconnect.
//
// An empty url is ErrNoURL, a bad option ErrInvalidConfig; a connection
// that failed wraps ErrConnect and the last error of nats.go, and also
// ctx's error when ctx ended the retries.
func Connect(ctx context.Context, url string, opts ...ConnectOption) (*Conn, error) {
	cfg, err := connectConfigOf(url, opts)
	if err != nil {
		return nil, err
	}
	nc, err := cfg.dial(ctx, url)
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("stream: jetstream: %w", err)
	}
	return &Conn{nc: nc, js: js}, nil
}

func connectConfigOf(url string, opts []ConnectOption) (connectConfig, error) {
	cfg := defaultConnectConfig()
	if url == "" {
		return cfg, fmt.Errorf("%w: %w", ErrInvalidConfig, ErrNoURL)
	}
	for _, opt := range opts {
		if err := opt(&cfg); err != nil {
			return cfg, fmt.Errorf("%w: connect: %w", ErrInvalidConfig, err)
		}
	}
	return cfg, nil
}

// dial connects, retrying unless cfg.once.
func (cfg connectConfig) dial(ctx context.Context, url string) (*nats.Conn, error) {
	log := cfg.logger
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("%w at %s: %w", ErrConnect, url, err)
		}
		nc, err := nats.Connect(url, cfg.natsOptions()...)
		if err == nil {
			log.Info("connected to NATS", "url", nc.ConnectedUrlRedacted(), "attempts", attempt)
			return nc, nil
		}
		if cfg.once {
			return nil, fmt.Errorf("%w at %s: %w", ErrConnect, url, err)
		}
		wait := backoff(attempt, 250*time.Millisecond, cfg.backoffMax, rand.Int64N)
		log.Warn("NATS connection failed, retrying", "url", url, "attempt", attempt, "retryIn", wait, "err", err)
		if !sleep(ctx, nil, wait) {
			return nil, fmt.Errorf("%w at %s: %w (last error: %w)", ErrConnect, url, ctx.Err(), err)
		}
	}
}

func (cfg connectConfig) natsOptions() []nats.Option {
	log := cfg.logger
	opts := []nats.Option{
		nats.Name(cfg.name),
		nats.Timeout(cfg.dialTimeout),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(cfg.reconnectWait),
		nats.ReconnectJitter(cfg.reconnectWait/2, cfg.reconnectWait),
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
	if cfg.user != "" {
		opts = append(opts, nats.UserInfo(cfg.user, cfg.password))
	}
	if cfg.creds != "" {
		opts = append(opts, nats.UserCredentials(cfg.creds))
	}
	return opts
}
