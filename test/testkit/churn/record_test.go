package churn

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = i + 1
	}
	for _, tc := range []struct {
		name    string
		samples []time.Duration
		p       float64
		want    time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one", ms(7), 99, 7 * time.Millisecond},
		{"median of odd", ms(1, 2, 3), 50, 2 * time.Millisecond},
		{"median of even is the lower", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p90 of 1..100", ms(hundred...), 90, 90 * time.Millisecond},
		{"p99 of 1..100", ms(hundred...), 99, 99 * time.Millisecond},
		{"p99 of 10 is the max", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond},
		{"p100", ms(1, 5, 9), 100, 9 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Percentile(tc.samples, tc.p); got != tc.want {
				t.Fatalf("Percentile(%v, %g) = %s, want %s", tc.samples, tc.p, got, tc.want)
			}
		})
	}
	got := Summarize(ms(5, 1, 4, 2, 3))
	if want := (Latency{Samples: 5, P50: 3, P90: 5, P99: 5, Max: 5}); got != want {
		t.Fatalf("Summarize = %+v, want %+v (sorted first)", got, want)
	}
}

func TestMatchSequences(t *testing.T) {
	slice := ObjectKey{Kind: events.KindEndpointSlice, Namespace: "a", Name: "s"}
	ing := ObjectKey{Kind: events.KindIngress, Namespace: "a", Name: "i"}
	obs := map[ObjectKey][]obsRec{
		// The watcher coalesced rv 11 and 12 into 12; 13 never showed.
		slice: {{op: events.OpCreate, rv: "5", seq: 100}, {op: events.OpUpdate, rv: "10", seq: 101}, {op: events.OpUpdate, rv: "12", seq: 103}},
		ing:   {{op: events.OpCreate, rv: "x7", seq: 102}, {op: events.OpDelete, rv: "20", seq: 104}},
	}
	writes := []writeRec{
		{key: slice, op: events.OpUpdate, rv: "10"},
		{key: ing, op: events.OpCreate, rv: "x7"}, // not a number: exact match
		{key: slice, op: events.OpUpdate, rv: "11"},
		{key: slice, op: events.OpUpdate, rv: "12"},
		{key: ing, op: events.OpDelete, rv: ""}, // deletes through the API have none
		{key: slice, op: events.OpUpdate, rv: "13"},
		{key: ObjectKey{Kind: events.KindService, Name: "none"}, op: events.OpCreate, rv: "1"},
	}
	want := []uint64{101, 102, 103, 103, 104, 0, 0}
	var got []uint64
	for _, o := range matchSequences(writes, obs) {
		got = append(got, o.seq)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("matchSequences = %v, want %v", got, want)
	}
}

func TestAppliedLatencies(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	r := NewRecorder()
	key := ObjectKey{Kind: events.KindEndpointSlice, Namespace: "a", Name: "s"}
	for i, rv := range []string{"1", "2", "3"} {
		r.writes = append(r.writes, writeRec{key: key, op: events.OpUpdate, rv: rv, t0: at(10 * i)})
		r.Observe(key, events.OpUpdate, rv, uint64(100+i), at(10*i+2))
	}
	// Syncer a applies 100 at 15ms, then 102 at 40ms; b restarts and
	// reports a lower sequence after a higher one, and never gets 102.
	for _, st := range []events.SyncerStatus{
		{Pod: "a", Sequence: 99, Time: at(1)}, {Pod: "a", Sequence: 100, Time: at(15)}, {Pod: "a", Sequence: 102, Time: at(40)},
		{Pod: "b", Sequence: 101, Time: at(30)}, {Pod: "b", Sequence: 50, Time: at(35)},
	} {
		r.Status(st)
	}
	got := r.AppliedLatencies()
	slices.Sort(got.Latencies)
	// a: 100 at 15 (written at 0), 101 at 40 (10), 102 at 40 (20); b: 100
	// and 101 at 30.
	want := []time.Duration{15 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond, 30 * time.Millisecond}
	if !slices.Equal(got.Latencies, want) || got.Unmatched != 0 || got.Unapplied != 1 || !got.Last.Equal(at(40)) {
		t.Fatalf("AppliedLatencies = %+v, want latencies %v, 0 unmatched, 1 unapplied, last at 40ms", got, want)
	}
	if wantStreamed := []time.Duration{2 * time.Millisecond, 2 * time.Millisecond, 2 * time.Millisecond}; !slices.Equal(got.Streamed, wantStreamed) {
		t.Fatalf("streamed latencies %v, want %v", got.Streamed, wantStreamed)
	}
}

func TestParseMetricsAndQuantile(t *testing.T) {
	const before = `# HELP x
ingress_sync_syncer_reloads_total 2
ingress_sync_syncer_events_applied_total{kind="Ingress"} 10
ingress_sync_syncer_events_applied_total{kind="EndpointSlice"} 5
ingress_sync_syncer_event_lag_seconds_bucket{le="0.001"} 1
ingress_sync_syncer_event_lag_seconds_bucket{le="0.002"} 2
ingress_sync_syncer_event_lag_seconds_bucket{le="0.004"} 2
ingress_sync_syncer_event_lag_seconds_bucket{le="+Inf"} 2
`
	const after = `ingress_sync_syncer_reloads_total 3
ingress_sync_syncer_events_applied_total{kind="Ingress"} 10
ingress_sync_syncer_events_applied_total{kind="EndpointSlice"} 105
ingress_sync_syncer_event_lag_seconds_bucket{le="0.001"} 51
ingress_sync_syncer_event_lag_seconds_bucket{le="0.002"} 92
ingress_sync_syncer_event_lag_seconds_bucket{le="0.004"} 101
ingress_sync_syncer_event_lag_seconds_bucket{le="+Inf"} 102
`
	b, err1 := parseMetrics(strings.NewReader(before))
	a, err2 := parseMetrics(strings.NewReader(after))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if d := a.sum(metricEventsApplied) - b.sum(metricEventsApplied); d != 100 {
		t.Fatalf("events applied delta %g, want 100", d)
	}
	if d := a.sum(metricReloads) - b.sum(metricReloads); d != 1 {
		t.Fatalf("reloads delta %g, want 1", d)
	}
	// 100 observations between the scrapes: 50 <= 1ms, 40 <= 2ms, 9 <= 4ms, 1 beyond.
	for _, tc := range []struct {
		q    float64
		want float64
	}{{0.5, 0.001}, {0.9, 0.002}, {0.99, 0.004}, {1, math.Inf(1)}} {
		if got := histogramQuantile(b.buckets(metricEventLag), a.buckets(metricEventLag), tc.q); got != tc.want {
			t.Errorf("quantile %g = %g, want %g", tc.q, got, tc.want)
		}
	}
	if got := histogramQuantile(a.buckets(metricEventLag), a.buckets(metricEventLag), 0.5); !math.IsNaN(got) {
		t.Errorf("quantile of no observations = %g, want NaN", got)
	}
}
