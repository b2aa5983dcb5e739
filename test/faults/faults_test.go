package faults

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/watch"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
	"github.com/ingress-sync/ingress-sync/test/testkit/world"
)

// The faults.
const (
	faultWatcherKill = "watcher SIGKILL"
	faultNATSKill    = "NATS node SIGKILL"
	faultNATSLeader  = "stream leader SIGKILL"
	faultSyncerKill  = "syncer SIGKILL"
	faultSyncerStop  = "syncer SIGSTOP"
	faultAPIDown     = "kube-apiserver down"
	faultRecreate    = "stream deleted and recreated"
	faultNginxKill   = "nginx master SIGKILL"
	faultGarbage     = "garbage in the stream"
)

// How long a fault keeps its part down.
const (
	natsDown   = 5 * time.Second
	syncerDown = 3 * time.Second
	apiDown    = 30 * time.Second
	// failoverWait bounds the wait for the standby's first event.
	failoverWait = 30 * time.Second
)

// fault is one fault: run injects it and brings the part back; converged
// is its own condition of convergence (after the common ones); after
// checks its row.
type fault struct {
	name, checked string
	run           func(s *suite, ctx context.Context) (note string, err error)
	converged     func(s *suite, ctx context.Context) error
	after         func(s *suite, row FaultRow) error
	// recovery: after run, measure the time a new change takes to be
	// served (recovery_test.go).
	recovery bool
}

// allFaults is every fault, in the order of the full run.
func allFaults() []string {
	return []string{faultWatcherKill, faultNATSKill, faultNATSLeader, faultSyncerKill, faultSyncerStop,
		faultAPIDown, faultRecreate, faultNginxKill, faultGarbage}
}

func faultByName(name string) fault {
	switch name {
	case faultWatcherKill:
		return fault{name: name, checked: "the standby leads and published the delete made while no watcher led (its host answers 404)",
			run: (*suite).killWatcher, converged: (*suite).doomedGone}
	case faultNATSKill:
		return fault{name: name, checked: "the node rejoined, every replica of the stream current", run: (*suite).killNATSNode, converged: (*suite).replicasCurrent}
	case faultNATSLeader:
		return fault{name: name, checked: "a new stream leader under churn, the old one rejoined and current", run: (*suite).killStreamLeader, converged: (*suite).replicasCurrent}
	case faultSyncerKill:
		return fault{name: name, checked: "the syncer back, ready and caught up; failed probes through its nginx counted", run: (*suite).killSyncer, after: (*suite).syncerKillCost}
	case faultSyncerStop:
		return fault{name: name, checked: "nginx served while its syncer was stopped; the syncer caught up after SIGCONT", run: (*suite).stopSyncer}
	case faultAPIDown:
		return fault{name: name, checked: "nginx served throughout; the watchers reconciled after it came back: the stream holds the API's state",
			run: (*suite).apiServerDown, converged: (*suite).streamMatchesAPI, recovery: true}
	case faultRecreate:
		return fault{name: name, checked: "the watcher republished: the new stream holds the API's state", run: (*suite).recreateStream, converged: (*suite).streamMatchesAPI, recovery: true}
	case faultNginxKill:
		return fault{name: name, checked: "the syncer started nginx again (a new master) with the state", run: (*suite).killNginx, converged: (*suite).nginxBack}
	case faultGarbage:
		return fault{name: name, checked: "every syncer counted the bad messages as decode errors and kept serving", run: (*suite).publishGarbage, converged: (*suite).garbageSkipped}
	}
	panic("faults: unknown fault " + name)
}

// leaseHolder is the watcher id holding the Lease.
func (s *suite) leaseHolder(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	l, err := s.w.Kube.CoordinationV1().Leases("default").Get(ctx, watch.DefaultElectionID, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
		return "", errors.New("nobody holds the Lease")
	}
	return *l.Spec.HolderIdentity, nil
}

// watcherByID maps a watcher id (watcher-<i>) to its component.
func (s *suite) watcherByID(id string) (leader, standby *world.Component, err error) {
	for i, c := range s.w.Watchers {
		if fmt.Sprintf("watcher-%d", i) == id {
			return c, s.w.Watchers[1-i], nil
		}
	}
	return nil, nil, fmt.Errorf("no watcher %q", id)
}

// doomedHost is the host of the Ingress the watcher fault deletes.
func (s *suite) doomedHost() (ns, name, host string) {
	name = fmt.Sprintf("doomed-%d", s.doomed)
	return churnNamespaces(s.spec)[0], name, name + "." + s.spec.Domain
}

// killWatcher creates an Ingress and waits until it is served, SIGKILLs
// the leading watcher, deletes the Ingress while no watcher leads and
// measures the time to the first event the standby publishes; then it
// starts the killed one again, as the standby.
func (s *suite) killWatcher(ctx context.Context) (string, error) {
	id, err := s.leaseHolder(ctx)
	if err != nil {
		return "", err
	}
	leader, _, err := s.watcherByID(id)
	if err != nil {
		return "", err
	}
	standbyID := fmt.Sprintf("watcher-%d", 1-indexOf(s.w.Watchers, leader))
	ns, name, host := s.doomedHost()
	ing := fixtures.Ingress(ns, name, fixtures.Class(world.IngressClass), fixtures.Rule(host, fixtures.Prefix("/", "app-0", 80)))
	ing.ResourceVersion = ""
	if _, err := s.w.Kube.NetworkingV1().Ingresses(ns).Create(ctx, ing, metav1.CreateOptions{}); err != nil {
		return "", err
	}
	wctx, cancel := context.WithTimeout(ctx, convergeTimeout)
	defer cancel()
	if err := s.eventually(wctx, "the new Ingress is served", func(ctx context.Context) error { return s.hostAnswers(ctx, host, 200) }); err != nil {
		return "", err
	}
	sub, err := s.nc.SubscribeSync(world.Prefix + ".>")
	if err != nil {
		return "", err
	}
	defer sub.Unsubscribe()
	if err := kill(leader); err != nil {
		return "", err
	}
	killed := time.Now()
	if err := s.w.Kube.NetworkingV1().Ingresses(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return "", err
	}
	s.deleted[host] = true
	s.doomed++
	s.doomedLast = host
	took, err := firstEventBy(sub, standbyID, killed)
	if err != nil {
		return "", err
	}
	s.failover = max(s.failover, took)
	// The bound is a figure of `make faults` (full and soak runs);
	// the short run in `make test` shares its machine with every other
	// test, so there it is logged, not asserted.
	switch {
	case took > failoverLimit && s.mode.name != modeShort:
		s.t.Errorf("watcher failover took %s, more than %s", took, failoverLimit)
	case took > failoverLimit:
		s.t.Logf("watcher failover took %s, more than %s (not asserted in the short run)", took, failoverLimit)
	}
	if err := leader.Start(); err != nil {
		return "", err
	}
	return fmt.Sprintf("failover %.3f s", took.Seconds()), leader.WaitHealthy(ctx)
}

func indexOf(cs []*world.Component, c *world.Component) int {
	for i, x := range cs {
		if x == c {
			return i
		}
	}
	return -1
}

// firstEventBy waits, bounded by failoverWait, for a message on sub
// published by the watcher id, and returns its arrival after since.
func firstEventBy(sub *nats.Subscription, id string, since time.Time) (time.Duration, error) {
	deadline := since.Add(failoverWait)
	for time.Now().Before(deadline) {
		m, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			return 0, fmt.Errorf("no event from %s within %s: %w", id, failoverWait, err)
		}
		if ev, err := events.Decode(m.Data); err == nil && ev.WatcherID == id {
			return time.Since(since), nil
		}
	}
	return 0, fmt.Errorf("no event from %s within %s", id, failoverWait)
}

// kill sends SIGKILL to a component and waits for it to end.
func kill(c *world.Component) error {
	if err := c.Proc.Signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill %s: %w", c.Name, err)
	}
	<-c.Proc.Done()
	return nil
}

// doomedGone: every nginx answers 404 for the deleted Ingress's host.
func (s *suite) doomedGone(ctx context.Context) error {
	return s.hostAnswers(ctx, s.doomedLast, 404)
}

// hostAnswers: every nginx answers host with status.
func (s *suite) hostAnswers(ctx context.Context, host string, status int) error {
	for _, sy := range s.w.Syncers {
		client := sy.Client(nil)
		client.Timeout = probeTimeout
		err := probe(ctx, client, host)
		switch {
		case status == 200 && err != nil:
			return fmt.Errorf("%s: %s: %w", sy.Name, host, err)
		case status != 200 && (err == nil || err.Error() != fmt.Sprintf("status %d", status)):
			return fmt.Errorf("%s: %s: %v, want status %d", sy.Name, host, err, status)
		}
	}
	return nil
}

// stream is the event stream's handle, its info fresh.
func (s *suite) stream(ctx context.Context) (jetstream.Stream, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return s.js.Stream(ctx, world.Stream)
}

// streamLeader is the server leading the stream's Raft group.
func (s *suite) streamLeader(ctx context.Context) (string, error) {
	st, err := s.stream(ctx)
	if err != nil {
		return "", err
	}
	c := st.CachedInfo().Cluster
	if c == nil || c.Leader == "" {
		return "", errors.New("the stream has no leader")
	}
	return c.Leader, nil
}

// replicasCurrent: the stream has a leader and every replica is current.
func (s *suite) replicasCurrent(ctx context.Context) error {
	st, err := s.stream(ctx)
	if err != nil {
		return err
	}
	c := st.CachedInfo().Cluster
	if c == nil || c.Leader == "" || len(c.Replicas) != 2 {
		return fmt.Errorf("stream cluster %+v", c)
	}
	for _, r := range c.Replicas {
		if !r.Current || r.Offline {
			return fmt.Errorf("replica %s: current %v, offline %v", r.Name, r.Current, r.Offline)
		}
	}
	return nil
}

// killNATSNode SIGKILLs a server that does not lead the stream, and
// starts it again after natsDown.
func (s *suite) killNATSNode(ctx context.Context) (string, error) {
	leader, err := s.streamLeader(ctx)
	if err != nil {
		return "", err
	}
	victim := s.nats.Nodes[0].Name
	if victim == leader {
		victim = s.nats.Nodes[1].Name
	}
	if err := s.nats.Kill(victim); err != nil {
		return "", err
	}
	if err := sleep(ctx, natsDown); err != nil {
		return "", err
	}
	return victim + " killed", s.nats.Restart(ctx, victim)
}

// killStreamLeader SIGKILLs the server leading the stream while the churn
// publishes, waits for a new leader, then starts the old one again.
func (s *suite) killStreamLeader(ctx context.Context) (string, error) {
	leader, err := s.streamLeader(ctx)
	if err != nil {
		return "", err
	}
	if err := s.nats.Kill(leader); err != nil {
		return "", err
	}
	wctx, cancel := context.WithTimeout(ctx, convergeTimeout)
	defer cancel()
	err = s.eventually(wctx, "a new stream leader", func(ctx context.Context) error {
		l, err := s.streamLeader(ctx)
		if err == nil && l == leader {
			err = errors.New("the killed server still leads")
		}
		return err
	})
	if err != nil {
		return "", err
	}
	return leader + " killed", s.nats.Restart(ctx, leader)
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// killSyncer SIGKILLs the second syncer and starts it again after
// syncerDown; the probes through its nginx count what that costs. With
// nginx outliving its syncer, the restarted syncer must adopt the same
// master and catch up without a reload (the same workers).
func (s *suite) killSyncer(ctx context.Context) (string, error) {
	sy := s.w.Syncers[1]
	before, err := sy.Nginx()
	if err != nil {
		return "", err
	}
	if err := kill(&sy.Component); err != nil {
		return "", err
	}
	if err := sleep(ctx, syncerDown); err != nil {
		return "", err
	}
	if err := sy.Start(); err != nil {
		return "", err
	}
	wctx, cancel := context.WithTimeout(ctx, convergeTimeout)
	defer cancel()
	if err := sy.WaitReady(wctx); err != nil {
		return "", err
	}
	if !externalNginx {
		return sy.Name + " killed; nginx is the syncer's child, so it stopped too", nil
	}
	after, err := sy.Nginx()
	if err != nil {
		return "", err
	}
	if after.Master != before.Master || !slices.Equal(after.Children, before.Children) {
		return "", fmt.Errorf("%s: nginx %+v before the kill, %+v after the restart: want the same master and workers (adopted, no reload)",
			sy.Name, before, after)
	}
	return sy.Name + " killed; its nginx kept serving, and the restarted syncer adopted it without a reload", nil
}

// syncerKillCost: with nginx outliving its syncer, not one probe through
// it may fail.
func (s *suite) syncerKillCost(row FaultRow) error {
	if n := row.Failed[s.w.Syncers[1].Name]; externalNginx && n > 0 {
		return fmt.Errorf("%d failed probes through the nginx of the killed syncer, want 0", n)
	}
	return nil
}

// stopSyncer stops the first syncer with SIGSTOP and continues it.
func (s *suite) stopSyncer(ctx context.Context) (string, error) {
	sy := s.w.Syncers[0]
	d := s.mode.stopFor()
	if err := sy.Proc.Signal(syscall.SIGSTOP); err != nil {
		return "", err
	}
	err := sleep(ctx, d)
	return fmt.Sprintf("%s stopped for %s", sy.Name, d), errors.Join(err, sy.Proc.Signal(syscall.SIGCONT))
}

// apiServerDown stops kube-apiserver for apiDown while the churn's writes
// fail and the probes go on.
func (s *suite) apiServerDown(ctx context.Context) (string, error) {
	if err := s.w.CP.StopAPIServer(); err != nil {
		return "", err
	}
	err := sleep(ctx, apiDown)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), setupTimeout)
	defer cancel()
	return fmt.Sprintf("down for %s", apiDown), errors.Join(err, s.w.CP.StartAPIServer(sctx))
}

// recreateStream deletes the event stream and creates it again with the
// same configuration, as an operator could with the NATS API.
func (s *suite) recreateStream(ctx context.Context) (string, error) {
	st, err := s.stream(ctx)
	if err != nil {
		return "", err
	}
	cfg := st.CachedInfo().Config
	cfg.Metadata = nil
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := s.js.DeleteStream(ctx, world.Stream); err != nil {
		return "", err
	}
	cctx, ccancel := context.WithTimeout(ctx, createTimeout)
	_, err = s.js.CreateOrUpdateStream(cctx, cfg)
	ccancel()
	if err == nil {
		return "", nil
	}
	// The leading watcher checks the stream every second or two: when it
	// found it missing first and created it again, the servers may answer
	// neither create. The stream is there all the same.
	s.t.Logf("recreating the stream: %v; waiting for the stream the watcher created", err)
	if err := s.eventually(ctx, "the stream exists again", func(ctx context.Context) error {
		_, err := s.stream(ctx)
		return err
	}); err != nil {
		return "", err
	}
	return "the watcher created it again first", nil
}

// createTimeout bounds the fault's own create of the stream.
const createTimeout = 5 * time.Second

// killNginx SIGKILLs the master of the first syncer's nginx.
func (s *suite) killNginx(_ context.Context) (string, error) {
	sy := s.w.Syncers[0]
	np, err := sy.Nginx()
	if err != nil {
		return "", err
	}
	s.nginxMaster = np.Master
	return fmt.Sprintf("%s's nginx master killed", sy.Name), syscall.Kill(np.Master, syscall.SIGKILL)
}

// nginxBack: the syncer runs a new nginx master that answers its status
// endpoint.
func (s *suite) nginxBack(ctx context.Context) error {
	sy := s.w.Syncers[0]
	np, err := sy.Nginx()
	if err != nil {
		return err
	}
	if np.Master == s.nginxMaster {
		return fmt.Errorf("%s: nginx master %d is the killed one", sy.Name, np.Master)
	}
	_, err = sy.NginxVersion(ctx)
	return err
}
