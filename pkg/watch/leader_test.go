package watch_test

import (
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// TestLeaderElection: of two watchers only the Lease holder publishes; when
// it stops, the other takes over and publishes.
func TestLeaderElection(t *testing.T) {
	e := newEnv(t)
	ns := e.ns
	leader, standby := electedPair(t, e)

	e.create(t, service(ns, "one"))
	one := e.waitMessage(t, e.subject(events.KindService, "one"), events.OpCreate)
	if one.Event.WatcherID != leader.id {
		t.Errorf("%s published by %s, want the leader %s", one, one.Event.WatcherID, leader.id)
	}
	if n := standby.metric(t, "ingress_sync_watcher_events_published_total"); n != 0 {
		t.Errorf("standby %s published %v events", standby.id, n)
	}
	for _, m := range e.messages(t) {
		if m.Event.WatcherID != leader.id {
			t.Errorf("%s not published by the leader %s", m, leader.id)
		}
	}

	leader.stop(t)
	eventually(t, "the standby taking over", func() bool { return standby.leads(t) })
	e.create(t, service(ns, "two"))
	two := e.waitMessage(t, e.subject(events.KindService, "two"), events.OpCreate)
	if two.Event.WatcherID != standby.id {
		t.Errorf("%s published by %s, want the new leader %s", two, two.Event.WatcherID, standby.id)
	}
	if msgs := on(e.messages(t), e.subject(events.KindService, "one")); len(msgs) != 1 {
		t.Errorf("the new leader published the unchanged Service again: %v", msgs)
	}
}

// electedPair starts two watchers with leader election (short leases) and
// returns them once one leads.
func electedPair(t *testing.T, e *env) (leader, standby *runningWatcher) {
	t.Helper()
	elected := func(id string) *runningWatcher {
		cfg := e.config(id)
		cfg.LeaderElect, cfg.ElectionNamespace, cfg.ElectionID = true, e.ns, "ingress-sync-watcher"
		cfg.LeaseDuration, cfg.RenewDeadline, cfg.RetryPeriod = 2*time.Second, 1500*time.Millisecond, 500*time.Millisecond
		return start(t, cfg)
	}
	a, b := elected("watcher-a"), elected("watcher-b")
	eventually(t, "a leader", func() bool { return a.leads(t) || b.leads(t) })
	leader, standby = a, b
	if b.leads(t) {
		leader, standby = b, a
	}
	if standby.leads(t) {
		t.Fatalf("both watchers lead")
	}
	return leader, standby
}

// leads reports whether the watcher holds the Lease.
func (rw *runningWatcher) leads(t *testing.T) bool {
	return rw.metric(t, "ingress_sync_watcher_leader") == 1
}
