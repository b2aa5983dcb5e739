package stream

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// LastStatuses reads the last report of every syncer from the status
// stream of stream (StatusStreamName), as it was when the call began:
// what `syncer fleet` shows. A report that does not decode is skipped and
// counted in skipped. It is bounded by ctx's deadline, or
// DefaultHeadsTimeout.
func LastStatuses(ctx context.Context, js jetstream.JetStream, stream, prefix string) (reports []events.SyncerStatus, skipped int, err error) {
	if err := events.ValidatePrefix(prefix); err != nil {
		return nil, 0, err
	}
	ctx, cancel := bounded(ctx, DefaultHeadsTimeout)
	defer cancel()
	err = readAgainIfStalled(func() (err error) {
		reports, skipped, err = lastStatuses(ctx, js, StatusStreamName(stream), prefix)
		return err
	})
	return reports, skipped, err
}

// lastStatuses is one read of LastStatuses.
func lastStatuses(ctx context.Context, js jetstream.JetStream, status, prefix string) (reports []events.SyncerStatus, skipped int, err error) {
	cu, err := newCatchUp(ctx, js, status)
	if err != nil || cu.done {
		return nil, 0, err
	}
	r, err := openReader(ctx, js, status, ReadOptions{Filter: events.StatusFilter(prefix)})
	if err != nil {
		return nil, 0, err
	}
	defer r.close()
	last := make(map[string]events.SyncerStatus)
	err = readCaughtUp(ctx, r, &cu, func(m Message) {
		st, err := events.DecodeStatus(m.Data)
		if err != nil {
			skipped++
			return
		}
		last[m.Subject] = st
	})
	if err != nil {
		return nil, 0, fmt.Errorf("stream: last reports of %s: %w", status, err)
	}
	for _, st := range last {
		reports = append(reports, st)
	}
	return reports, skipped, nil
}
