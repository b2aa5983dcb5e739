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
