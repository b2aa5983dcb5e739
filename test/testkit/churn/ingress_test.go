package churn

import (
	"errors"
	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

func TestIngressCreatesOnly(t *testing.T) {
	spec := smallSpec()
	spec.EndpointRate, spec.SecretRate, spec.IngressRate = 0, 0, 50
	spec.MaxExtraIngresses, spec.IngressCreatesOnly, spec.Events = 0, true, 30
	g, err := NewGenerator(spec, testPool)
	if err != nil {
		t.Fatal(err)
	}
	hosts := map[string]bool{}
	for ch, ok := g.Next(); ok; ch, ok = g.Next() {
		if ch.Class != ClassIngress || ch.Op != events.OpCreate || !probed(ch) {
			t.Fatalf("change %d: %s %s (probed %v), want a probed Ingress create", ch.Seq, ch.Class, ch.Op, probed(ch))
		}
		if ch.Host == "" || hosts[ch.Host] {
			t.Fatalf("change %d: host %q empty or repeated", ch.Seq, ch.Host)
		}
		hosts[ch.Host] = true
	}
	if len(hosts) != spec.Events {
		t.Fatalf("%d creates, want %d (MaxExtraIngresses does not bound creates only)", len(hosts), spec.Events)
	}
}

func TestIngressChurnNeedsBound(t *testing.T) {
	for _, tc := range []struct {
		name        string
		max         int
		createsOnly bool
		ok          bool
	}{
		{"mixed churn with a bound", 5, false, true},
		{"mixed churn without a bound", 0, false, false},
		{"creates only without a bound", 0, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := smallSpec()
			spec.MaxExtraIngresses, spec.IngressCreatesOnly = tc.max, tc.createsOnly
			err := spec.Validate()
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrInvalidSpec)) {
				t.Fatalf("Validate: %v, want ok %v", err, tc.ok)
			}
		})
	}
}

func TestProbed(t *testing.T) {
	for _, tc := range []struct {
		name string
		ch   Change
		want bool
	}{
		{"endpoint added", Change{Class: ClassEndpoints, Added: "198.18.0.1", Host: "a"}, true},
		{"endpoint added to a TLS host", Change{Class: ClassEndpoints, Added: "198.18.0.1", Host: "a", TLS: true}, false},
		{"scale down", Change{Class: ClassEndpoints, Host: "a"}, false},
		{"Ingress create", Change{Class: ClassIngress, Op: events.OpCreate, Host: "x"}, true},
		{"Ingress update", Change{Class: ClassIngress, Op: events.OpUpdate}, false},
		{"Secret rotation", Change{Class: ClassSecret, Op: events.OpUpdate}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := probed(tc.ch); got != tc.want {
				t.Fatalf("probed = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestProbeCurrent: a probe stops following a change that a later one
// undid: the next endpoint change of the same Service, or the delete of the
// Ingress (or route) it created; other changes leave it current.
func TestProbeCurrent(t *testing.T) {
	ing := func(seq int, op events.Op, name string) Change {
		return Change{Seq: seq, Class: ClassIngress, Op: op, Object: fixtures.Ingress("app", name), App: -1}
	}
	ep := func(seq, app int) Change { return Change{Seq: seq, Class: ClassEndpoints, App: app} }
	for _, tc := range []struct {
		name  string
		ch    Change
		later []Change
		want  bool
	}{
		{"create, nothing after", ing(0, events.OpCreate, "a"), nil, true},
		{"create, then its delete", ing(0, events.OpCreate, "a"), []Change{ing(5, events.OpDelete, "a")}, false},
		{"create, then an update", ing(0, events.OpCreate, "a"), []Change{ing(5, events.OpUpdate, "a")}, true},
		{"create, then another's delete", ing(3, events.OpCreate, "a"), []Change{ing(5, events.OpDelete, "b")}, true},
		{"endpoints, then the same Service's", ep(1, 7), []Change{ep(2, 7)}, false},
		{"endpoints, then another Service's", ep(1, 7), []Change{ep(2, 8)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewProber(ProbeConfig{})
			p.Dispatched(tc.ch)
			for _, l := range tc.later {
				p.Dispatched(l)
			}
			if got := p.current(tc.ch); got != tc.want {
				t.Fatalf("current = %v, want %v", got, tc.want)
			}
		})
	}
}
