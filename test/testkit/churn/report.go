package churn

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is the outcome of one Run.
type Report struct {
	Target    string          `json:"target"`
	Seed      uint64          `json:"seed"`
	Ingresses int             `json:"ingresses"`
	Start     time.Time       `json:"start"`
	Setup     SetupReport     `json:"setup"`
	Events    EventReport     `json:"events"`
	Streamed  Latency         `json:"streamed"` // write → stored in the stream
	Applied   AppliedReport   `json:"applied"`
	Served    Latency         `json:"served"`
	Probes    ProbeReport     `json:"probes"`
	Syncers   []SyncerReport  `json:"syncers"`
	Stream    StreamReport    `json:"stream"`
	Processes []ProcessReport `json:"processes"`
}

// SetupReport is the initial cluster: how many objects, how long writing
// them took, and how long until the syncers had applied them.
type SetupReport struct {
	Objects       int     `json:"objects"`
	Seconds       float64 `json:"seconds"`
	SettleSeconds float64 `json:"settleSeconds"`
}

// EventReport counts the churn's writes. TargetRate is what the Spec asks
// for, OfferedRate what was dispatched per second, AchievedRate what was
// written (acknowledged by the API or the stream) per second.
type EventReport struct {
	ByClass      map[string]int `json:"byClass"`
	Offered      int64          `json:"offered"`
	Completed    int64          `json:"completed"`
	Failed       int64          `json:"failed"`
	Seconds      float64        `json:"seconds"`
	TargetRate   float64        `json:"targetRate"`
	OfferedRate  float64        `json:"offeredRate"`
	AchievedRate float64        `json:"achievedRate"`
	FirstError   string         `json:"firstError,omitempty"`
}

// AppliedReport is the latency from a write to each syncer applying it,
// and the rate at which the syncers applied the churn: completed writes
// over the time from the start of the churn until the last was applied
// everywhere.
type AppliedReport struct {
	Latency
	Unmatched int     `json:"unmatched"` // writes never seen on the stream
	Unapplied int     `json:"unapplied"` // (write, syncer) pairs not applied by the end
	Seconds   float64 `json:"seconds"`
	Rate      float64 `json:"rate"`
}

// SyncerReport is one syncer over the churn: counter deltas from its
// metrics (or from its status reports when no metrics URL is known).
type SyncerReport struct {
	Pod            string   `json:"pod"`
	Source         string   `json:"source"` // "metrics" or "status"
	Reloads        float64  `json:"reloads"`
	DynamicUpdates float64  `json:"dynamicUpdates"`
	Builds         float64  `json:"builds,omitempty"`
	SkippedEqual   float64  `json:"skippedEqual,omitempty"`
	EventsApplied  float64  `json:"eventsApplied,omitempty"`
	ApplyErrors    float64  `json:"applyErrors"`
	DecodeErrors   float64  `json:"decodeErrors"`
	LastSequence   uint64   `json:"lastSequence"`
	EventLagP50Ms  *float64 `json:"eventLagP50Ms,omitempty"` // histogram bucket bound
	EventLagP99Ms  *float64 `json:"eventLagP99Ms,omitempty"`
	BuildP50Ms     *float64 `json:"buildP50Ms,omitempty"` // histogram bucket bound
	BuildP99Ms     *float64 `json:"buildP99Ms,omitempty"`
	HeapInuseMB    float64  `json:"heapInuseMB,omitempty"`
}

// StreamReport is the stream lag: the stream's last sequence against the
// lowest sequence a syncer had applied, sampled every second of the churn.
type StreamReport struct {
	LastSeq      uint64  `json:"lastSeq"`
	MaxLag       uint64  `json:"maxLag"`
	FinalLag     uint64  `json:"finalLag"`
	DrainSeconds float64 `json:"drainSeconds"` // after the last write, until applied
}

// WriteJSON writes r as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes r as aligned text.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(cells ...any) {
		s := make([]string, len(cells))
		for i, c := range cells {
			s[i] = fmt.Sprint(c)
		}
		fmt.Fprintln(tw, strings.Join(s, "\t"))
	}
	row("target", r.Target, "seed", r.Seed, "ingresses", r.Ingresses)
	row("setup", fmt.Sprintf("%d objects in %.1fs, applied after %.1fs", r.Setup.Objects, r.Setup.Seconds, r.Setup.SettleSeconds))
	e := r.Events
	row("events", fmt.Sprintf("%d offered, %d written, %d failed in %.1fs %v", e.Offered, e.Completed, e.Failed, e.Seconds, e.ByClass))
	row("events/s", fmt.Sprintf("target %.0f, offered %.0f, achieved %.0f", e.TargetRate, e.OfferedRate, e.AchievedRate))
	row("", "samples", "p50 ms", "p90 ms", "p99 ms", "max ms")
	a, st := r.Applied, r.Streamed
	row("write → in stream", st.Samples, st.P50, st.P90, st.P99, st.Max)
	row("write → applied", a.Samples, a.P50, a.P90, a.P99, a.Max)
	row("write → served", r.Served.Samples, r.Served.P50, r.Served.P90, r.Served.P99, r.Served.Max)
	row("applied", fmt.Sprintf("%.0f events/s until the last was applied (%.1fs); %d unmatched, %d unapplied", a.Rate, a.Seconds, a.Unmatched, a.Unapplied))
	p := r.Probes
	row("probes", fmt.Sprintf("%d changes followed (%d skipped), %d requests, %d failed, %d timeouts, %d superseded %s",
		p.Changes, p.Skipped, p.Requests, p.Failed, p.Timeouts, p.Superseded, p.FirstError))
	row("stream", fmt.Sprintf("last seq %d, lag max %d, final %d, drained %.1fs after the last write", r.Stream.LastSeq, r.Stream.MaxLag, r.Stream.FinalLag, r.Stream.DrainSeconds))
	row("syncer", "reloads", "dynamic", "builds", "events", "errors", "lag p50/p99 ms", "build p50/p99 ms", "heap MB")
	for _, s := range r.Syncers {
		row(s.Pod, s.Reloads, s.DynamicUpdates, s.Builds, s.EventsApplied, s.ApplyErrors+s.DecodeErrors,
			optMs(s.EventLagP50Ms)+"/"+optMs(s.EventLagP99Ms), optMs(s.BuildP50Ms)+"/"+optMs(s.BuildP99Ms), s.HeapInuseMB)
	}
	row("process", "pids", "cpu s", "cpu %", "rss max MB", "rss last MB", "pss max MB", "pss last MB")
	for _, pr := range r.Processes {
		row(pr.Name, pr.Pids, pr.CPUSeconds, pr.CPUPercent, pr.RSSMaxMB, pr.RSSLastMB, pr.PSSMaxMB, pr.PSSLastMB)
	}
	return tw.Flush()
}

func optMs(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return fmt.Sprint(*v)
}
