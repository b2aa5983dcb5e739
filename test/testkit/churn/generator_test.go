package churn

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"

	"github.com/ingress-sync/ingress-sync/internal/certs"
)

// testPool is generated once: certificates come from crypto/rand, so two
// generators are comparable only with the same pool.
var testPool = func() []*certs.Pair {
	p, err := CertificatePool("churn.test", 3)
	if err != nil {
		panic(err)
	}
	return p
}()

func smallSpec() Spec {
	s := DefaultSpec()
	s.Ingresses, s.Namespaces, s.MaxExtraIngresses = 50, 3, 5
	s.EndpointRate, s.IngressRate, s.SecretRate = 100, 20, 5
	s.Duration, s.Events = 0, 2000
	return s
}

// fingerprint is everything a change says, with its event as the stream
// target makes it (fixed resourceVersion and time) in JSON, whose map keys
// are sorted (the msgpack encoding of Secret data is not byte-stable).
func fingerprint(t *testing.T, ch Change) []byte {
	t.Helper()
	data, err := json.Marshal(StreamEvent(ch, "1", time.Unix(0, 0)))
	if err != nil {
		t.Fatalf("marshal change %d: %v", ch.Seq, err)
	}
	return fmt.Appendf(data, "|%d|%s|%d|%s|%v|%s|%d", ch.Seq, ch.At, ch.App, ch.Host, ch.TLS, ch.Added, ch.Class)
}

func sequence(t *testing.T, spec Spec) [][]byte {
	t.Helper()
	g, err := NewGenerator(spec, testPool)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, ch := range g.Setup("k8s.io/ingress-sync") {
		out = append(out, fingerprint(t, ch))
	}
	for ch, ok := g.Next(); ok; ch, ok = g.Next() {
		out = append(out, fingerprint(t, ch))
	}
	return out
}

func TestGeneratorSameSeedSameSequence(t *testing.T) {
	spec := smallSpec()
	a, b := sequence(t, spec), sequence(t, spec)
	if len(a) != len(b) {
		t.Fatalf("two generators with seed %d: %d and %d changes", spec.Seed, len(a), len(b))
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Fatalf("two generators with seed %d differ at change %d:\n%q\n%q", spec.Seed, i, a[i], b[i])
		}
	}
	spec.Seed++
	if c := sequence(t, spec); slices.EqualFunc(a, c, bytes.Equal) {
		t.Fatalf("seeds %d and %d give the same sequence", spec.Seed-1, spec.Seed)
	}
}

func TestScheduleCounts(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		endpoint, ingress, sec float64
		events                 int
		duration               time.Duration
		want                   [numRated]int
	}{
		{"duration bounds every class", 200, 20, 2, 0, 10 * time.Second, [numRated]int{2000, 200, 20}},
		{"fractional rate", 0, 0.5, 0, 0, 10 * time.Second, [numRated]int{0, 5, 0}},
		{"events bound, shared by rate", 300, 100, 0, 1000, 0, [numRated]int{750, 250, 0}},
		{"events before duration", 200, 0, 0, 150, 10 * time.Second, [numRated]int{150, 0, 0}},
		{"duration before events", 200, 0, 0, 5000, 2 * time.Second, [numRated]int{400, 0, 0}},
		{"rate not dividing the second", 3, 0, 0, 0, time.Second, [numRated]int{3, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSchedule(Spec{EndpointRate: tc.endpoint, IngressRate: tc.ingress, SecretRate: tc.sec, Events: tc.events, Duration: tc.duration})
			var got [numRated]int
			var last time.Duration
			for c, at, ok := s.pop(); ok; c, at, ok = s.pop() {
				if at < last {
					t.Fatalf("change due at %s after one due at %s", at, last)
				}
				if tc.duration > 0 && at >= tc.duration {
					t.Fatalf("change due at %s, at or past the duration %s", at, tc.duration)
				}
				last = at
				got[c]++
			}
			if got != tc.want {
				t.Fatalf("counts %v, want %v", got, tc.want)
			}
		})
	}
}

func TestGeneratorKeepsBounds(t *testing.T) {
	spec := smallSpec()
	spec.Events = 5000
	g, err := NewGenerator(spec, testPool)
	if err != nil {
		t.Fatal(err)
	}
	setup := g.Setup("k8s.io/ingress-sync")
	if want := 1 + 5 + 3*spec.Ingresses; len(setup) != want { // class, 1 in 10 Secrets, Service+slice+Ingress
		t.Fatalf("%d setup objects, want %d", len(setup), want)
	}
	eps := map[int][]string{}
	for ch, ok := g.Next(); ok; ch, ok = g.Next() {
		switch o := ch.Object.(type) {
		case *discoveryv1.EndpointSlice:
			checkEndpointChange(t, spec, ch, eps[ch.App], o)
			eps[ch.App] = addresses(o)
		case *networkingv1.Ingress:
			if o.Name[:6] != "extra-" {
				t.Fatalf("churn touched base Ingress %s", o.Name)
			}
		}
		if n := len(g.extras); n > spec.MaxExtraIngresses {
			t.Fatalf("%d extra Ingresses, at most %d allowed", n, spec.MaxExtraIngresses)
		}
	}
}

func checkEndpointChange(t *testing.T, spec Spec, ch Change, before []string, es *discoveryv1.EndpointSlice) {
	t.Helper()
	after := addresses(es)
	if n := len(after); n < spec.MinEndpoints || n > spec.MaxEndpoints {
		t.Fatalf("change %d: %d endpoints, want %d..%d", ch.Seq, n, spec.MinEndpoints, spec.MaxEndpoints)
	}
	if ch.Added != "" && (slices.Contains(before, ch.Added) || !slices.Contains(after, ch.Added)) {
		t.Fatalf("change %d: added %s, before %v, after %v", ch.Seq, ch.Added, before, after)
	}
	if ch.Host != fmt.Sprintf("app-%d.%s", ch.App, spec.Domain) {
		t.Fatalf("change %d: host %s for app %d", ch.Seq, ch.Host, ch.App)
	}
}

func addresses(es *discoveryv1.EndpointSlice) []string {
	var out []string
	for _, e := range es.Endpoints {
		out = append(out, e.Addresses...)
	}
	return out
}

func TestSpecValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Spec)
		ok     bool
	}{
		{"default", func(*Spec) {}, true},
		{"no bound", func(s *Spec) { s.Duration = 0 }, false},
		{"no bound but nothing rated", func(s *Spec) { s.Duration, s.EndpointRate = 0, 0 }, true},
		{"pool too small", func(s *Spec) { s.Addresses = s.Addresses[:4] }, false},
		{"min above max", func(s *Spec) { s.MinEndpoints = 5 }, false},
		{"rotation without TLS", func(s *Spec) { s.SecretRate, s.TLSEvery = 1, 0 }, false},
		{"negative rate", func(s *Spec) { s.IngressRate = -1 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultSpec()
			tc.change(&s)
			if err := s.Validate(); (err == nil) != tc.ok {
				t.Fatalf("Validate() = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

func TestParseAddresses(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		ok   bool
	}{
		{"198.18.0.1-198.18.0.3", []string{"198.18.0.1", "198.18.0.2", "198.18.0.3"}, true},
		{"10.0.0.1, 10.0.0.255-10.0.1.0", []string{"10.0.0.1", "10.0.0.255", "10.0.1.0"}, true},
		{"10.0.0.2-10.0.0.1", nil, false},
		{"::1", nil, false},
		{"nope", nil, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseAddresses(tc.in)
			if (err == nil) != tc.ok || !slices.Equal(got, tc.want) {
				t.Fatalf("ParseAddresses(%q) = %v, %v; want %v (ok %v)", tc.in, got, err, tc.want, tc.ok)
			}
		})
	}
}
