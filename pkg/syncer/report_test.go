package syncer

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/model"
	"github.com/ingress-sync/ingress-sync/pkg/syncer/syncertest"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// TestReportListsProblems: the status report lists the Problems of the
// applied configuration, and a fix that builds an equal configuration (a
// rejected annotation is ignored, so removing it changes nothing else)
// still takes the Problem out of the report.
func TestReportListsProblems(t *testing.T) {
	h := start(t, Options{})
	baseObjects(h)
	h.s.CaughtUp(context.Background())
	h.settle()
	if st := h.s.Status(); st.Problems != 0 || len(st.ProblemList) != 0 {
		t.Fatalf("problems before the bad annotation: %+v", st)
	}
	bad := fixtures.Ingress("default", "web", fixtures.Rule("a.example.com", fixtures.Prefix("/", "web", 80)))
	bad.Annotations = map[string]string{ingress.AnnotationPrefix + "proxy-read-timeout": "soon"}
	h.send(events.OpUpdate, bad)
	h.settle()
	st := h.s.Status()
	if st.Problems != 1 || len(st.ProblemList) != 1 {
		t.Fatalf("want one listed problem, status %+v", st)
	}
	if p := st.ProblemList[0]; p.Kind != "Ingress" || p.Namespace != "default" || p.Name != "web" || !strings.Contains(p.Reason, "proxy-read-timeout") {
		t.Fatalf("problem %+v does not name the Ingress and the annotation", p)
	}
	before := len(calls(h.rec))
	h.send(events.OpUpdate, fixtures.Ingress("default", "web", fixtures.Rule("a.example.com", fixtures.Prefix("/", "web", 80))))
	h.settle()
	if st := h.s.Status(); st.Problems != 0 || len(st.ProblemList) != 0 {
		t.Fatalf("the fixed annotation is still reported: %+v", st)
	}
	if n := len(calls(h.rec)); n != before {
		t.Fatalf("the fix was applied (%d calls, had %d): want an equal configuration, skipped", n, before)
	}
}

func TestReportedProblemsAreBounded(t *testing.T) {
	ps := make([]config.Problem, events.MaxReportedProblems+10)
	for i := range ps {
		ps[i] = config.Problem{Kind: "Ingress", Namespace: "ns", Name: "x", Reason: strings.Repeat("é", events.MaxProblemReason)}
	}
	out := reportedProblems(ps)
	if len(out) != events.MaxReportedProblems {
		t.Fatalf("%d problems listed, want %d", len(out), events.MaxReportedProblems)
	}
	for _, p := range out {
		if len(p.Reason) > events.MaxProblemReason || !strings.HasPrefix(p.Reason, "éé") || strings.ContainsRune(p.Reason, '\uFFFD') {
			t.Fatalf("reason of %d bytes not cut at a character boundary within %d", len(p.Reason), events.MaxProblemReason)
		}
	}
}

// TestLastReportOfAStoppingSyncer: once ctx ends, the syncer reports that
// it is no longer ready, with what it applied.
func TestLastReportOfAStoppingSyncer(t *testing.T) {
	reports := make(chan events.SyncerStatus, 100)
	s, err := New(syncertest.New(), Options{Pod: "p", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Model:  model.Options{ControllerClass: "k8s.io/ingress-sync", IngressClass: "nginx"},
		Report: func(_ context.Context, st events.SyncerStatus) error { reports <- st; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	s.CaughtUp(ctx)
	for st := range reports {
		if st.Ready {
			break
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	close(reports)
	var last events.SyncerStatus
	for st := range reports {
		last = st
	}
	if last.Pod != "p" || last.Ready || !last.CaughtUp || last.Checksum == "" {
		t.Fatalf("last report %+v, want p not ready, with its checksum", last)
	}
}
