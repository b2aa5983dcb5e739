package watch

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

var (
	t0  = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	web = ingressKey("shop", "web")
	api = ingressKey("shop", "api")
)

// rep is a ready report of pod at seq listing the Problems of web.
func rep(pod string, seq uint64, reasons ...string) events.SyncerStatus {
	st := events.SyncerStatus{Pod: pod, Ready: true, CaughtUp: true, Sequence: seq, Problems: len(reasons)}
	for _, r := range reasons {
		st.ProblemList = append(st.ProblemList, events.ReportedProblem{Kind: "Ingress", Namespace: web.Namespace, Name: web.Name, Reason: r})
	}
	return st
}

// step is one input of the ledger, then what due says at its time.
type step struct {
	at     time.Duration // after t0
	report *events.SyncerStatus
	change *uint64 // a published change of web at this sequence
	want   []string
}

func seq(n uint64) *uint64                               { return &n }
func report(st events.SyncerStatus) *events.SyncerStatus { return &st }

func describe(ns []notice) []string {
	var out []string
	for _, n := range ns {
		kind := "Normal"
		if n.Warning {
			kind = "Warning"
		}
		out = append(out, fmt.Sprintf("%s %s %s: %s", kind, n.Object, n.Reason, n.Message))
	}
	return out
}

func TestLedger(t *testing.T) {
	const bad = "annotation proxy-read-timeout=\"soon\": not a number of seconds; ignored"
	warn := "Warning shop/web ConfigurationProblem: " + bad
	synced := func(n int, s uint64, problems string) string {
		what := map[bool]string{true: "syncer", false: "syncers"}[n == 1]
		return fmt.Sprintf("Normal shop/web Sync: Applied by all %d %s (stream sequence %d)%s", n, what, s, problems)
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"a Problem is posted once, whoever reports it", []step{
			{report: report(rep("a", 5, bad)), want: []string{warn}},
			{report: report(rep("b", 5, bad))},
			{report: report(rep("a", 6, bad))},
		}},
		{"a fixed Problem that comes back is posted again", []step{
			{report: report(rep("a", 5, bad)), want: []string{warn}},
			{report: report(rep("a", 6))},
			{report: report(rep("a", 7, bad)), want: []string{warn}},
		}},
		{"a Problem still held by a lagging syncer is not new", []step{
			{report: report(rep("a", 5, bad)), want: []string{warn}},
			{report: report(rep("b", 5, bad))},
			{report: report(rep("a", 6))},
			{report: report(rep("a", 7, bad))},
		}},
		{"a change is announced once all syncers applied it", []step{
			{report: report(rep("a", 4))},
			{report: report(rep("b", 4))},
			{change: seq(5)},
			{report: report(rep("a", 5))},
			{report: report(rep("b", 6)), want: []string{synced(2, 5, "")}},
			{report: report(rep("b", 7))},
		}},
		{"the Sync event counts the Problems", []step{
			{report: report(rep("a", 4))},
			{change: seq(5)},
			{report: report(rep("a", 5, bad)), want: []string{warn, synced(1, 5, ", with 1 problem (see the Warning events)")}},
		}},
		{"a change acked after the report covering it", []step{
			{report: report(rep("a", 9))},
			{change: seq(8), want: []string{synced(1, 8, "")}},
		}},
		{"only the latest change counts", []step{
			{report: report(rep("a", 4))},
			{change: seq(5)},
			{change: seq(6)},
			{report: report(rep("a", 5))},
			{report: report(rep("a", 6)), want: []string{synced(1, 6, "")}},
		}},
		{"a stale syncer stops delaying the Sync event", []step{
			{report: report(rep("a", 4))},
			{report: report(rep("b", 4))},
			{change: seq(5)},
			{at: time.Minute, report: report(rep("a", 5))},
			{at: DefaultReportStaleAfter - time.Second},
			{at: DefaultReportStaleAfter + time.Second, want: []string{synced(1, 5, "")}},
		}},
		{"a syncer that applied nothing yet is not waited for", []step{
			{report: report(rep("a", 5))},
			{report: report(events.SyncerStatus{Pod: "new", Sequence: 1})},
			{change: seq(5), want: []string{synced(1, 5, "")}},
		}},
		{"no syncer: nothing is decided", []step{
			{change: seq(5)},
			{report: report(events.SyncerStatus{Pod: "starting"})},
		}},
		{"a report without the list keeps what was posted", []step{
			{report: report(rep("a", 5, bad)), want: []string{warn}},
			{report: report(events.SyncerStatus{Pod: "a", Ready: true, Sequence: 6, Problems: 1})},
			{report: report(rep("a", 7, bad))},
		}},
		{"an older report of a syncer is ignored", []step{
			{at: time.Second, report: report(rep("a", 6))},
			{at: 0, report: report(rep("a", 5, bad))},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newLedger(DefaultReportStaleAfter)
			for i, s := range tc.steps {
				at := t0.Add(s.at)
				if s.report != nil {
					l.report(*s.report, at)
				}
				if s.change != nil {
					l.changedAt(web, *s.change)
				}
				if got := describe(l.due(at)); !slices.Equal(got, s.want) {
					t.Fatalf("step %d: got %q, want %q", i, got, s.want)
				}
			}
		})
	}
}

// TestLedgerHundredReports: 100 reports of one Problem, by two syncers,
// give one Warning.
func TestLedgerHundredReports(t *testing.T) {
	l := newLedger(DefaultReportStaleAfter)
	var posted []notice
	for i := range 100 {
		pod := []string{"a", "b"}[i%2]
		l.report(rep(pod, uint64(10+i), "host x: conflicts with Ingress shop/old, which is older and is used"), t0.Add(time.Duration(i)*time.Second))
		posted = append(posted, l.due(t0.Add(time.Duration(i)*time.Second))...)
	}
	if len(posted) != 1 || !posted[0].Warning {
		t.Fatalf("100 reports posted %q, want one Warning", describe(posted))
	}
}

// TestLedgerDeleted: a deleted Ingress's pending change is forgotten.
func TestLedgerDeleted(t *testing.T) {
	l := newLedger(DefaultReportStaleAfter)
	l.changedAt(api, 3)
	l.deleted(api)
	l.report(rep("a", 3), t0)
	if got := l.due(t0); len(got) != 0 {
		t.Fatalf("deleted Ingress got %q", describe(got))
	}
}

// TestLedgerServing: how many current syncers serve an Ingress at its
// published sequence, and how many applied it and leave it out.
func TestLedgerServing(t *testing.T) {
	unserved := func(st events.SyncerStatus, why string) events.SyncerStatus {
		st.Unserved = []events.UnservedIngress{{Namespace: web.Namespace, Name: web.Name, Why: why}}
		return st
	}
	l := newLedger(DefaultReportStaleAfter)
	if got := l.serving(web, 5, t0); got != (serving{}) {
		t.Fatalf("no syncer: %+v", got)
	}
	l.report(rep("a", 5), t0)
	l.report(rep("b", 4), t0)
	l.report(events.SyncerStatus{Pod: "starting", Sequence: 9}, t0)
	if got := l.serving(web, 5, t0); got != (serving{current: 2, served: 1}) {
		t.Fatalf("a applied, b behind: %+v", got)
	}
	l.report(unserved(rep("b", 6), events.UnservedCertificate), t0)
	l.report(unserved(rep("c", 6), events.UnservedRoutes), t0)
	if got := l.serving(web, 5, t0); got != (serving{current: 3, served: 1, leftOut: 2, why: events.UnservedRoutes}) {
		t.Fatalf("b and c leave it out: %+v", got)
	}
	if got := l.serving(api, 5, t0); got != (serving{current: 3, served: 3}) {
		t.Fatalf("another Ingress: %+v", got)
	}
	l.report(events.SyncerStatus{Pod: "c", Sequence: 6}, t0.Add(time.Second)) // c stops
	if got := l.serving(web, 5, t0.Add(time.Second)); got != (serving{current: 2, served: 1, leftOut: 1, why: events.UnservedCertificate}) {
		t.Fatalf("c stopped: %+v", got)
	}
	later := t0.Add(DefaultReportStaleAfter + time.Second)
	l.report(rep("a", 7), later)
	if got := l.serving(web, 5, later); got != (serving{current: 1, served: 1}) {
		t.Fatalf("b stale: %+v", got)
	}
}

func TestStatusRuleNeeded(t *testing.T) {
	for _, tc := range []struct {
		rule    StatusRule
		current int
		want    int
	}{
		{StatusAll, 0, 1}, {StatusAll, 3, 3}, {StatusQuorum, 1, 1}, {StatusQuorum, 2, 2}, {StatusQuorum, 3, 2},
		{StatusQuorum, 4, 3}, {StatusOne, 0, 1}, {StatusOne, 5, 1},
	} {
		if got := tc.rule.needed(tc.current); got != tc.want {
			t.Errorf("%s of %d: %d, want %d", tc.rule, tc.current, got, tc.want)
		}
	}
}
