package natstest_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/test/testkit/natstest"
)

func TestStartAndConnect(t *testing.T) {
	srv, url := natstest.Start(t, natstest.WithMaxPayload(64<<10))
	if !srv.JetStreamEnabled() {
		t.Fatal("JetStream is not enabled")
	}
	nc, js := natstest.Connect(t, url)
	if got := nc.MaxPayload(); got != 64<<10 {
		t.Errorf("MaxPayload = %d, want %d", got, 64<<10)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.AccountInfo(ctx); err != nil {
		t.Fatalf("AccountInfo: %v", err)
	}
}

func TestRestartKeepsPortAndStore(t *testing.T) {
	s := natstest.New(t)
	url := s.URL()
	_, js := natstest.Connect(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "T", Subjects: []string{"t.>"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "t.a", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	s.Restart()
	if s.URL() != url {
		t.Errorf("URL after restart = %s, want %s", s.URL(), url)
	}
	// The old connection reconnects by itself.
	var (
		msg     *jetstream.RawStreamMsg
		lastErr error
	)
	for msg == nil && ctx.Err() == nil {
		// A request sent just as the connection drops is lost: bound each
		// attempt, not only the whole wait.
		actx, acancel := context.WithTimeout(ctx, 2*time.Second)
		stream, err := js.Stream(actx, "T")
		if err == nil {
			msg, err = stream.GetLastMsgForSubject(actx, "t.a")
		}
		acancel()
		if err != nil {
			lastErr = err
			time.Sleep(50 * time.Millisecond)
		}
	}
	if msg == nil || string(msg.Data) != "kept" {
		t.Fatalf("message after restart = %v, want kept (last error: %v)", msg, lastErr)
	}
	s.Stop()
	s.Stop()
	if s.NATS().Running() {
		t.Error("server still running after Stop")
	}
}
