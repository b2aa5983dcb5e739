package natstest

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/pkg/stream"
	"github.com/ingress-sync/ingress-sync/pkg/stream/embedded"
	"github.com/ingress-sync/ingress-sync/test/testkit/freeport"
)

// startTimeout bounds how long a server may take to accept connections.
const startTimeout = 20 * time.Second

// Option changes the server that Start or New runs.
type Option func(*embedded.Options)

// WithMaxPayload sets the server's max_payload (the NATS default is 1 MiB).
func WithMaxPayload(n int32) Option {
	return func(o *embedded.Options) { o.MaxPayload = n }
}

// WithStoreDir sets the JetStream store directory (default t.TempDir()),
// to start a server on the store of an earlier one.
func WithStoreDir(dir string) Option {
	return func(o *embedded.Options) { o.StoreDir = dir }
}

// Server is a restartable embedded NATS server of one test.
type Server struct {
	t    testing.TB
	opts embedded.Options
	srv  *server.Server
	url  string
}

// Start starts an embedded JetStream server and returns it with its URL.
// It is shut down when the test ends. Use New for a server to restart.
func Start(t testing.TB, opts ...Option) (*server.Server, string) {
	t.Helper()
	s := New(t, opts...)
	return s.NATS(), s.URL()
}

// New starts an embedded JetStream server that can be stopped and
// restarted on the same port and store. It is shut down when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	// A port of freeport, not the kernel's: Restart binds it again, and a
	// port the kernel handed out could be taken by another process while
	// the server is down.
	ports, err := freeport.Ports(1)
	if err != nil {
		t.Fatalf("natstest: %v", err)
	}
	o := embedded.Options{StoreDir: t.TempDir(), Host: "127.0.0.1", Port: ports[0]}
	for _, opt := range opts {
		opt(&o)
	}
	s := &Server{t: t, opts: o}
	s.start()
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) start() {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	srv, err := embedded.Start(ctx, s.opts)
	if err != nil {
		s.t.Fatalf("natstest: %v", err)
	}
	s.srv, s.url = srv, srv.ClientURL()
}

// NATS is the running server (or the last one, once stopped).
func (s *Server) NATS() *server.Server { return s.srv }

// URL is the client URL; it stays the same across restarts.
func (s *Server) URL() string { return s.url }

// StoreDir is the JetStream store directory; it stays the same across
// restarts.
func (s *Server) StoreDir() string { return s.opts.StoreDir }

// Stop shuts the server down and waits until it has, so that the port and
// the store are free. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	if s.srv == nil || !s.srv.Running() {
		return
	}
	s.srv.Shutdown()
	s.srv.WaitForShutdown()
}

// Restart stops the server if it runs and starts a new one on the same
// port and store: streams and their messages survive, connections are cut
// and clients reconnect.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.start()
}

// Dial connects to url through stream.Connect, once, as the test's
// connection name, reconnecting for ever every 50ms (so that tests of
// outages stay short), with opts after these. The connection is closed when
// the test ends.
func Dial(t testing.TB, url string, opts ...stream.ConnectOption) *stream.Conn {
	t.Helper()
	opts = append([]stream.ConnectOption{
		stream.WithName(t.Name()),
		stream.WithConnectOnce(),
		stream.WithReconnectWait(50 * time.Millisecond),
		stream.WithConnectLogger(slog.New(slog.DiscardHandler)),
	}, opts...)
	c, err := stream.Connect(t.Context(), url, opts...)
	if err != nil {
		t.Fatalf("natstest: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// Connect is Dial's connection and its JetStream context.
func Connect(t testing.TB, url string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	c := Dial(t, url)
	return c.NATS(), c.JetStream()
}
