package syncer

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"context"
	"errors"
	"reflect"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
)

// observed is one apply as Options.Observe saw it.
type observed struct {
	checksum string
	reload   bool
	failed   bool
}

// TestDecisionIsMadeOnce: the loop alone decides what changed. The
// Applier below it (syncertest's, which cannot diff) is given, for every
// build that differs from the running Configuration, exactly
// config.Diff(running, next); an equal build never reaches it; a failed
// apply leaves the running Configuration, so its retry is given the same
// Change. Observe sees every apply, the first one as a reload.
func TestDecisionIsMadeOnce(t *testing.T) {
	var mu sync.Mutex
	var seen []observed
	h := start(t, Options{Observe: func(next *config.Configuration, reload bool, err error) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, observed{next.Checksum, reload, err != nil})
	}})
	labelled := fixtures.Service("default", "web", 80)
	labelled.Labels = map[string]string{"team": "a"}
	steps := []struct {
		name    string
		send    []runtime.Object // nil: CaughtUp, the bootstrap's end
		fail    bool             // the first Apply of the step fails
		applies int              // Apply calls the step makes
		reload  bool
	}{
		{"first build: everything, as a reload", nil, false, 1, true},
		{"equal build: skipped, never applied", []runtime.Object{labelled}, false, 0, false},
		{"endpoint change", []runtime.Object{fixtures.EndpointSlice("default", "web-1", "web", 8080, "198.18.0.1", "198.18.0.2")}, false, 1, false},
		{"new host", []runtime.Object{fixtures.Ingress("default", "b", fixtures.Rule("b.example.com", fixtures.Prefix("/", "web", 80)))}, false, 1, false},
		{"failed apply and its retry", []runtime.Object{fixtures.Ingress("default", "b", fixtures.Rule("c.example.com", fixtures.Prefix("/", "web", 80)))}, true, 2, false},
		{"global setting", []runtime.Object{globalConfigMap(map[string]string{"worker-processes": "2"})}, false, 1, true},
	}
	baseObjects(h)
	for _, s := range steps {
		before, calls, skipped := h.s.Running(), len(h.rec.Calls()), testutil.ToFloat64(h.s.m.skippedEqual)
		if s.fail {
			h.rec.FailNext(errors.New("nginx -t failed"))
		}
		for _, obj := range s.send {
			h.send(events.OpUpdate, obj)
		}
		if s.send == nil {
			h.s.CaughtUp(context.Background())
		}
		h.settle()
		after, got := h.s.Running(), h.rec.Calls()[calls:]
		if len(got) != s.applies {
			t.Fatalf("%s: %d applies, want %d", s.name, len(got), s.applies)
		}
		if s.applies == 0 && (after.Checksum != before.Checksum || testutil.ToFloat64(h.s.m.skippedEqual) != skipped+1) {
			t.Errorf("%s: running %s → %s, skipped_equal %v → %v", s.name, before.Checksum, after.Checksum,
				skipped, testutil.ToFloat64(h.s.m.skippedEqual))
		}
		want := config.Diff(before, after)
		for i, c := range got {
			if c.Checksum != after.Checksum || !reflect.DeepEqual(c.Change, want) || c.Change.Reload != s.reload {
				t.Errorf("%s: apply %d of %s given %+v, want config.Diff(running, next) = %+v", s.name, i, c.Checksum, c.Change, want)
			}
			if (c.Err != nil) != (s.fail && i == 0) {
				t.Errorf("%s: apply %d error %v", s.name, i, c.Err)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	calls := h.rec.Calls()
	if len(seen) != len(calls) {
		t.Fatalf("Observe saw %d applies, the Applier %d", len(seen), len(calls))
	}
	for i, c := range calls {
		if want := (observed{c.Checksum, c.Change.Reload, c.Err != nil}); seen[i] != want {
			t.Errorf("Observe %d: %+v, want %+v", i, seen[i], want)
		}
	}
}

// TestDecide: nothing runs yet, equal and different Configurations.
func TestDecide(t *testing.T) {
	a := &config.Configuration{Checksum: "a", Servers: []config.Server{{Hostname: "a.example.com"}}}
	b := &config.Configuration{Checksum: "b", Servers: []config.Server{{Hostname: "b.example.com"}}}
	sameAsA := *a
	sameAsA.Problems = []config.Problem{{Kind: "Ingress", Name: "x", Reason: "ignored"}}
	cases := []struct {
		name          string
		running, next *config.Configuration
		changed       bool
	}{
		{"nothing runs: everything, reloaded", nil, a, true},
		{"same checksum, other problems: skipped", a, &sameAsA, false},
		{"another configuration: its Diff", a, b, true},
	}
	for _, tc := range cases {
		ch, changed := decide(tc.running, tc.next)
		want := config.Change{}
		if tc.changed {
			want = config.Diff(tc.running, tc.next)
		}
		if changed != tc.changed || !reflect.DeepEqual(ch, want) {
			t.Errorf("%s: decide = %+v, %v; want %+v, %v", tc.name, ch, changed, want, tc.changed)
		}
	}
}
