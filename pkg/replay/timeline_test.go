package replay

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// TestTimelineClassifiesEachChange: the timeline says, for every event,
// whether it changed the Configuration and how: hosts and paths are route
// tables pushed to Lua (dynamic), only the global settings reload, and the
// event behind each reload is named with its reasons.
func TestTimelineClassifiesEachChange(t *testing.T) {
	r := newRecorder(t, -1)
	seqs := scenario(r)
	rp := r.replayer(testModelOptions())
	rp.verify = true
	tl, err := rp.Timeline(context.Background(), Point{}, Point{}, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		event, outcome string
		upserted       []string // hosts whose route table is pushed
		removed        []string // hosts whose route table is removed
	}{
		{"web-ing", "dynamic", []string{"shop.example.com"}, nil},
		{"api-route", "dynamic", []string{"shop.example.com"}, nil},
		{"web-scale-down", "dynamic", nil, nil},
		{"api-down", "dynamic", nil, nil},
		{"tls", "dynamic", []string{"shop.example.com"}, nil},
		{"web-scale-up", "dynamic", nil, nil},
		{"blog-ing", "dynamic", []string{"blog.example.com"}, nil},
		{"api-up", "dynamic", nil, nil},
		{"blog-delete", "dynamic", nil, []string{"blog.example.com"}},
		{"global", "RELOAD", nil, nil},
		{"cm", "no change", nil, nil},
		{"unused-svc", "no change", nil, nil},
	}
	if len(tl.Entries) != len(r.events) || tl.Events != len(r.events) {
		t.Fatalf("%d entries, %d events; want %d", len(tl.Entries), tl.Events, len(r.events))
	}
	for _, tc := range tests {
		t.Run(tc.event, func(t *testing.T) {
			e := &tl.Entries[seqs[tc.event]-1]
			if got := outcome(e); got != tc.outcome {
				t.Errorf("seq %d (%s %s %s): %s, want %s", e.Sequence, e.Op, e.Kind, keyOf(e.Namespace, e.Name), got, tc.outcome)
			}
			if !slices.Equal(e.Diff.RoutesUpserted, tc.upserted) || !slices.Equal(e.Diff.ServersRemoved, tc.removed) {
				t.Errorf("routes upserted %v, removed %v; want %v, %v", e.Diff.RoutesUpserted, e.Diff.ServersRemoved, tc.upserted, tc.removed)
			}
			if e.Reload != slices.Equal(e.ReloadReasons, []string{"global settings changed"}) {
				t.Errorf("reload %v with reasons %q", e.Reload, e.ReloadReasons)
			}
		})
	}
	if tl.Reloads != 1 || tl.Dynamic != 9 || tl.Changes != 10 {
		t.Errorf("counts: %d changes, %d reloads, %d dynamic; want 10, 1, 9", tl.Changes, tl.Reloads, tl.Dynamic)
	}
	if want := r.buildUpTo(uint64(len(r.events)), testModelOptions()).Checksum; tl.Checksum != want {
		t.Errorf("final checksum %s, want %s", tl.Checksum, want)
	}
}

// TestTimelineEndpointGone answers "when did endpoint X disappear and what
// did that do to host Y?".
func TestTimelineEndpointGone(t *testing.T) {
	r := newRecorder(t, -1)
	seqs := scenario(r)
	tl, err := r.replayer(testModelOptions()).Timeline(context.Background(), Point{}, Point{}, Filter{Host: "shop.example.com", ChangedOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var gone, empty *Entry
	for i := range tl.Entries {
		for _, c := range tl.Entries[i].Diff.Endpoints {
			if slices.Contains(c.Removed, "10.0.0.2:8080") {
				gone = &tl.Entries[i]
			}
			if c.Backend == "shop-api-80" && c.Left == 0 {
				empty = &tl.Entries[i]
			}
		}
	}
	if gone == nil || gone.Sequence != seqs["web-scale-down"] || !slices.Equal(gone.Diff.Hosts, []string{"shop.example.com"}) {
		t.Errorf("removal of 10.0.0.2:8080 = %+v; want seq %d touching shop.example.com", gone, seqs["web-scale-down"])
	}
	if empty == nil || empty.Sequence != seqs["api-down"] || empty.Reload {
		t.Errorf("shop-api-80 left without endpoints = %+v; want seq %d, dynamic", empty, seqs["api-down"])
	}
}

func TestTimelineFilter(t *testing.T) {
	r := newRecorder(t, -1)
	seqs := scenario(r)
	rp := r.replayer(testModelOptions())
	tests := []struct {
		name   string
		filter Filter
		want   []string
	}{
		{"namespace", Filter{Namespace: "blog"}, []string{"blog-svc", "blog-slice", "blog-ing", "blog-delete"}},
		{"host and reloads", Filter{Host: "blog.example.com"}, []string{"blog-ing", "blog-delete", "global"}},
		{"host is case-insensitive", Filter{Host: "BLOG.example.com"}, []string{"blog-ing", "blog-delete", "global"}},
		{"namespace or host", Filter{Namespace: "other", Host: "blog.example.com"}, []string{"unused-svc", "unused-slice", "blog-ing", "blog-delete", "global"}},
		{"changes only", Filter{ChangedOnly: true}, []string{"web-ing", "api-route", "web-scale-down", "api-down", "tls", "web-scale-up", "blog-ing", "api-up", "blog-delete", "global"}},
		{"changes in a namespace", Filter{Namespace: "shop", ChangedOnly: true}, []string{"web-ing", "api-route", "web-scale-down", "api-down", "tls", "web-scale-up", "api-up"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl, err := rp.Timeline(context.Background(), Point{}, Point{}, tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			for _, e := range tl.Entries {
				got = append(got, e.Sequence)
			}
			var want []uint64
			for _, n := range tc.want {
				want = append(want, seqs[n])
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("kept %v, want %v (%v)", got, want, tc.want)
			}
			if tl.Events != len(r.events) {
				t.Errorf("Events = %d, want every event of the range (%d)", tl.Events, len(r.events))
			}
		})
	}
}

// TestTimelineRange: events before --from are applied without a timeline
// entry and give the starting Configuration; --to ends the walk.
func TestTimelineRange(t *testing.T) {
	r := newRecorder(t, -1)
	seqs := scenario(r)
	rp := r.replayer(testModelOptions())
	from, to := seqs["api-route"], seqs["tls"]
	check := func(t *testing.T, tl *Timeline) {
		t.Helper()
		if tl.FirstSequence != from || tl.LastSequence != to || tl.Events != int(to-from+1) || len(tl.Entries) != tl.Events {
			t.Errorf("range %d-%d with %d events (%d entries); want %d-%d", tl.FirstSequence, tl.LastSequence, tl.Events, len(tl.Entries), from, to)
		}
		if want := r.buildUpTo(from-1, testModelOptions()).Checksum; tl.Start.Sequence != from-1 || tl.Start.Checksum != want {
			t.Errorf("start: seq %d checksum %s; want seq %d checksum %s", tl.Start.Sequence, tl.Start.Checksum, from-1, want)
		}
		if want := r.buildUpTo(to, testModelOptions()).Checksum; tl.Checksum != want {
			t.Errorf("checksum after the range %s, want %s", tl.Checksum, want)
		}
	}
	t.Run("sequences", func(t *testing.T) {
		tl, err := rp.Timeline(context.Background(), Point{Seq: from}, Point{Seq: to}, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		check(t, tl)
	})
	t.Run("times", func(t *testing.T) {
		fromTime, toTime := r.timeOf(from), r.timeOf(to)
		if r.timeOf(from-1).Equal(fromTime) || r.timeOf(to+1).Equal(toTime) {
			t.Skip("neighbouring messages share a timestamp; the sequence subtest covers the range")
		}
		tl, err := rp.Timeline(context.Background(), Point{Time: fromTime}, Point{Time: toTime}, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		check(t, tl)
	})
}

func TestTimelineErrors(t *testing.T) {
	r := newRecorder(t, -1)
	seqs := scenario(r)
	rp := r.replayer(testModelOptions())
	first, last := r.timeOf(1), r.timeOf(uint64(len(r.events)))
	tests := []struct {
		name     string
		from, to Point
		want     error
	}{
		{"from before the stream starts", Point{Time: first.Add(-time.Minute)}, Point{}, ErrBeforeStream},
		{"from after the last message", Point{Time: last.Add(time.Minute)}, Point{}, ErrBeyondEnd},
		{"to beyond the last sequence", Point{}, Point{Seq: 1000}, ErrBeyondEnd},
		{"to before from", Point{Seq: seqs["tls"]}, Point{Seq: seqs["web-ing"]}, ErrInvalidPoint},
		{"to time before from time", Point{Time: last}, Point{Time: first}, ErrInvalidPoint},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := rp.Timeline(context.Background(), tc.from, tc.to, Filter{}); !errors.Is(err, tc.want) {
				t.Errorf("Timeline = %v; want %v", err, tc.want)
			}
		})
	}
}
