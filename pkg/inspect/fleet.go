package inspect

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// DefaultStaleAfter is the default bound on a report's age: syncers report
// every events.DefaultStatusInterval when nothing changes, so three missed
// reports.
const DefaultStaleAfter = 3 * events.DefaultStatusInterval

// Fleet is the state of every syncer that reports on the status stream.
type Fleet struct {
	Stream string `json:"stream"`
	// LastSequence is the last sequence of the event stream: a syncer that
	// has applied it has no lag.
	LastSequence uint64 `json:"lastSequence"`
	// Majority is the checksum more fresh syncers report than any other,
	// and Agree how many of them do; "" when no fresh syncer reports one,
	// or two checksums have the most (then every fresh syncer disagrees).
	Majority   string        `json:"majority"`
	Agree      int           `json:"agree"`
	Fresh      int           `json:"fresh"`
	StaleAfter time.Duration `json:"-"`
	// StaleAfterSeconds is StaleAfter, for JSON.
	StaleAfterSeconds float64   `json:"staleAfterSeconds"`
	Time              time.Time `json:"time"`
	Syncers           []Syncer  `json:"syncers"`
}

// Syncer is one syncer's last report and what it means.
type Syncer struct {
	events.SyncerStatus
	// Lag is how many stream sequences the syncer has not applied yet.
	Lag uint64 `json:"lag"`
	// Age is how long ago it reported; Stale when longer than StaleAfter.
	Age        time.Duration `json:"-"`
	AgeSeconds float64       `json:"ageSeconds"`
	Stale      bool          `json:"stale"`
	// Disagrees: a fresh report of a checksum that is not the majority's.
	Disagrees bool `json:"disagrees"`
}

// NewFleet explains reports against the event stream's last sequence at
// now. Stale reports take no part in the majority.
func NewFleet(stream string, reports []events.SyncerStatus, lastSeq uint64, now time.Time, staleAfter time.Duration) Fleet {
	f := Fleet{Stream: stream, LastSequence: lastSeq, StaleAfter: staleAfter, StaleAfterSeconds: staleAfter.Seconds(), Time: now}
	votes := map[string]int{}
	for _, st := range reports {
		s := Syncer{SyncerStatus: st, Age: now.Sub(st.Time)}
		s.AgeSeconds = s.Age.Round(time.Millisecond).Seconds()
		s.Stale = s.Age > staleAfter
		if lastSeq > st.Sequence {
			s.Lag = lastSeq - st.Sequence
		}
		if !s.Stale && st.Checksum != "" {
			votes[st.Checksum]++
			f.Fresh++
		}
		f.Syncers = append(f.Syncers, s)
	}
	tie := false
	for sum, n := range votes {
		switch {
		case n > f.Agree:
			f.Majority, f.Agree, tie = sum, n, false
		case n == f.Agree:
			tie = true
		}
	}
	if tie { // no checksum has more syncers than every other: no majority
		f.Majority = ""
	}
	for i := range f.Syncers {
		s := &f.Syncers[i]
		s.Disagrees = !s.Stale && s.Checksum != "" && s.Checksum != f.Majority
	}
	slices.SortFunc(f.Syncers, func(a, b Syncer) int { return cmp.Compare(a.Pod, b.Pod) })
	return f
}

// syncersCount is "1 syncer" or "N syncers".
func syncersCount(n int) string {
	if n == 1 {
		return "1 syncer"
	}
	return fmt.Sprintf("%d syncers", n)
}

// WriteTable prints the fleet: a summary line, then one row per syncer.
func (f *Fleet) WriteTable(w io.Writer) error {
	switch {
	case f.Fresh == 0:
		fmt.Fprintf(w, "Stream %s at seq %d: %s, none fresh (reports older than %s are stale)\n",
			f.Stream, f.LastSequence, syncersCount(len(f.Syncers)), f.StaleAfter)
	case f.Majority == "":
		fmt.Fprintf(w, "Stream %s at seq %d: %s, %d fresh, no checksum has a majority (reports older than %s are stale)\n",
			f.Stream, f.LastSequence, syncersCount(len(f.Syncers)), f.Fresh, f.StaleAfter)
	default:
		fmt.Fprintf(w, "Stream %s at seq %d: %s, %d of %d fresh on checksum %s (reports older than %s are stale)\n",
			f.Stream, f.LastSequence, syncersCount(len(f.Syncers)), f.Agree, f.Fresh, f.Majority, f.StaleAfter)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POD\tREADY\tCHECKSUM\tSEQUENCE\tLAG\tLAST REPORT\tSTATE\tLAST ERROR")
	for i := range f.Syncers {
		s := &f.Syncers[i]
		fmt.Fprintf(tw, "%s\t%t\t%s\t%d\t%d\t%s (%s ago)\t%s\t%s\n", s.Pod, s.Ready, orDash(s.Checksum), s.Sequence, s.Lag,
			s.Time.UTC().Format(time.RFC3339), s.Age.Round(time.Second), s.state(), orDash(oneLine(s.LastError)))
	}
	return tw.Flush()
}

// state says what is wrong with a syncer, "ok" when nothing.
func (s *Syncer) state() string {
	var out []string
	if s.Stale {
		out = append(out, "STALE")
	}
	if s.Disagrees {
		out = append(out, "DISAGREES")
	}
	if !s.Ready || !s.CaughtUp {
		out = append(out, "not ready")
	}
	if len(out) == 0 {
		return "ok"
	}
	return strings.Join(out, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine keeps a table row on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
