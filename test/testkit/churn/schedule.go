package churn

import (
	"math"
	"time"
)

// Class is the kind of change a churn event makes.
type Class int

// The classes of change, in the order ties are broken.
const (
	ClassEndpoints Class = iota // scale a Service's endpoints or replace one
	ClassIngress                // create, update or delete an extra Ingress
	ClassSecret                 // rotate a TLS Secret
	ClassSetup                  // an object of the initial cluster
	numRated       = 3
)

func (c Class) String() string {
	switch c {
	case ClassEndpoints:
		return "endpoints"
	case ClassIngress:
		return "ingress"
	case ClassSecret:
		return "secret"
	case ClassSetup:
		return "setup"
	}
	return "unknown"
}

// schedule merges the rated classes into one sequence: the k-th change of
// a class of rate r is due at k/r after the start, ties go to the lower
// class. It stops after limit changes or at the first one due at or after
// until (0: no such bound), so the count of each class depends only on the
// rates and bounds, never on the clock.
type schedule struct {
	rates   [numRated]float64
	next    [numRated]int
	limit   int
	until   time.Duration
	emitted int
}

func newSchedule(s Spec) *schedule {
	return &schedule{
		rates: [numRated]float64{s.EndpointRate, s.IngressRate, s.SecretRate},
		limit: s.Events, until: s.Duration,
	}
}

// due is the offset of the k-th change of rate r.
func due(k int, r float64) time.Duration {
	return time.Duration(math.Round(float64(k) * float64(time.Second) / r))
}

// pop returns the class and due offset of the next change.
func (s *schedule) pop() (Class, time.Duration, bool) {
	if s.limit > 0 && s.emitted >= s.limit {
		return 0, 0, false
	}
	best, at := -1, time.Duration(math.MaxInt64)
	for c, r := range s.rates {
		if r <= 0 {
			continue
		}
		if d := due(s.next[c], r); d < at {
			best, at = c, d
		}
	}
	if best < 0 || (s.until > 0 && at >= s.until) {
		return 0, 0, false
	}
	s.next[best]++
	s.emitted++
	return Class(best), at, true
}
