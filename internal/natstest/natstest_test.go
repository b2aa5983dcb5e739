package natstest_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/internal/natstest"
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
	var msg *jetstream.RawStreamMsg
	for msg == nil && ctx.Err() == nil {
		stream, err := js.Stream(ctx, "T")
		if err == nil {
			msg, err = stream.GetLastMsgForSubject(ctx, "t.a")
		}
		if err != nil {
			time.Sleep(50 * time.Millisecond)
		}
	}
	if msg == nil || string(msg.Data) != "kept" {
		t.Fatalf("message after restart = %v, want kept (%v)", msg, ctx.Err())
	}
	s.Stop()
	s.Stop()
	if s.NATS().Running() {
		t.Error("server still running after Stop")
	}
}
