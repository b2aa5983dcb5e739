package deploy

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
)

// Churn of the cluster test: churnObjects Services, each updated until
// churnEvents events have been published (up to churnWindow in flight),
// then churnDeletes of them deleted. Every object keeps all its messages (history 16 > 10 per
// object), so the stream must hold exactly what was acknowledged.
const (
	clusterSize     = 3
	churnObjects    = 24
	churnEvents     = 240
	churnDeletes    = 4
	publishAttempts = 50
	readAttempts    = 20
	churnWindow     = 16 // <= churnObjects: one event per object in flight
	retryPause      = 200 * time.Millisecond
	publishTimeout  = 2 * time.Second
	clusterWait     = 60 * time.Second
)

// natsCluster is three servers run from the ConfigMap of deploy/base, with
// the routes of cluster.conf pointed at 127.0.0.1.
type natsCluster struct {
	opts    []*server.Options
	servers []*server.Server
}

// startCluster loads nats.conf once per server (server_name from
// SERVER_NAME, as the pod name is in the StatefulSet) and maps
// nats-N.nats-headless:6222 in the routes to 127.0.0.1:<free port N>.
func startCluster(t *testing.T, files map[string]string, pw natsPasswords) *natsCluster {
	routes := freePorts(t, clusterSize)
	var replace []string
	for i, p := range routes {
		replace = append(replace, fmt.Sprintf("nats-%d.nats-headless:6222", i), "127.0.0.1:"+strconv.Itoa(p))
	}
	if n := strings.Count(files["cluster.conf"], "nats-route://"); n != clusterSize {
		t.Fatalf("cluster.conf has %d routes, want %d", n, clusterSize)
	}
	conf := writeNATSConfig(t, files, replace...)
	c := &natsCluster{}
	for i := range clusterSize {
		setNATSEnv(t, fmt.Sprintf("nats-%d", i), pw)
		opts := loadNATSOptions(t, conf)
		if len(opts.Routes) != clusterSize || opts.Cluster.Name != "ingress-sync" {
			t.Fatalf("cluster block: %d routes, name %q", len(opts.Routes), opts.Cluster.Name)
		}
		opts.Cluster.Host, opts.Cluster.Port = "127.0.0.1", routes[i]
		c.opts = append(c.opts, opts)
	}
	for _, opts := range c.opts {
		c.servers = append(c.servers, startNATS(t, opts))
	}
	return c
}

// urls are the client URLs of every server, as the Service nats offers.
func (c *natsCluster) urls() string {
	var urls []string
	for _, s := range c.servers {
		urls = append(urls, s.ClientURL())
	}
	return strings.Join(urls, ",")
}

// byName returns the index of the server named name.
func (c *natsCluster) byName(t *testing.T, name string) int {
	for i, o := range c.opts {
		if o.ServerName == name {
			return i
		}
	}
	t.Fatalf("no server %q", name)
	return -1
}

// stop shuts the server down the way nats-server does on SIGTERM: it hands
// its Raft leaderships over first.
func (c *natsCluster) stop(t *testing.T, name string) { stopNATS(c.servers[c.byName(t, name)]) }

func (c *natsCluster) restart(t *testing.T, name string) {
	i := c.byName(t, name)
	c.servers[i] = startNATS(t, c.opts[i])
}

// cluster is what the leader-loss scenario needs of three servers.
type cluster interface {
	urls() string
	stop(t *testing.T, name string)
	restart(t *testing.T, name string)
}

// TestNATSClusterLeaderLoss runs three in-process servers from the deployed
// configuration and the leader-loss scenario, the leader shut down like
// on SIGTERM.
func TestNATSClusterLeaderLoss(t *testing.T) {
	pw := newPasswords(t)
	c := startCluster(t, natsConfigFiles(t, render(t, "base")), pw)
	leaderLoss(t, c, pw)
}

// leaderLoss creates the stream with 3 replicas as the watcher does,
// publishes under churn while the stream leader is stopped, and checks that
// every acknowledged event is in the stream exactly once, that publishing
// went on under a new leader, and that a consumer bootstrapping like a
// syncer converges to the final state. The stopped server then rejoins and
// catches up.
func leaderLoss(t *testing.T, c cluster, pw natsPasswords) {
	began := time.Now()
	nc, err := connectAs(t, c.urls(), "watcher", pw.watcher, nats.MaxReconnects(-1))
	if err != nil {
		t.Fatalf("watcher: %v", err)
	}
	js, stream := ensureClustered(t, nc)
	if r := streamInfo(t, stream).Config.Replicas; r != clusterSize {
		t.Fatalf("stream has %d replicas", r)
	}
	t.Logf("cluster and R%d stream ready in %s", clusterSize, time.Since(began).Round(time.Millisecond))

	began = time.Now()
	// Like the watcher's publisher: a lost async publish fails after a
	// bounded time and is sent again.
	pubJS, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(publishTimeout))
	if err != nil {
		t.Fatal(err)
	}
	pub := &churnPublisher{t: t, js: pubJS}
	oldLeader := ""
	for i := range churnEvents {
		if i == churnEvents/2 {
			oldLeader = streamLeader(t, stream)
			c.stop(t, oldLeader)
			t.Logf("stopped the stream leader %s after %d events", oldLeader, i)
			pub.afterKill = true
		}
		pub.publish(churnEvent(i))
	}
	for i := range churnDeletes {
		pub.publish(deleteEvent(i))
	}
	pub.flush()
	newLeader := streamLeader(t, stream)
	t.Logf("churn took %s", time.Since(began).Round(time.Millisecond))
	t.Logf("new leader %s; %d events, %d after the stop; %d publishes retried, %d found already stored",
		newLeader, len(pub.acked), pub.ackedAfterKill, pub.retries, pub.deduplicated)
	if newLeader == oldLeader || pub.ackedAfterKill == 0 {
		t.Fatalf("leader %s -> %s, %d events acknowledged after the stop", oldLeader, newLeader, pub.ackedAfterKill)
	}

	t.Run("every acknowledged event is stored once", func(t *testing.T) { checkStored(t, js, pub.acked) })
	t.Run("a syncer bootstrap converges", func(t *testing.T) {
		syncer, err := connectAs(t, c.urls(), "syncer", pw.syncer)
		if err != nil {
			t.Fatal(err)
		}
		sjs, err := jetstream.New(syncer)
		if err != nil {
			t.Fatal(err)
		}
		checkConverged(t, sjs, pub.final)
	})
	// Restarted on t, not on a subtest, so that it runs until t ends.
	c.restart(t, oldLeader)
	t.Run("the stopped server rejoins and catches up", func(t *testing.T) { waitCurrent(t, stream) })
}

// ensureClustered waits for the JetStream meta leader (bounded), then
// ensures the streams with 3 replicas like the watcher does.
func ensureClustered(t *testing.T, nc *nats.Conn) (jetstream.JetStream, jetstream.Stream) {
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(clusterWait)
	for {
		ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
		stream, err := stream.Ensure(ctx, js, stream.Config{
			Name: streamName, SubjectPrefix: subjectPrefix, Replicas: clusterSize})
		cancel()
		if err == nil {
			return js, stream
		}
		if time.Now().After(deadline) {
			t.Fatalf("ensure stream on the cluster: %v", err)
		}
		time.Sleep(retryPause)
	}
}

func streamLeader(t *testing.T, s jetstream.Stream) string {
	t.Helper()
	deadline := time.Now().Add(clusterWait)
	for {
		ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
		info, err := s.Info(ctx)
		cancel()
		if err == nil && info.Cluster != nil && info.Cluster.Leader != "" {
			return info.Cluster.Leader
		}
		if time.Now().After(deadline) {
			t.Fatalf("no stream leader: %v", err)
		}
		time.Sleep(retryPause)
	}
}

// churnPublisher publishes events like the watcher: asynchronously, up to
// churnWindow in flight (never two of one object, so each object's events
// are stored in order), each with its Nats-Msg-Id. A publish whose ack
// fails is sent again with the same id until acknowledged; the stream's
// duplicate window keeps it from being stored twice.
type churnPublisher struct {
	t              *testing.T
	js             jetstream.JetStream
	pending        []inFlight
	acked          map[string]uint64 // msg id -> stream sequence
	final          map[string]string // subject -> resourceVersion of the live object
	afterKill      bool
	ackedAfterKill int
	retries        int
	deduplicated   int // acks of a retry that JetStream recognised as stored
}

type inFlight struct {
	msg       *nats.Msg
	future    jetstream.PubAckFuture
	afterKill bool
}

// publish sends ev asynchronously, first settling the oldest publish when
// the window is full.
func (p *churnPublisher) publish(ev events.Event) {
	t := p.t
	t.Helper()
	if p.acked == nil {
		p.acked, p.final = map[string]uint64{}, map[string]string{}
	}
	if len(p.pending) >= churnWindow {
		p.settle(p.pending[0])
		p.pending = p.pending[1:]
	}
	data, err := events.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	subject := events.Subject(subjectPrefix, ev.Kind, ev.Namespace, ev.Name)
	msg := &nats.Msg{Subject: subject, Header: events.Headers(ev), Data: data}
	f, err := p.js.PublishMsgAsync(msg)
	if err != nil {
		f = nil // settled by a synchronous retry
	}
	p.pending = append(p.pending, inFlight{msg: msg, future: f, afterKill: p.afterKill})
	if ev.Op == events.OpDelete {
		delete(p.final, subject)
	} else {
		p.final[subject] = ev.ResourceVersion
	}
}

// flush settles every publish in flight.
func (p *churnPublisher) flush() {
	for _, f := range p.pending {
		p.settle(f)
	}
	p.pending = nil
}

// settle waits for the ack of f (bounded), retrying synchronously with the
// same message id when it fails.
func (p *churnPublisher) settle(f inFlight) {
	t := p.t
	var ack *jetstream.PubAck
	if f.future != nil {
		select {
		case ack = <-f.future.Ok():
		case <-f.future.Err():
		case <-time.After(2 * publishTimeout): // the future's own timeout fires first
		}
	}
	if ack == nil {
		var err error
		if ack, err = p.publishRetried(f.msg); err != nil {
			t.Fatalf("publish %s after %d attempts: %v", f.msg.Subject, publishAttempts, err)
		}
	}
	id := f.msg.Header.Get(jetstream.MsgIDHeader)
	if _, dup := p.acked[id]; dup {
		t.Fatalf("event %s acknowledged twice", id)
	}
	p.acked[id] = ack.Sequence
	if ack.Duplicate {
		p.deduplicated++
	}
	if f.afterKill {
		p.ackedAfterKill++
	}
}

func (p *churnPublisher) publishRetried(msg *nats.Msg) (*jetstream.PubAck, error) {
	var err error
	for range publishAttempts {
		p.retries++
		ctx, cancel := context.WithTimeout(p.t.Context(), publishTimeout)
		var ack *jetstream.PubAck
		ack, err = p.js.PublishMsg(ctx, msg)
		cancel()
		if err == nil {
			return ack, nil
		}
		time.Sleep(retryPause)
	}
	return nil, err
}

func serviceName(i int) string { return fmt.Sprintf("svc-%02d", i%churnObjects) }

// churnEvent is the i-th change: create on first sight, update after.
func churnEvent(i int) events.Event {
	op := events.OpUpdate
	if i < churnObjects {
		op = events.OpCreate
	}
	return serviceEvent(op, serviceName(i), strconv.Itoa(1000+i))
}

func deleteEvent(i int) events.Event {
	return serviceEvent(events.OpDelete, serviceName(i), strconv.Itoa(5000+i))
}

func serviceEvent(op events.Op, name, rv string) events.Event {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "churn", Name: name, UID: types.UID("uid-" + name), ResourceVersion: rv},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
	}
	return events.Event{Op: op, Kind: events.KindService, Namespace: "churn", Name: name,
		UID: string(svc.UID), ResourceVersion: rv, ObservedAt: time.Now(), WatcherID: "deploy-test", Object: svc}
}

// checkStored reads the whole stream and compares it with the acks.
func checkStored(t *testing.T, js jetstream.JetStream, acked map[string]uint64) {
	stored := map[string]uint64{}
	for _, m := range readAll(t, js, jetstream.DeliverAllPolicy, len(acked)) {
		meta, err := m.Metadata()
		if err != nil {
			t.Fatal(err)
		}
		id := m.Headers().Get(jetstream.MsgIDHeader)
		if _, dup := stored[id]; dup {
			t.Errorf("event %s stored twice", id)
		}
		stored[id] = meta.Sequence.Stream
	}
	for id, seq := range acked {
		if got, ok := stored[id]; !ok || got != seq {
			t.Errorf("acknowledged event %s (seq %d) stored at %d (present %t)", id, seq, got, ok)
		}
	}
	if len(stored) != len(acked) {
		t.Errorf("stream holds %d events, %d were acknowledged", len(stored), len(acked))
	}
}

// checkConverged bootstraps like a syncer (last per subject) and rebuilds
// the state: every live object at its last resourceVersion, no deleted one.
func checkConverged(t *testing.T, js jetstream.JetStream, final map[string]string) {
	state := map[string]string{}
	for _, m := range readAll(t, js, jetstream.DeliverLastPerSubjectPolicy, churnObjects) {
		ev, err := events.Decode(m.Data())
		if err != nil {
			t.Fatalf("decode %s: %v", m.Subject(), err)
		}
		if ev.Op == events.OpDelete {
			delete(state, m.Subject())
			continue
		}
		state[m.Subject()] = ev.ResourceVersion
	}
	if len(state) != len(final) {
		t.Errorf("converged to %d objects, want %d", len(state), len(final))
	}
	for subject, rv := range final {
		if state[subject] != rv {
			t.Errorf("%s at resourceVersion %q, want %q", subject, state[subject], rv)
		}
	}
}

// readAll reads the event subjects with an ordered consumer until it has
// delivered the stream's last message, at most limit messages plus one.
// NumPending alone is not enough: after a leader loss an ordered consumer
// was seen to report 0 pending with messages still to deliver. Like a syncer, it starts over with a new consumer when
// a read fails (a consumer placed on a server that just went away), a
// bounded number of times.
func readAll(t *testing.T, js jetstream.JetStream, policy jetstream.DeliverPolicy, limit int) []jetstream.Msg {
	t.Helper()
	var err error
	for attempt := range readAttempts {
		if attempt > 0 {
			t.Logf("read attempt %d failed: %v; starting over", attempt, err)
			time.Sleep(retryPause)
		}
		var msgs []jetstream.Msg
		if msgs, err = readOnce(t, js, policy, limit); err == nil {
			return msgs
		}
	}
	t.Fatalf("read the stream: %v", err)
	return nil
}

func readOnce(t *testing.T, js jetstream.JetStream, policy jetstream.DeliverPolicy, limit int) ([]jetstream.Msg, error) {
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	s, err := js.Stream(ctx, streamName)
	if err != nil {
		return nil, fmt.Errorf("stream: %w", err)
	}
	last := s.CachedInfo().State.LastSeq
	cons, err := js.OrderedConsumer(ctx, streamName, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{events.FilterSubject(subjectPrefix)}, DeliverPolicy: policy})
	if err != nil {
		return nil, fmt.Errorf("ordered consumer: %w", err)
	}
	it, err := cons.Messages()
	if err != nil {
		return nil, err
	}
	defer it.Stop()
	var msgs []jetstream.Msg
	for len(msgs) <= limit {
		m, err := it.Next(jetstream.NextMaxWait(callTimeout))
		if err != nil {
			return nil, fmt.Errorf("after %d messages: %w", len(msgs), err)
		}
		msgs = append(msgs, m)
		meta, err := m.Metadata()
		if err != nil {
			return nil, err
		}
		if meta.Sequence.Stream >= last {
			return msgs, nil
		}
		if meta.NumPending == 0 {
			t.Logf("consumer reports nothing pending at stream sequence %d of %d; reading on", meta.Sequence.Stream, last)
		}
	}
	return nil, fmt.Errorf("more than %d messages", limit)
}

// waitCurrent waits (bounded) until every replica of the stream is current.
func waitCurrent(t *testing.T, s jetstream.Stream) {
	deadline := time.Now().Add(clusterWait)
	for {
		ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
		info, err := s.Info(ctx)
		cancel()
		if err == nil && info.Cluster != nil && len(info.Cluster.Replicas) == clusterSize-1 && allCurrent(info.Cluster.Replicas) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replicas not current: %v %+v", err, info)
		}
		time.Sleep(retryPause)
	}
}

func allCurrent(peers []*jetstream.PeerInfo) bool {
	for _, p := range peers {
		if !p.Current || p.Offline {
			return false
		}
	}
	return true
}
