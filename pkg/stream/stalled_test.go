package stream

import (
	"errors"
	"testing"
	"time"
)

var errOther = errors.New("another error")

// A read that stalls is made again, at most stalledReads times; any other
// outcome ends the reads.
func TestReadAgainIfStalled(t *testing.T) {
	for name, tc := range map[string]struct {
		results []error
		calls   int
		want    error
	}{
		"first read succeeds":    {results: []error{nil}, calls: 1},
		"stalled once":           {results: []error{ErrStalled, nil}, calls: 2},
		"another error":          {results: []error{errOther}, calls: 1, want: errOther},
		"stalled every time":     {results: []error{ErrStalled, ErrStalled, ErrStalled, nil}, calls: stalledReads, want: ErrStalled},
		"stalled, then an error": {results: []error{ErrStalled, errOther}, calls: 2, want: errOther},
	} {
		t.Run(name, func(t *testing.T) {
			calls := 0
			err := readAgainIfStalled(func() error {
				calls++
				return tc.results[calls-1]
			})
			if calls != tc.calls || !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Errorf("calls %d, err %v; want %d, %v", calls, err, tc.calls, tc.want)
			}
		})
	}
}

// TestStreamCheckConfirmsAQuietInterval: an interval without a message is
// followed by one short interval (stallGrace) before the reader may be
// called stalled, once; an interval with a message needs none.
func TestStreamCheckConfirmsAQuietInterval(t *testing.T) {
	ctx := t.Context()
	s := streamCheck{every: time.Hour}
	s.reset(ctx)
	defer s.stop()
	if s.due() {
		t.Fatal("due at the start of an interval of an hour")
	}
	ended := func() { s.next = time.Now().Add(-time.Millisecond) }
	ended()
	if !s.due() || !s.confirm(ctx) {
		t.Fatal("an interval without a message is not confirmed")
	}
	if d, ok := s.wctx.Deadline(); !ok || time.Until(d) > stallGrace {
		t.Fatalf("the reads of the confirmation wait until %v, want within %s", d, stallGrace)
	}
	ended()
	if s.confirm(ctx) {
		t.Fatal("confirmed twice: a stalled reader would never be found")
	}
	s.reset(ctx)
	s.progressed = true
	ended()
	if s.confirm(ctx) {
		t.Fatal("an interval with a message is confirmed")
	}
}

// TestStreamCheckIdle: a bootstrap reader asks the server after its
// first wait until its first message, after idlePoll from then on.
func TestStreamCheckIdle(t *testing.T) {
	tests := []struct {
		name  string
		check streamCheck
		want  time.Duration
	}{
		{"before the first message", streamCheck{first: firstIdle}, firstIdle},
		{"after stalls", streamCheck{first: 4 * firstIdle}, 4 * firstIdle},
		{"after the first message", streamCheck{first: firstIdle, delivered: true}, idlePoll},
		{"no first wait", streamCheck{}, idlePoll},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.check.idle(); got != tc.want {
				t.Errorf("idle() = %s, want %s", got, tc.want)
			}
		})
	}
}
