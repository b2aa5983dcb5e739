package stream_test

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/stream"
	"github.com/ingress-sync/ingress-sync/test/testkit/natstest"
)

func TestConnectRefusesBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		url  string
		opt  stream.ConnectOption
	}{
		{"no URL", "", nil},
		{"empty name", "nats://127.0.0.1:1", stream.WithName("")},
		{"empty user", "nats://127.0.0.1:1", stream.WithUserInfo("", "secret")},
		{"empty creds path", "nats://127.0.0.1:1", stream.WithCredsFile("")},
		{"zero dial timeout", "nats://127.0.0.1:1", stream.WithDialTimeout(0)},
		{"negative connect backoff", "nats://127.0.0.1:1", stream.WithConnectBackoff(-time.Second)},
		{"zero reconnect wait", "nats://127.0.0.1:1", stream.WithReconnectWait(0)},
		{"nil logger", "nats://127.0.0.1:1", stream.WithConnectLogger(nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := []stream.ConnectOption{stream.WithConnectOnce(), stream.WithConnectLogger(quiet)}
			if tc.opt != nil {
				opts = append(opts, tc.opt)
			}
			c, err := stream.Connect(t.Context(), tc.url, opts...)
			if c != nil {
				c.Close()
			}
			if !errors.Is(err, stream.ErrInvalidConfig) || errors.Is(err, stream.ErrConnect) {
				t.Fatalf("Connect = %v, want ErrInvalidConfig before any attempt", err)
			}
			if tc.url == "" && !errors.Is(err, stream.ErrNoURL) {
				t.Errorf("Connect = %v, want ErrNoURL", err)
			}
		})
	}
}

func TestConnectGivesTheJetStreamContext(t *testing.T) {
	_, url := natstest.Start(t)
	c, err := stream.Connect(t.Context(), url, stream.WithName("connect-test"), stream.WithConnectOnce(), stream.WithConnectLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := stream.Ensure(ctx, c.JetStream(), stream.Config{Name: "INGRESS", SubjectPrefix: "ingress"}); err != nil {
		t.Fatalf("Ensure through the Conn's JetStream: %v", err)
	}
	if c.JetStream().Conn() != c.NATS() {
		t.Error("the JetStream context is not on the Conn's connection")
	}
	if got := c.NATS().Opts.Name; got != "connect-test" {
		t.Errorf("connection name %q", got)
	}
	c.Close()
	c.Close() // a second Close does nothing
	if !c.NATS().IsClosed() {
		t.Error("Close left the connection open")
	}
}

func TestConnectOnceReturnsTheFailure(t *testing.T) {
	url := stoppedServerURL(t)
	c, err := stream.Connect(t.Context(), url, stream.WithConnectOnce(), stream.WithDialTimeout(time.Second), stream.WithConnectLogger(quiet))
	if c != nil {
		c.Close()
	}
	if !errors.Is(err, stream.ErrConnect) || errors.Is(err, stream.ErrInvalidConfig) {
		t.Fatalf("Connect = %v, want ErrConnect", err)
	}
}

func TestConnectRetriesUntilTheContextEnds(t *testing.T) {
	url := stoppedServerURL(t)
	failed := newCounter(retryMessage)
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	c, err := stream.Connect(ctx, url, stream.WithConnectBackoff(20*time.Millisecond), stream.WithConnectLogger(slog.New(failed)))
	if c != nil {
		c.Close()
	}
	if !errors.Is(err, stream.ErrConnect) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Connect = %v, want ErrConnect and the context's error", err)
	}
	if n := failed.n.Load(); n < 2 {
		t.Errorf("%d failed attempts logged, want one per attempt", n)
	}
}

func TestConnectDoesNotDialWithAnEndedContext(t *testing.T) {
	_, url := natstest.Start(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	c, err := stream.Connect(ctx, url, stream.WithConnectLogger(quiet))
	if c != nil {
		c.Close()
	}
	if !errors.Is(err, stream.ErrConnect) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Connect = %v, want ErrConnect and context.Canceled", err)
	}
}

func TestConnectWaitsForTheServer(t *testing.T) {
	srv := natstest.New(t)
	srv.Stop()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	failed := newCounter(retryMessage)
	type result struct {
		c   *stream.Conn
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := stream.Connect(ctx, srv.URL(), stream.WithConnectBackoff(20*time.Millisecond), stream.WithConnectLogger(slog.New(failed)))
		done <- result{c, err}
	}()
	for failed.n.Load() == 0 { // the first attempt failed: start the server
		select {
		case <-ctx.Done():
			t.Fatal("no failed attempt logged")
		case <-time.After(10 * time.Millisecond):
		}
	}
	srv.Restart()
	r := <-done
	if r.err != nil {
		t.Fatalf("Connect = %v, want a connection once the server is up", r.err)
	}
	defer r.c.Close()
	if !r.c.NATS().IsConnected() {
		t.Error("not connected")
	}
}

// stoppedServerURL is the URL of a NATS server that was started and
// stopped: nothing listens there.
func stoppedServerURL(t *testing.T) string {
	t.Helper()
	srv := natstest.New(t)
	srv.Stop()
	return srv.URL()
}

// retryMessage is what Connect logs for each failed attempt.
const retryMessage = "NATS connection failed, retrying"

// counter is a slog.Handler that counts the records with one message.
type counter struct {
	msg string
	n   *atomic.Int64
}

func newCounter(msg string) counter { return counter{msg: msg, n: new(atomic.Int64)} }

func (c counter) Enabled(context.Context, slog.Level) bool { return true }

func (c counter) Handle(_ context.Context, r slog.Record) error {
	if r.Message == c.msg {
		c.n.Add(1)
	}
	return nil
}

func (c counter) WithAttrs([]slog.Attr) slog.Handler { return c }

func (c counter) WithGroup(string) slog.Handler { return c }
