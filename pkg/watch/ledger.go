package watch

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// Reasons of the Kubernetes Events the watcher posts on Ingresses and
// HTTPRoutes (and, for Problems, on ConfigMaps and Gateways).
const (
	// ReasonProblem is the reason of a Warning: one Problem of the build
	// (the message is the Problem's own reason).
	ReasonProblem = "ConfigurationProblem"
	// ReasonSync is the reason of the Normal event posted once a change of
	// the Ingress has been applied by every syncer that reports.
	ReasonSync = "Sync"
)

// objectKey names a namespaced object of a kind the ledger posts Events
// on: a route (an Ingress, an HTTPRoute, a TLSRoute, TCPRoute or
// UDPRoute), a ConfigMap whose entries have
// Problems (the TCP and UDP services), or a Gateway with Problems (a
// listener nginx cannot serve).
type objectKey struct {
	Kind            events.Kind
	Namespace, Name string
}

// problemKinds are the kinds of the reported Problems the ledger posts
// Warnings for; syncKinds those whose changes get a Sync event.
var (
	problemKinds = map[events.Kind]bool{
		events.KindIngress: true, events.KindConfigMap: true, events.KindHTTPRoute: true, events.KindGRPCRoute: true,
		events.KindGateway: true, events.KindTLSRoute: true, events.KindTCPRoute: true, events.KindUDPRoute: true,
	}
	syncKinds = map[events.Kind]bool{events.KindIngress: true, events.KindHTTPRoute: true, events.KindGRPCRoute: true}
)

func ingressKey(namespace, name string) objectKey {
	return objectKey{Kind: events.KindIngress, Namespace: namespace, Name: name}
}

func (k objectKey) String() string { return k.Namespace + "/" + k.Name }

// notice is one Kubernetes Event to post on an object.
type notice struct {
	Object  objectKey
	Warning bool
	Reason  string
	Message string
}

// syncerView is what the ledger keeps of one syncer's last report.
type syncerView struct {
	seq uint64
	at  time.Time // when the report was stored (stream time)
	// problems are the listed Ingress and ConfigMap Problems; listed is false for a
	// report that carries only their count (a syncer older than
	// SyncerStatus.ProblemList).
	problems map[objectKey][]string
	listed   bool
	// unserved are the Ingresses the applied configuration does not serve
	// (events.UnservedIngress), with why.
	unserved map[objectKey]string
}

// ledger decides which Events the syncers' reports call for, so that each
// is posted once per change and not once per syncer and build:
//
//   - A Warning for each Problem of an Ingress that no current syncer
//     reported before: while any of them still reports it, it is not posted
//     again; once none does, it may be posted again when it comes back.
//   - A Normal event once every current syncer has applied the last
//     published change of an Ingress (its stream sequence), with how many
//     they are.
//
// Current syncers are those whose last report is ready and younger than
// staleAfter. Without any, nothing is decided. The ledger also tells the
// status writer how many of them serve an Ingress (serving). A ledger is
// not safe for concurrent use.
type ledger struct {
	staleAfter time.Duration
	syncers    map[string]syncerView
	changed    map[objectKey]uint64          // last published change not yet applied by all
	posted     map[objectKey]map[string]bool // Problems a Warning was posted for, still reported
	dirty      bool                          // reports or changes since the last decision
}

func newLedger(staleAfter time.Duration) *ledger {
	return &ledger{
		staleAfter: staleAfter,
		syncers:    make(map[string]syncerView),
		changed:    make(map[objectKey]uint64),
		posted:     make(map[objectKey]map[string]bool),
	}
}

// report takes a syncer's report, stored at. Reports of syncers that have
// applied nothing yet are ignored: they neither hold Problems nor delay the
// Normal events; a syncer that reports not ready again (it stops) is
// forgotten.
func (l *ledger) report(st events.SyncerStatus, at time.Time) {
	if st.Pod == "" {
		return
	}
	prev, known := l.syncers[st.Pod]
	if known && prev.at.After(at) {
		return
	}
	if !st.Ready {
		if known {
			delete(l.syncers, st.Pod)
			l.dirty = true
		}
		return
	}
	v := syncerView{seq: st.Sequence, at: at, listed: st.Problems == 0 || len(st.ProblemList) > 0}
	for _, p := range st.ProblemList {
		kind := events.Kind(p.Kind)
		if !problemKinds[kind] {
			continue
		}
		if v.problems == nil {
			v.problems = make(map[objectKey][]string)
		}
		k := objectKey{Kind: kind, Namespace: p.Namespace, Name: p.Name}
		v.problems[k] = append(v.problems[k], p.Reason)
	}
	for _, u := range st.Unserved {
		if v.unserved == nil {
			v.unserved = make(map[objectKey]string, len(st.Unserved))
		}
		k := ingressKey(u.Namespace, u.Name)
		if u.Kind != "" {
			k = objectKey{Kind: events.Kind(u.Kind), Namespace: u.Namespace, Name: u.Name}
		}
		v.unserved[k] = u.Why
	}
	l.syncers[st.Pod] = v
	l.dirty = true
}

// changedAt records that a change of route k is at stream sequence seq.
func (l *ledger) changedAt(k objectKey, seq uint64) {
	if seq > l.changed[k] {
		l.changed[k] = seq
		l.dirty = true
	}
}

// deleted forgets route k.
func (l *ledger) deleted(k objectKey) {
	delete(l.changed, k)
	delete(l.posted, k)
}

// due returns the Events to post as of now, Warnings first, in a stable
// order, and marks them posted.
func (l *ledger) due(now time.Time) []notice {
	l.prune(now)
	if !l.dirty || len(l.syncers) == 0 {
		return nil
	}
	l.dirty = false
	current, listed := l.currentProblems()
	var out []notice
	if listed {
		out = l.newProblems(current)
	}
	return append(out, l.applied(current)...)
}

// prune forgets the syncers whose last report is stale as of now, and
// reports whether there were any.
func (l *ledger) prune(now time.Time) bool {
	pruned := false
	for pod, v := range l.syncers {
		if now.Sub(v.at) > l.staleAfter {
			delete(l.syncers, pod)
			l.dirty, pruned = true, true
		}
	}
	return pruned
}

// serving is what the current syncers' reports say of one Ingress
// published at a stream sequence.
type serving struct {
	current int    // current syncers
	served  int    // of them, those that applied the sequence and serve the Ingress
	leftOut int    // those that applied it and do not serve it (events.UnservedIngress)
	why     string // why not, events.UnservedRoutes before events.UnservedCertificate
}

// serving counts, as of now, the current syncers that have applied Ingress
// k at stream sequence seq and serve it, or leave it out. Reports of
// syncers older than SyncerStatus.Unserved serve every Ingress they
// applied.
func (l *ledger) serving(k objectKey, seq uint64, now time.Time) serving {
	var out serving
	for _, v := range l.syncers {
		if now.Sub(v.at) > l.staleAfter {
			continue
		}
		out.current++
		if v.seq < seq {
			continue
		}
		why, left := v.unserved[k]
		if !left {
			out.served++
			continue
		}
		out.leftOut++
		if out.why != events.UnservedRoutes {
			out.why = why
		}
	}
	return out
}

// currentProblems is the union of the Problems the current syncers list;
// listed is false when none of them lists its Problems.
func (l *ledger) currentProblems() (map[objectKey]map[string]bool, bool) {
	union := make(map[objectKey]map[string]bool)
	listed := false
	for _, v := range l.syncers {
		listed = listed || v.listed
		for k, reasons := range v.problems {
			if union[k] == nil {
				union[k] = make(map[string]bool)
			}
			for _, r := range reasons {
				union[k][r] = true
			}
		}
	}
	return union, listed
}

// newProblems returns a Warning for each current Problem not yet posted and
// makes current the posted set.
func (l *ledger) newProblems(current map[objectKey]map[string]bool) []notice {
	var out []notice
	for _, k := range slices.SortedFunc(maps.Keys(current), compareKeys) {
		for _, r := range slices.Sorted(maps.Keys(current[k])) {
			if !l.posted[k][r] {
				out = append(out, notice{Object: k, Warning: true, Reason: ReasonProblem, Message: r})
			}
		}
	}
	l.posted = current
	return out
}

// applied returns a Normal event for each change every current syncer has
// applied, and forgets those changes.
func (l *ledger) applied(current map[objectKey]map[string]bool) []notice {
	lowest := uint64(0)
	first := true
	for _, v := range l.syncers {
		if first || v.seq < lowest {
			lowest, first = v.seq, false
		}
	}
	var out []notice
	for _, k := range slices.SortedFunc(maps.Keys(l.changed), compareKeys) {
		seq := l.changed[k]
		if seq > lowest {
			continue
		}
		delete(l.changed, k)
		out = append(out, notice{Object: k, Reason: ReasonSync, Message: syncMessage(len(l.syncers), seq, len(current[k]))})
	}
	return out
}

// syncMessage is the message of a Normal Sync event.
func syncMessage(syncers int, seq uint64, problems int) string {
	what := "syncers"
	if syncers == 1 {
		what = "syncer"
	}
	msg := fmt.Sprintf("Applied by all %d %s (stream sequence %d)", syncers, what, seq)
	switch problems {
	case 0:
		return msg
	case 1:
		return msg + ", with 1 problem (see the Warning events)"
	default:
		return fmt.Sprintf("%s, with %d problems (see the Warning events)", msg, problems)
	}
}

func compareKeys(a, b objectKey) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}
