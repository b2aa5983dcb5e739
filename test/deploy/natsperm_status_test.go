package deploy

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
)

// TestNATSWatcherReadsReports: with the base configuration, the watcher
// user reads the syncers' last reports from the status stream as the leader
// does for the Ingress Events (an ordered consumer, last per subject, then
// deleted), and the syncer user cannot.
func TestNATSWatcherReadsReports(t *testing.T) {
	pw := newPasswords(t)
	setNATSEnv(t, "nats-0", pw)
	conf := writeNATSConfig(t, natsConfigFiles(t, render(t, "base")))
	s := startNATS(t, withoutCluster(loadNATSOptions(t, conf)))
	wnc, err := connectAs(t, s.ClientURL(), "watcher", pw.watcher)
	if err != nil {
		t.Fatalf("watcher: %v", err)
	}
	wjs, _ := watcherStream(t, wnc, 1)
	snc, err := connectAs(t, s.ClientURL(), "syncer", pw.syncer)
	if err != nil {
		t.Fatalf("syncer: %v", err)
	}
	subject := events.StatusSubject(subjectPrefix, "syncer-x")
	if err := snc.Publish(subject, []byte(`{"pod":"syncer-x","ready":true}`)); err != nil {
		t.Fatal(err)
	}
	if err := snc.Flush(); err != nil {
		t.Fatal(err)
	}
	status := stream.StatusStreamName(streamName)
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{events.StatusFilter(subjectPrefix)}, DeliverPolicy: jetstream.DeliverLastPerSubjectPolicy}
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	oc, err := wjs.OrderedConsumer(ctx, status, cfg)
	if err != nil {
		t.Fatalf("watcher: ordered consumer on %s: %v", status, err)
	}
	got := make(chan string, 1)
	cc, err := oc.Consume(func(m jetstream.Msg) {
		select {
		case got <- m.Subject():
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case subj := <-got:
		if subj != subject {
			t.Errorf("watcher read a report on %s, want %s", subj, subject)
		}
	case <-ctx.Done():
		t.Fatalf("watcher read no report from %s", status)
	}
	cc.Stop()
	if err := wjs.DeleteConsumer(ctx, status, oc.CachedInfo().Name); err != nil {
		t.Errorf("watcher cannot delete its consumer: %v", err)
	}
	sjs, err := jetstream.New(snc)
	if err != nil {
		t.Fatal(err)
	}
	sctx, scancel := context.WithTimeout(t.Context(), deniedTimeout)
	defer scancel()
	if _, err := sjs.OrderedConsumer(sctx, status, cfg); err == nil {
		t.Errorf("syncer created a consumer on %s", status)
	}
}
