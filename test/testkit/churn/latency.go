package churn

import (
	"math"
	"slices"
	"time"
)

// Latency summarizes latency samples, in milliseconds.
type Latency struct {
	Samples int     `json:"samples"`
	P50     float64 `json:"p50Ms"`
	P90     float64 `json:"p90Ms"`
	P99     float64 `json:"p99Ms"`
	Max     float64 `json:"maxMs"`
}

// Percentile is the nearest-rank p-th percentile (0 < p <= 100) of sorted
// samples: the smallest sample that at least p% of the samples do not
// exceed. It is 0 for no samples.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// Summarize sorts a copy of samples and returns their percentiles.
func Summarize(samples []time.Duration) Latency {
	s := slices.Clone(samples)
	slices.Sort(s)
	l := Latency{Samples: len(s)}
	if len(s) == 0 {
		return l
	}
	l.P50, l.P90, l.P99 = ms(Percentile(s, 50)), ms(Percentile(s, 90)), ms(Percentile(s, 99))
	l.Max = ms(s[len(s)-1])
	return l
}

// ms is d in milliseconds, rounded to microseconds.
func ms(d time.Duration) float64 { return math.Round(float64(d.Microseconds())) / 1000 }
