package replay

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/test/testkit/fixtures"
	goldenfile "github.com/ingress-sync/ingress-sync/test/testkit/golden"
)

// golden compares got with testdata/<name>.golden (-update rewrites it).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, name, got, "")
}

// fixedTime replaces the stream timestamp of message seq (the server's
// clock) with a fixed one, so that golden files do not change.
func fixedTime(seq uint64) time.Time {
	return fixtures.Epoch.Add(3*time.Hour + 12*time.Minute + time.Duration(seq)*time.Second)
}

func fixSnapshotTimes(s *Snapshot) {
	s.Time = fixedTime(s.Sequence)
	if s.Point.Seq == 0 {
		s.Point.Time = s.Time
	}
}

func fixTimelineTimes(tl *Timeline) {
	for i := range tl.Entries {
		tl.Entries[i].Time = fixedTime(tl.Entries[i].Sequence)
	}
}

func TestGoldenOutput(t *testing.T) {
	r := newRecorder(t, -1)
	seqs := scenario(r)
	rp := r.replayer(testModelOptions())
	ctx := context.Background()

	snap, err := rp.At(ctx, Point{Seq: seqs["tls"]})
	if err != nil {
		t.Fatal(err)
	}
	fixSnapshotTimes(snap)
	var text, js bytes.Buffer
	if err := snap.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := snap.WriteJSON(&js, nil); err != nil {
		t.Fatal(err)
	}
	golden(t, "at.txt", text.Bytes())
	golden(t, "at.json", js.Bytes())

	for _, tc := range []struct {
		name   string
		filter Filter
	}{
		{"timeline", Filter{}},
		{"timeline-host", Filter{Host: "shop.example.com", ChangedOnly: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl, err := rp.Timeline(ctx, Point{}, Point{}, tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			fixTimelineTimes(tl)
			var text, js bytes.Buffer
			if err := tl.WriteText(&text, tc.filter); err != nil {
				t.Fatal(err)
			}
			if err := tl.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name+".txt", text.Bytes())
			golden(t, tc.name+".json", js.Bytes())
		})
	}
}
