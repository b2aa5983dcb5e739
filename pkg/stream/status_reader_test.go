package stream_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
	"github.com/ingress-sync/ingress-sync/test/testkit/natstest"
)

// TestLastStatuses: the last report of every syncer, from the status
// stream on a real nats-server; a malformed report is skipped and counted.
func TestLastStatuses(t *testing.T) {
	_, url := natstest.Start(t)
	_, js := natstest.Connect(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := stream.Ensure(ctx, js, stream.Config{Name: "INGRESS", SubjectPrefix: "ingress"}); err != nil {
		t.Fatal(err)
	}
	if got, skipped, err := stream.LastStatuses(ctx, js, "INGRESS", "ingress"); err != nil || len(got) != 0 || skipped != 0 {
		t.Fatalf("empty stream: %v, %d skipped, %v", got, skipped, err)
	}
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for i, st := range []events.SyncerStatus{
		{Pod: "syncer-a", Checksum: "old", Sequence: 3, Time: t0},
		{Pod: "syncer.b", Checksum: "new", Sequence: 9, Time: t0.Add(time.Second)},
		{Pod: "syncer-a", Checksum: "new", Sequence: 9, Time: t0.Add(2 * time.Second)},
	} {
		data, err := events.EncodeStatus(st)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, events.StatusSubject("ingress", st.Pod), data); err != nil {
			t.Fatalf("report %d: %v", i, err)
		}
	}
	if _, err := js.Publish(ctx, events.StatusSubject("ingress", "broken"), []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	got, skipped, err := stream.LastStatuses(ctx, js, "INGRESS", "ingress")
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b events.SyncerStatus) int { return strings.Compare(a.Pod, b.Pod) })
	if len(got) != 2 || skipped != 1 || got[0].Pod != "syncer-a" || got[0].Sequence != 9 || !got[0].Time.Equal(t0.Add(2*time.Second)) ||
		got[1].Pod != "syncer.b" || got[1].Checksum != "new" {
		t.Errorf("last reports %+v, %d skipped; want syncer-a at 9 and syncer.b, 1 skipped", got, skipped)
	}
}
