package events

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// LastStatuses reads the last report of every syncer from the status
// stream of stream (StatusStreamName), as it was when the call began:
// what `syncer fleet` shows. A report that does not decode is skipped and
// counted in skipped. It is bounded by ctx's deadline, or
// DefaultHeadsTimeout.
func LastStatuses(ctx context.Context, js jetstream.JetStream, stream, prefix string) (reports []SyncerStatus, skipped int, err error) {
	if err := ValidatePrefix(prefix); err != nil {
		return nil, 0, err
	}
	ctx, cancel := bounded(ctx, DefaultHeadsTimeout)
	defer cancel()
	status := StatusStreamName(stream)
	cu, err := newCatchUp(ctx, js, status)
	if err != nil || cu.done {
		return nil, 0, err
	}
	cfg := orderedConfig(StatusPrefix(prefix), 0, false)
	cfg.FilterSubjects = []string{StatusFilter(prefix)}
	r, err := openReader(ctx, js, status, cfg)
	if err != nil {
		return nil, 0, err
	}
	defer r.close()
	last := make(map[string]SyncerStatus)
	err = readCaughtUp(ctx, r, &cu, func(msg jetstream.Msg, _ uint64) {
		st, err := DecodeStatus(msg.Data())
		if err != nil {
			skipped++
			return
		}
		last[msg.Subject()] = st
	})
	if err != nil {
		return nil, 0, fmt.Errorf("events: last reports of %s: %w", status, err)
	}
	for _, st := range last {
		reports = append(reports, st)
	}
	return reports, skipped, nil
}
