package replay

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Point is a position in the stream: a stream sequence, or a time (the
// stream's own timestamp of each message). The zero Point means "not
// given": the start of the stream for a range's beginning, its end
// otherwise.
type Point struct {
	Seq  uint64
	Time time.Time
}

// IsZero reports whether p was not given.
func (p Point) IsZero() bool { return p.Seq == 0 && p.Time.IsZero() }

// String is the sequence ("seq 42") or the time in RFC3339 (UTC).
func (p Point) String() string {
	switch {
	case p.Seq > 0:
		return "seq " + strconv.FormatUint(p.Seq, 10)
	case !p.Time.IsZero():
		return p.Time.UTC().Format(time.RFC3339Nano)
	}
	return "(none)"
}

// ParsePoint reads a stream sequence (a positive integer) or an RFC3339
// time such as 2026-11-01T03:12:00Z (fractions of a second allowed). An
// empty string is the zero Point.
func ParsePoint(s string) (Point, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Point{}, nil
	}
	if isDigits(s) {
		seq, err := strconv.ParseUint(s, 10, 64)
		if err != nil || seq == 0 {
			return Point{}, fmt.Errorf("%w: %q: a stream sequence starts at 1", ErrInvalidPoint, s)
		}
		return Point{Seq: seq}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return Point{}, fmt.Errorf("%w: %q is neither a stream sequence nor an RFC3339 time (like 2026-11-01T03:12:00Z)", ErrInvalidPoint, s)
	}
	return Point{Time: t}, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// includes reports whether the state at p includes the message (seq, t):
// its sequence is at most p's, or it was stored at or before p's time.
func (p Point) includes(seq uint64, t time.Time) bool {
	if p.Seq > 0 {
		return seq <= p.Seq
	}
	return !t.After(p.Time)
}

// MarshalJSON writes the point as ParsePoint reads it: a number for a
// sequence, a string for a time, null when not given.
func (p Point) MarshalJSON() ([]byte, error) {
	switch {
	case p.Seq > 0:
		return strconv.AppendUint(nil, p.Seq, 10), nil
	case !p.Time.IsZero():
		return strconv.AppendQuote(nil, p.Time.UTC().Format(time.RFC3339Nano)), nil
	}
	return []byte("null"), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (p *Point) UnmarshalJSON(b []byte) error {
	s := string(b)
	switch {
	case s == "null":
		*p = Point{}
		return nil
	case strings.HasPrefix(s, `"`):
		unq, err := strconv.Unquote(s)
		if err != nil {
			return fmt.Errorf("%w: %s", ErrInvalidPoint, s)
		}
		t, err := time.Parse(time.RFC3339Nano, unq)
		if err != nil {
			return fmt.Errorf("%w: %s", ErrInvalidPoint, s)
		}
		*p = Point{Time: t}
		return nil
	}
	pt, err := ParsePoint(s)
	if err != nil {
		return err
	}
	*p = pt
	return nil
}
