package churn

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The syncer metrics the report reads (pkg/syncer).
const (
	metricPrefix         = "ingress_sync_syncer_"
	metricReloads        = metricPrefix + "reloads_total"
	metricDynamicUpdates = metricPrefix + "dynamic_updates_total"
	metricEventsApplied  = metricPrefix + "events_applied_total"
	metricBuilds         = metricPrefix + "builds_total"
	metricSkippedEqual   = metricPrefix + "skipped_equal_total"
	metricApplyErrors    = metricPrefix + "apply_errors_total"
	metricDecodeErrors   = metricPrefix + "decode_errors_total"
	metricLastSequence   = metricPrefix + "last_sequence_applied"
	metricEventLag       = metricPrefix + "event_lag_seconds"
	metricBuildDuration  = metricPrefix + "build_duration_seconds"
	metricReady          = metricPrefix + "ready"
	metricCaughtUp       = metricPrefix + "caught_up"
	metricHeapInuse      = "go_memstats_heap_inuse_bytes"
)

// metricSet holds one scrape of the Prometheus text format: the value of
// every series, keyed by its name and labels as written.
type metricSet map[string]float64

// newLocalClient is the HTTP client of metrics and readiness requests.
func newLocalClient() *http.Client { return &http.Client{Timeout: 5 * time.Second} }

// scrapeMetrics reads url (a /metrics endpoint) within 5 seconds.
func scrapeMetrics(ctx context.Context, client *http.Client, url string) (metricSet, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("churn: metrics %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("churn: metrics %s: status %d", url, resp.StatusCode)
	}
	return parseMetrics(resp.Body)
}

// parseMetrics reads the text exposition format: comments skipped, every
// other line "<series> <value> [timestamp]".
func parseMetrics(r io.Reader) (metricSet, error) {
	out := metricSet{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		// Label values may hold spaces: the series ends at the last '}'.
		cut := strings.LastIndexByte(line, '}') + 1
		if cut == 0 {
			cut = strings.IndexByte(line, ' ')
		}
		if cut <= 0 || cut >= len(line) {
			continue
		}
		fields := strings.Fields(line[cut:])
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			continue
		}
		out[line[:cut]] = v
	}
	return out, sc.Err()
}

// sum adds every series of metric name (all label sets).
func (m metricSet) sum(name string) float64 {
	var total float64
	for series, v := range m {
		if series == name || strings.HasPrefix(series, name+"{") {
			total += v
		}
	}
	return total
}

// bucket is one cumulative histogram bucket.
type bucket struct {
	le    float64
	count float64
}

// buckets returns the cumulative buckets of histogram name, by bound.
func (m metricSet) buckets(name string) []bucket {
	var out []bucket
	prefix := name + "_bucket{"
	for series, v := range m {
		if !strings.HasPrefix(series, prefix) {
			continue
		}
		_, rest, ok := strings.Cut(series, `le="`)
		if !ok {
			continue
		}
		bound, _, _ := strings.Cut(rest, `"`)
		le, err := strconv.ParseFloat(bound, 64) // "+Inf" parses as +Inf
		if err != nil {
			continue
		}
		out = append(out, bucket{le: le, count: v})
	}
	slices.SortFunc(out, func(a, b bucket) int { return compareFloat(a.le, b.le) })
	return out
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// histogramQuantile estimates quantile q (0..1) of the observations made
// between two scrapes of a histogram: the upper bound of the first bucket
// holding it (+Inf when it lies beyond the last finite bound, NaN when
// nothing was observed).
func histogramQuantile(before, after []bucket, q float64) float64 {
	prev := map[float64]float64{}
	for _, b := range before {
		prev[b.le] = b.count
	}
	if len(after) == 0 {
		return math.NaN()
	}
	total := after[len(after)-1].count - prev[after[len(after)-1].le]
	if total <= 0 {
		return math.NaN()
	}
	for _, b := range after {
		if b.count-prev[b.le] >= q*total {
			return b.le
		}
	}
	return math.Inf(1)
}
