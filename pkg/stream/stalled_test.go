package stream

import (
	"errors"
	"testing"
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
