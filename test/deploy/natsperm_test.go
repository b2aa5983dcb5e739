package deploy

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
)

// Names that deploy/ gives the watcher's flags and the NATS permissions.
const (
	streamName    = "INGRESS"
	subjectPrefix = "ingress"
)

// callTimeout bounds a NATS call that must succeed; deniedTimeout bounds
// one that must not (a refused request gets no answer, only an async
// permission violation, which the test then waits for).
const (
	callTimeout   = 10 * time.Second
	deniedTimeout = time.Second
)

// TestNATSPermissions loads the NATS configuration of deploy/base from its
// ConfigMap into a real nats-server (one server: the cluster block removed)
// and checks the users with real connections.
func TestNATSPermissions(t *testing.T) {
	pw := newPasswords(t)
	setNATSEnv(t, "nats-0", pw)
	conf := writeNATSConfig(t, natsConfigFiles(t, render(t, "base")))
	s := startNATS(t, withoutCluster(loadNATSOptions(t, conf)))
	url := s.ClientURL()

	t.Run("health probe path", func(t *testing.T) { checkHealthz(t, s) })
	t.Run("unauthenticated connections fail", func(t *testing.T) {
		for _, c := range []struct{ user, password string }{{"", ""}, {"watcher", "wrong"}, {"syncer", pw.watcher}, {"watcher", pw.syncer}} {
			if _, err := connectAs(t, url, c.user, c.password, nats.NoReconnect()); err == nil {
				t.Errorf("user %q connected", c.user)
			}
		}
	})

	watcherErrs := make(asyncErrors, 16)
	wnc, err := connectAs(t, url, "watcher", pw.watcher, watcherErrs.option())
	if err != nil {
		t.Fatalf("watcher: %v", err)
	}
	wjs, stream := watcherStream(t, wnc, 1)
	statuses, err := wnc.SubscribeSync(events.StatusFilter(subjectPrefix))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("watcher publishes events", func(t *testing.T) { publishEvent(t, wjs, "ingress.service.a.b", "1") })
	t.Run("watcher cannot delete or purge the stream", func(t *testing.T) {
		denied(t, watcherErrs, "$JS.API.STREAM.DELETE.INGRESS", func(ctx context.Context) error { return wjs.DeleteStream(ctx, streamName) })
		denied(t, watcherErrs, "$JS.API.STREAM.PURGE.INGRESS", func(ctx context.Context) error { return stream.Purge(ctx) })
	})

	syncerErrs := make(asyncErrors, 16)
	snc, err := connectAs(t, url, "syncer", pw.syncer, syncerErrs.option())
	if err != nil {
		t.Fatalf("syncer: %v", err)
	}
	sjs, err := jetstream.New(snc)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("syncer reads through an ordered consumer", func(t *testing.T) { readLastPerSubject(t, sjs, 1) })
	t.Run("syncer publishes its status", func(t *testing.T) {
		subject := events.StatusSubject(subjectPrefix, "syncer-x")
		if err := snc.Publish(subject, []byte(`{"pod":"syncer-x"}`)); err != nil {
			t.Fatal(err)
		}
		msg, err := statuses.NextMsg(callTimeout)
		if err != nil || msg.Subject != subject {
			t.Fatalf("watcher got %v, %v; want the status on %s", msg, err, subject)
		}
	})
	t.Run("syncer cannot publish events or elsewhere", func(t *testing.T) {
		for _, subject := range []string{"ingress.service.a.b", "ingress-status.watcher.x", "other"} {
			if err := snc.Publish(subject, []byte("x")); err != nil {
				t.Fatal(err)
			}
			syncerErrs.expectViolation(t, "Publish", subject)
		}
		requireMsgs(t, stream, 1)
	})
	t.Run("syncer cannot change the stream", func(t *testing.T) {
		denied(t, syncerErrs, "$JS.API.STREAM.DELETE.INGRESS", func(ctx context.Context) error { return sjs.DeleteStream(ctx, streamName) })
		denied(t, syncerErrs, "$JS.API.STREAM.PURGE.INGRESS", func(ctx context.Context) error {
			s, err := sjs.Stream(ctx, streamName)
			if err != nil {
				return err
			}
			return s.Purge(ctx)
		})
		denied(t, syncerErrs, "$JS.API.STREAM.UPDATE.INGRESS", func(ctx context.Context) error {
			cfg := stream.CachedInfo().Config
			cfg.MaxMsgsPerSubject = 1
			_, err := sjs.UpdateStream(ctx, cfg)
			return err
		})
		info := streamInfo(t, stream)
		if info.Config.MaxMsgsPerSubject == 1 || info.State.Msgs != 1 {
			t.Errorf("stream changed: history %d, %d messages", info.Config.MaxMsgsPerSubject, info.State.Msgs)
		}
	})
	t.Run("syncer cannot subscribe to the events directly", func(t *testing.T) {
		if _, err := snc.SubscribeSync("ingress.>"); err != nil {
			t.Fatal(err)
		}
		syncerErrs.expectViolation(t, "Subscription", "ingress.>")
	})
}

// watcherStream ensures the streams like the watcher does and returns the
// event stream.
func watcherStream(t *testing.T, nc *nats.Conn, replicas int) (jetstream.JetStream, jetstream.Stream) {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	stream, err := stream.Ensure(ctx, js, stream.Config{
		Name: streamName, SubjectPrefix: subjectPrefix, Replicas: replicas, History: 10})
	if err != nil {
		t.Fatalf("watcher cannot ensure the streams: %v", err)
	}
	return js, stream
}

func publishEvent(t *testing.T, js jetstream.JetStream, subject, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	ack, err := js.Publish(ctx, subject, []byte("payload"), jetstream.WithMsgID(id))
	if err != nil || ack.Stream != streamName {
		t.Fatalf("publish %s: %v, %+v", subject, err, ack)
	}
}

// readLastPerSubject bootstraps like a syncer (ordered consumer, last per
// subject) and expects want messages.
func readLastPerSubject(t *testing.T, js jetstream.JetStream, want int) []jetstream.Msg {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	cons, err := js.OrderedConsumer(ctx, streamName, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{events.FilterSubject(subjectPrefix)},
		DeliverPolicy:  jetstream.DeliverLastPerSubjectPolicy,
	})
	if err != nil {
		t.Fatalf("ordered consumer: %v", err)
	}
	batch, err := cons.FetchNoWait(want + 1)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []jetstream.Msg
	for m := range batch.Messages() {
		msgs = append(msgs, m)
	}
	if len(msgs) != want || batch.Error() != nil {
		t.Fatalf("read %d messages (%v), want %d", len(msgs), batch.Error(), want)
	}
	return msgs
}

// denied runs a JetStream call that the user may not make: the call must
// fail and the server must report the permission violation for subject.
func denied(t *testing.T, errs asyncErrors, subject string, call func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), deniedTimeout)
	defer cancel()
	if err := call(ctx); err == nil {
		t.Fatalf("%s succeeded", subject)
	}
	errs.expectViolation(t, "Publish", subject)
}

func streamInfo(t *testing.T, s jetstream.Stream) *jetstream.StreamInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func requireMsgs(t *testing.T, s jetstream.Stream, want uint64) {
	t.Helper()
	if got := streamInfo(t, s).State.Msgs; got != want {
		t.Fatalf("stream has %d messages, want %d", got, want)
	}
}

// checkHealthz: the probe path of the StatefulSet answers 200 on this
// nats-server version once JetStream runs.
func checkHealthz(t *testing.T, s *server.Server) {
	url := fmt.Sprintf("http://%s/healthz?js-enabled-only=true", s.MonitorAddr())
	if !probeOK(t, url) {
		t.Fatalf("%s does not answer 200", url)
	}
}

func probeOK(t *testing.T, url string) bool {
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
