package stream_test

import (
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/stream"
)

// TestStreamStateStale: a stream is stale only when it holds a message
// stored before the stream was created.
func TestStreamStateStale(t *testing.T) {
	created := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	tests := map[string]struct {
		st   stream.StreamState
		want bool
	}{
		"empty":                       {st: stream.StreamState{Created: created}},
		"messages after its creation": {st: stream.StreamState{Created: created, Msgs: 3, LastSeq: 3, FirstTime: created.Add(time.Millisecond)}},
		"messages of a deleted stream": {st: stream.StreamState{Created: created, Msgs: 3, LastSeq: 3, FirstTime: created.Add(-time.Second)},
			want: true},
		"no first time reported": {st: stream.StreamState{Created: created, Msgs: 1, LastSeq: 1}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := tc.st.Stale(); got != tc.want {
				t.Errorf("Stale() = %v, want %v", got, tc.want)
			}
		})
	}
}
