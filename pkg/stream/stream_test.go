package stream_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
	"github.com/ingress-sync/ingress-sync/test/testkit/natstest"
)

// testContext is the bound of one integration test.
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestStreamConfigValidate(t *testing.T) {
	valid := stream.Config{Name: "INGRESS", SubjectPrefix: "ingress"}
	if err := valid.Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(*stream.Config)
	}{
		{"no name", func(c *stream.Config) { c.Name = "" }},
		{"dot in name", func(c *stream.Config) { c.Name = "IN.GRESS" }},
		{"space in name", func(c *stream.Config) { c.Name = "IN GRESS" }},
		{"no prefix", func(c *stream.Config) { c.SubjectPrefix = "" }},
		{"wildcard prefix", func(c *stream.Config) { c.SubjectPrefix = "ingress.*" }},
		{"negative replicas", func(c *stream.Config) { c.Replicas = -1 }},
		{"too many replicas", func(c *stream.Config) { c.Replicas = 7 }},
		{"history below -1", func(c *stream.Config) { c.History = -2 }},
		{"negative max age", func(c *stream.Config) { c.MaxAge = -time.Second }},
		{"negative duplicate window", func(c *stream.Config) { c.DuplicateWindow = -time.Second }},
		{"window longer than max age", func(c *stream.Config) { c.MaxAge = time.Minute }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := valid
			tc.change(&cfg)
			if err := cfg.Validate(); !errors.Is(err, stream.ErrInvalidConfig) {
				t.Errorf("Validate = %v, want ErrInvalidConfig", err)
			}
		})
	}
}

func TestStreamConfigDefaults(t *testing.T) {
	c := stream.Config{Name: "INGRESS", SubjectPrefix: "ingress"}.JetStreamConfig()
	if c.Replicas != 1 || c.MaxMsgsPerSubject != stream.DefaultHistory || c.Duplicates != 2*time.Minute ||
		c.MaxAge != 0 || c.Storage != jetstream.FileStorage || c.Retention != jetstream.LimitsPolicy ||
		c.Compression != jetstream.S2Compression || len(c.Subjects) != 1 || c.Subjects[0] != "ingress.>" {
		t.Errorf("defaults = %+v", c)
	}
	unlimited := stream.Config{Name: "I", SubjectPrefix: "i", History: -1}.JetStreamConfig()
	if unlimited.MaxMsgsPerSubject != -1 {
		t.Errorf("History -1 gives MaxMsgsPerSubject %d", unlimited.MaxMsgsPerSubject)
	}
}

func TestEnsureStreamCreatesAndUpdates(t *testing.T) {
	ctx := testContext(t)
	_, url := natstest.Start(t)
	_, js := natstest.Connect(t, url)
	cfg := stream.Config{Name: "INGRESS", SubjectPrefix: "ingress", History: 5}

	s, err := stream.Ensure(ctx, js, cfg)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	assertStream(t, s.CachedInfo().Config, 5)

	cfg.History = 20
	if s, err = stream.Ensure(ctx, js, cfg); err != nil {
		t.Fatalf("update: %v", err)
	}
	assertStream(t, s.CachedInfo().Config, 20)
	if s, err = stream.Ensure(ctx, js, cfg); err != nil {
		t.Fatalf("same config again: %v", err)
	}
	assertStream(t, s.CachedInfo().Config, 20)

	status, err := js.Stream(ctx, stream.StatusStreamName("INGRESS"))
	if err != nil {
		t.Fatalf("status stream: %v", err)
	}
	if got := status.CachedInfo().Config.Subjects; len(got) != 1 || got[0] != "ingress-status.>" {
		t.Errorf("status subjects = %v", got)
	}
	if _, err := stream.Ensure(ctx, js, stream.Config{Name: "X"}); !errors.Is(err, stream.ErrInvalidConfig) {
		t.Errorf("invalid config: %v, want ErrInvalidConfig", err)
	}
}

func assertStream(t *testing.T, c jetstream.StreamConfig, history int64) {
	t.Helper()
	if c.MaxMsgsPerSubject != history || c.Storage != jetstream.FileStorage || c.Retention != jetstream.LimitsPolicy ||
		c.Compression != jetstream.S2Compression || c.Duplicates != stream.DefaultDuplicateWindow || c.MaxAge != 0 {
		t.Errorf("stream config = %+v, want history %d, file, limits, s2, 2m window, no max age", c, history)
	}
}

func TestStatusReportsAreKept(t *testing.T) {
	ctx := testContext(t)
	_, url := natstest.Start(t)
	nc, js := natstest.Connect(t, url)
	if _, err := stream.Ensure(ctx, js, stream.Config{Name: "INGRESS", SubjectPrefix: "ingress"}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish(events.StatusSubject("ingress", "syncer-0"), []byte(`{"pod":"syncer-0"}`)); err != nil {
		t.Fatal(err)
	}
	if err := nc.FlushWithContext(ctx); err != nil {
		t.Fatal(err)
	}
	status, err := js.Stream(ctx, stream.StatusStreamName("INGRESS"))
	if err != nil {
		t.Fatal(err)
	}
	for ctx.Err() == nil {
		msg, err := status.GetLastMsgForSubject(ctx, events.StatusSubject("ingress", "syncer-0"))
		if err == nil {
			if string(msg.Data) != `{"pod":"syncer-0"}` {
				t.Errorf("status report = %s", msg.Data)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("core NATS status report not captured by the status stream")
}
