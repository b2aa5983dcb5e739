package retry

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

func TestDelay(t *testing.T) {
	for _, tc := range []struct {
		b       Backoff
		attempt int
		want    time.Duration
	}{
		// The watcher's NATS retries.
		{Backoff{Base: 250 * time.Millisecond, Max: 10 * time.Second}, 1, 250 * time.Millisecond},
		{Backoff{Base: 250 * time.Millisecond, Max: 10 * time.Second}, 2, 500 * time.Millisecond},
		{Backoff{Base: 250 * time.Millisecond, Max: 10 * time.Second}, 5, 4 * time.Second},
		{Backoff{Base: 250 * time.Millisecond, Max: 10 * time.Second}, 6, 8 * time.Second},
		{Backoff{Base: 250 * time.Millisecond, Max: 10 * time.Second}, 7, 10 * time.Second},
		{Backoff{Base: 250 * time.Millisecond, Max: 10 * time.Second}, 100, 10 * time.Second},
		// The sync loop: a base above the cap is the cap.
		{Backoff{Base: time.Second, Max: 300 * time.Millisecond}, 1, 300 * time.Millisecond},
		{Backoff{Base: time.Second, Max: time.Second}, 3, time.Second},
		// The reload confirmation poll.
		{Backoff{Base: time.Millisecond, Max: 20 * time.Millisecond}, 5, 16 * time.Millisecond},
		{Backoff{Base: time.Millisecond, Max: 20 * time.Millisecond}, 6, 20 * time.Millisecond},
		{Backoff{Base: time.Millisecond, Max: 20 * time.Millisecond}, 0, time.Millisecond},
		{Backoff{}, 3, 0},
	} {
		if got := tc.b.Delay(tc.attempt); got != tc.want {
			t.Errorf("%+v.Delay(%d) = %s, want %s", tc.b, tc.attempt, got, tc.want)
		}
	}
}

func TestDelayJitter(t *testing.T) {
	var asked []int64
	most := func(n int64) int64 { asked = append(asked, n); return n - 1 }
	b := Backoff{Base: 100 * time.Millisecond, Max: time.Second, Jitter: most}
	if got := b.Delay(1); got != 80*time.Millisecond+1 {
		t.Errorf("Delay(1) with the most jitter = %s, want 80ms and 1ns", got)
	}
	if got := b.Delay(10); got != 800*time.Millisecond+1 {
		t.Errorf("Delay(10) with the most jitter = %s, want 800ms and 1ns", got)
	}
	if want := []int64{int64(20 * time.Millisecond), int64(200 * time.Millisecond)}; !slices.Equal(asked, want) {
		t.Errorf("Jitter asked for %v, want %v (a fifth of each delay)", asked, want)
	}
	if got := (Backoff{Base: 4, Max: 4, Jitter: most}).Delay(1); got != 4 {
		t.Errorf("a delay under 5ns has no jitter: got %s", got)
	}
}

// retryCall is one onRetry call.
type retryCall struct {
	attempt int
	wait    time.Duration
	err     error
}

func TestUntilRetriesUntilSuccess(t *testing.T) {
	errs := []error{errors.New("one"), errors.New("two"), errors.New("three"), nil}
	var calls []retryCall
	tries := 0
	err := Until(t.Context(), Backoff{}, func() error {
		tries++
		return errs[tries-1]
	}, func(attempt int, wait time.Duration, err error) {
		calls = append(calls, retryCall{attempt, wait, err})
	})
	if err != nil || tries != 4 {
		t.Fatalf("Until = %v after %d tries, want nil after 4", err, tries)
	}
	want := []retryCall{{1, 0, errs[0]}, {2, 0, errs[1]}, {3, 0, errs[2]}}
	if !slices.Equal(calls, want) {
		t.Errorf("onRetry calls %v, want %v", calls, want)
	}
}

func TestUntilStopsWhenContextEnds(t *testing.T) {
	hour := Backoff{Base: time.Hour, Max: time.Hour}
	t.Run("during the wait", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		retries := 0
		err := Until(ctx, hour, func() error { return errors.New("down") }, func(int, time.Duration, error) {
			retries++
			cancel() // the wait of an hour must end now
		})
		if !errors.Is(err, context.Canceled) || retries != 1 {
			t.Errorf("Until = %v after %d retries, want context.Canceled after 1", err, retries)
		}
	})
	t.Run("during the try", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		err := Until(ctx, hour, func() error { cancel(); return errors.New("canceled") }, func(int, time.Duration, error) {
			t.Error("a failure after ctx ended was reported as a retry")
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Until = %v, want context.Canceled", err)
		}
	})
	t.Run("nil onRetry", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		tries := 0
		err := Until(ctx, Backoff{}, func() error {
			if tries++; tries == 3 {
				cancel()
			}
			return errors.New("down")
		}, nil)
		if !errors.Is(err, context.Canceled) || tries != 3 {
			t.Errorf("Until = %v after %d tries, want context.Canceled after 3", err, tries)
		}
	})
}

func TestPoll(t *testing.T) {
	calls := 0
	if !Poll(t.Context(), Backoff{}, func() bool { calls++; return calls == 3 }) || calls != 3 {
		t.Errorf("Poll: %d calls, want true after 3", calls)
	}
	ctx, cancel := context.WithCancel(t.Context())
	calls = 0
	if Poll(ctx, Backoff{Base: time.Hour, Max: time.Hour}, func() bool { calls++; cancel(); return false }) || calls != 1 {
		t.Errorf("Poll with ctx done: true or %d calls, want false after 1", calls)
	}
	calls = 0
	if !Poll(ctx, Backoff{}, func() bool { calls++; return true }) || calls != 1 {
		t.Error("Poll with ctx done but the condition met: want true at once")
	}
}

func TestSleep(t *testing.T) {
	if !Sleep(t.Context(), nil, 0) {
		t.Error("Sleep(0) = false, want the whole (empty) wait")
	}
	done := make(chan struct{})
	close(done)
	if Sleep(t.Context(), done, time.Hour) {
		t.Error("Sleep with done closed = true")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if Sleep(ctx, nil, time.Hour) {
		t.Error("Sleep with ctx done = true")
	}
}
