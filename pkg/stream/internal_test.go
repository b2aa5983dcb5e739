package stream

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		attempt int
		want    time.Duration
	}{
		{1, 100 * time.Millisecond}, {2, 200 * time.Millisecond}, {4, 800 * time.Millisecond},
		{7, time.Second}, {1000, time.Second},
	} {
		if got := backoff(tc.attempt, 100*time.Millisecond, time.Second, nil); got != tc.want {
			t.Errorf("backoff(%d) = %s, want %s", tc.attempt, got, tc.want)
		}
	}
	most := func(n int64) int64 { return n }
	if got := backoff(1, 100*time.Millisecond, time.Second, most); got != 80*time.Millisecond {
		t.Errorf("backoff with full jitter = %s, want 80ms", got)
	}
}
