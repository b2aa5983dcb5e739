package watch

import (
	"fmt"
	"time"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// StatusRule says how many of the syncers that report must serve an
// Ingress before the watcher writes its status address.
type StatusRule string

// The rules of Config.StatusSyncers (--status-syncers).
const (
	// StatusAll waits for every syncer whose last report is ready and
	// younger than Config.ReportStaleAfter: the Service in front of the
	// syncers sends the first requests to any of them.
	StatusAll StatusRule = "all"
	// StatusQuorum waits for more than half of them.
	StatusQuorum StatusRule = "quorum"
	// StatusOne waits for one.
	StatusOne StatusRule = "one"
)

// ReasonAddressUnconfirmed is the reason of the Warning posted on an
// Ingress whose status address was written after Config.StatusMaxWait,
// without enough syncers serving it.
const ReasonAddressUnconfirmed = "AddressUnconfirmed"

func (r StatusRule) valid() bool { return r == StatusAll || r == StatusQuorum || r == StatusOne }

// needed is how many of current syncers the rule waits for (at least one).
func (r StatusRule) needed(current int) int {
	switch r {
	case StatusOne:
		return 1
	case StatusQuorum:
		return current/2 + 1
	}
	return max(current, 1)
}

// statusWait is an Ingress whose address waits for the syncers.
type statusWait struct {
	// since is when the syncers began to be waited for: the Ingress was
	// published and no syncer that applied it reports it not served. Zero
	// while one does (that wait has no bound).
	since  time.Time
	logged string // the last state logged, to log each change once
}

// confirmed decides whether the status address of ing, an Ingress of our
// class, may be written now: once enough syncers serve the Ingress at the
// version the term published (Config.StatusSyncers), or once the syncers
// were waited for StatusMaxWait; warning is then the message of the
// Warning Event to post, "" when confirmed.
func (s *statusWriter) confirmed(cacheKey string, ing *networkingv1.Ingress) (ok bool, warning string) {
	seq := s.t.publishedAt(key{Kind: events.KindIngress, Namespace: ing.Namespace, Name: ing.Name}, ing)
	var v serving
	if seq > 0 && s.t.events != nil {
		v = s.t.events.serving(ingressKey(ing.Namespace, ing.Name), seq)
	}
	rule := s.w.cfg.StatusSyncers
	need := rule.needed(v.current)
	if seq > 0 && v.served >= need {
		return true, ""
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	wt := s.waiting[cacheKey]
	switch {
	case v.leftOut > 0:
		wt.since = time.Time{}
	case wt.since.IsZero() && seq > 0:
		wt.since = now
		s.queue.AddAfter(cacheKey, s.w.cfg.StatusMaxWait)
	}
	state := fmt.Sprintf("seq=%d served=%d leftOut=%d current=%d", seq, v.served, v.leftOut, v.current)
	if state != wt.logged {
		wt.logged = state
		s.w.log.Debug("ingress status address waits for the syncers", "namespace", ing.Namespace, "name", ing.Name,
			"sequence", seq, "served", v.served, "leftOut", v.leftOut, "why", v.why, "current", v.current,
			"needed", need, "rule", rule, "waitingSince", wt.since)
	}
	s.waiting[cacheKey] = wt
	s.w.metrics.statusWaiting.Set(float64(len(s.waiting)))
	if wt.since.IsZero() || now.Sub(wt.since) < s.w.cfg.StatusMaxWait {
		return false, ""
	}
	return true, unconfirmedMessage(s.w.cfg, seq, v, need)
}

// unconfirmedMessage is the message of the Warning posted when the
// address is written after the wait.
func unconfirmedMessage(cfg Config, seq uint64, v serving, need int) string {
	if v.current == 0 {
		return fmt.Sprintf("Status address written after waiting %s: no syncer reported in the last %s",
			cfg.StatusMaxWait, cfg.ReportStaleAfter)
	}
	return fmt.Sprintf("Status address written after waiting %s: %d of %d syncers serve this Ingress "+
		"(stream sequence %d), --status-syncers=%s waits for %d", cfg.StatusMaxWait, v.served, v.current, seq,
		cfg.StatusSyncers, need)
}

// settled forgets the wait of an Ingress whose status needs nothing more.
func (s *statusWriter) settled(cacheKey string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.waiting[cacheKey]; ok {
		delete(s.waiting, cacheKey)
		s.w.metrics.statusWaiting.Set(float64(len(s.waiting)))
	}
}

// recheck queues the Ingresses whose address waits for the syncers, after
// a report.
func (s *statusWriter) recheck() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.waiting {
		s.queue.Add(k)
	}
}
