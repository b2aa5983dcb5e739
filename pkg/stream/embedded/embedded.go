// Package embedded runs a NATS server with JetStream in-process, for a
// one-machine setup (the watcher's --embedded-nats) and for tests
// (test/testkit/natstest wraps it). It is the only package of ingress-sync
// that imports nats-server: the syncer and the format packages do not link
// it.
package embedded

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/ingress-sync/ingress-sync/pkg/stream"
)

// Options configures an in-process NATS server with JetStream.
type Options struct {
	StoreDir   string // JetStream file store; required
	Host       string // default 127.0.0.1
	Port       int    // -1 picks a free port; 0 is the NATS default, 4222
	MaxPayload int32  // maximum message size; 0 is the NATS default, 1 MiB
}

// Start starts a NATS server with JetStream in this process and waits
// until it accepts connections (bounded by ctx's deadline, or
// stream.DefaultTimeout). Bad options are an error wrapping
// stream.ErrInvalidConfig. The caller owns the server: Shutdown() and
// WaitForShutdown() it when done. Its URL is s.ClientURL().
func Start(ctx context.Context, opts Options) (*server.Server, error) {
	if opts.StoreDir == "" {
		return nil, fmt.Errorf("%w: embedded NATS needs a store dir", stream.ErrInvalidConfig)
	}
	if opts.MaxPayload < 0 {
		return nil, fmt.Errorf("%w: max payload %d", stream.ErrInvalidConfig, opts.MaxPayload)
	}
	host := opts.Host
	if host == "" {
		host = "127.0.0.1"
	}
	s, err := server.NewServer(&server.Options{
		Host:       host,
		Port:       opts.Port,
		MaxPayload: opts.MaxPayload,
		JetStream:  true,
		StoreDir:   opts.StoreDir,
		NoSigs:     true,
		NoLog:      true,
	})
	if err != nil {
		return nil, fmt.Errorf("embedded: NATS: %w", err)
	}
	s.Start()
	if !s.ReadyForConnections(readyTimeout(ctx)) {
		s.Shutdown()
		s.WaitForShutdown()
		return nil, fmt.Errorf("embedded: NATS on %s:%d not ready", host, opts.Port)
	}
	return s, nil
}

// readyTimeout is what is left of ctx's deadline, or stream.DefaultTimeout.
func readyTimeout(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return max(time.Until(dl), time.Millisecond)
	}
	return stream.DefaultTimeout
}
