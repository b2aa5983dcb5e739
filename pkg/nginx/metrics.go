package nginx

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// Traffic metrics (lua/metrics.lua): the log phase of every routed request
// counts it into the shared dict ingress_metrics, and GET /ingress_metrics
// on the loopback status server lists the counters, which TrafficCollector
// turns into ingress-nginx's nginx_ingress_controller_* metrics on scrape.
// Nothing is written to a socket per request.

// Defaults of the metrics options.
const (
	DefaultMetricsDictSize  = config.Size("32m")
	DefaultMetricsMaxSeries = 10000
	maxMetricsBuckets       = 64
)

// Default histogram buckets, ingress-nginx's: --time-buckets (Prometheus'
// default buckets), --length-buckets (10 to 100 by 10) and --size-buckets
// (10 to 10^7 by powers of 10).
var (
	DefaultTimeBuckets   = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	DefaultLengthBuckets = []float64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
	DefaultSizeBuckets   = []float64{10, 100, 1000, 10000, 100000, 1e+06, 1e+07}
)

// MetricsOptions configure the traffic metrics. The zero value is
// ingress-nginx's default: on, per host, its buckets.
type MetricsOptions struct {
	// Disabled turns the collection off (nginx.conf's settings have no
	// metrics, and lua/phases.lua's log does not call lua/metrics.lua);
	// ingress-nginx's --enable-metrics=false.
	Disabled bool
	// WithoutHost drops the host label (--metrics-per-host=false).
	WithoutHost bool
	// MaxSeries caps the distinct label sets; samples of new ones beyond
	// it are dropped and counted.
	MaxSeries int
	// DictSize sizes the shared dict (about 3 KB, estimated, per label set).
	DictSize config.Size
	// TimeBuckets, LengthBuckets and SizeBuckets are the histograms'
	// upper bounds, increasing.
	TimeBuckets, LengthBuckets, SizeBuckets []float64
}

func (m *MetricsOptions) defaults() {
	setDefault(&m.MaxSeries, DefaultMetricsMaxSeries)
	setDefault(&m.DictSize, DefaultMetricsDictSize)
	if m.TimeBuckets == nil {
		m.TimeBuckets = DefaultTimeBuckets
	}
	if m.LengthBuckets == nil {
		m.LengthBuckets = DefaultLengthBuckets
	}
	if m.SizeBuckets == nil {
		m.SizeBuckets = DefaultSizeBuckets
	}
}

func (m *MetricsOptions) validate() []error {
	var errs []error
	if _, err := nginxSize(m.DictSize); err != nil || m.DictSize == "0" {
		errs = append(errs, fmt.Errorf("Metrics.DictSize %q is not a positive nginx size", m.DictSize))
	}
	if err := checkRange("Metrics.MaxSeries", m.MaxSeries, 1, 1<<20); err != nil {
		errs = append(errs, err)
	}
	for _, b := range []struct {
		name string
		v    []float64
	}{{"TimeBuckets", m.TimeBuckets}, {"LengthBuckets", m.LengthBuckets}, {"SizeBuckets", m.SizeBuckets}} {
		if err := checkBuckets(b.v); err != nil {
			errs = append(errs, fmt.Errorf("Metrics.%s: %w", b.name, err))
		}
	}
	return errs
}

func checkBuckets(b []float64) error {
	if len(b) == 0 || len(b) > maxMetricsBuckets {
		return fmt.Errorf("needs 1 to %d bounds", maxMetricsBuckets)
	}
	for i, v := range b {
		if math.IsNaN(v) || math.IsInf(v, 0) || (i > 0 && v <= b[i-1]) {
			return errors.New("bounds must be finite and increasing")
		}
	}
	return nil
}

func (v *view) setMetrics(m *MetricsOptions) {
	v.MetricsDictSize, _ = nginxSize(m.DictSize)
	if m.Disabled {
		v.LuaMetrics = "nil"
		return
	}
	v.LuaMetrics = fmt.Sprintf("{ per_host = %t, max_series = %d, time = %s, length = %s, size = %s }",
		!m.WithoutHost, m.MaxSeries, luaNumbers(m.TimeBuckets), luaNumbers(m.LengthBuckets), luaNumbers(m.SizeBuckets))
}

func luaNumbers(v []float64) string {
	s := make([]string, len(v))
	for i, f := range v {
		s[i] = strconv.FormatFloat(f, 'g', -1, 64)
	}
	return "{ " + strings.Join(s, ", ") + " }"
}

// Histogram kinds of a TrafficSeries, in lua/metrics.lua's key letters.
const (
	HistRequestDuration  = iota // d: $request_time
	HistResponseDuration        // u: $upstream_response_time
	HistConnectDuration         // c: $upstream_connect_time
	HistHeaderDuration          // h: $upstream_header_time
	HistRequestSize             // q: $request_length
	HistResponseSize            // p: $bytes_sent
	HistBytesSent               // b: $bytes_sent (the sum is response size's)
	numHists
)

const histLetters = "duchqpb"

// TrafficHistogram is one histogram of a label set: requests per bucket
// index (0-based, not cumulative; index len(bounds) is +Inf) and the sum.
type TrafficHistogram struct {
	Buckets map[int]uint64
	Sum     float64
}

// TrafficSeries is one label set and its samples. Backend and Canary are
// backend names (the collector shows Backend's Service).
type TrafficSeries struct {
	Namespace, Ingress, Backend, Path, Host, Canary, Method, Status string
	Requests                                                        float64
	Hists                                                           [numHists]TrafficHistogram
}

// Traffic is GET /ingress_metrics: the label sets, the samples the
// series cap dropped and the entries lost to a full dict.
type Traffic struct {
	Series  []TrafficSeries
	Dropped float64
	Evicted float64
	// Mirrors counts the copies of requests to mirrors (lua/mirror.lua).
	Mirrors MirrorCounts
}

// MirrorCounts are the copies of requests to mirrors: Sent (the mirror
// answered), Dropped (beyond the in-flight bound, a body over the limit, a
// backend without endpoints) and Failed (connect, TLS, timeout, resolver).
type MirrorCounts struct {
	Sent, Dropped, Failed float64
}

// ErrMetricsDisabled: nginx.conf does not collect traffic metrics.
var ErrMetricsDisabled = errors.New("nginx: traffic metrics are disabled")

// GetTraffic reads the traffic counters.
func (c *Client) GetTraffic(ctx context.Context) (Traffic, error) {
	data, err := c.getRaw(ctx, "/ingress_metrics")
	if err != nil {
		return Traffic{}, err
	}
	return parseTraffic(data), nil
}

func (c *Client) getRaw(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("GET %s: read body: %w", path, err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return data, nil
	case http.StatusNotFound:
		return nil, fmt.Errorf("GET %s: %w", path, ErrMetricsDisabled)
	}
	return nil, fmt.Errorf("GET %s: status %d", path, resp.StatusCode)
}

// parseTraffic reads the "key\tvalue" lines of lua/metrics.lua; lines it
// does not know are skipped.
func parseTraffic(data []byte) Traffic {
	var t Traffic
	labels := map[string]string{}
	values := map[string]map[string]float64{} // id -> rest of key -> value
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "\t")
		if !ok || k == "" {
			continue
		}
		switch {
		case k == "#d":
			t.Dropped, _ = strconv.ParseFloat(v, 64)
		case k == "#e":
			t.Evicted, _ = strconv.ParseFloat(v, 64)
		case k == "#Ms":
			t.Mirrors.Sent, _ = strconv.ParseFloat(v, 64)
		case k == "#Md":
			t.Mirrors.Dropped, _ = strconv.ParseFloat(v, 64)
		case k == "#Mf":
			t.Mirrors.Failed, _ = strconv.ParseFloat(v, 64)
		case k[0] == 'L':
			labels[k[1:]] = v
		case k[0] == 'r' || strings.IndexByte(histLetters, k[0]) >= 0:
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				continue
			}
			id, rest := splitID(k[1:])
			if values[id] == nil {
				values[id] = map[string]float64{}
			}
			values[id][k[:1]+rest] = f
		}
	}
	for id, l := range labels {
		if s, ok := seriesOf(l, values[id]); ok {
			t.Series = append(t.Series, s)
		}
	}
	return t
}

// splitID splits "17:3" into "17" and ":3".
func splitID(s string) (string, string) {
	if i := strings.IndexByte(s, ':'); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}

func seriesOf(labels string, v map[string]float64) (TrafficSeries, bool) {
	f := strings.Split(labels, "\x1f")
	if len(f) != 8 {
		return TrafficSeries{}, false
	}
	s := TrafficSeries{Namespace: f[0], Ingress: f[1], Backend: f[2], Path: f[3], Host: f[4], Canary: f[5], Method: f[6], Status: f[7]}
	s.Requests = v["r"]
	for k, n := range v {
		h := strings.IndexByte(histLetters, k[0])
		if h < 0 || len(k) < 3 || k[1] != ':' {
			continue
		}
		if k[2:] == "s" {
			s.Hists[h].Sum = n
			continue
		}
		i, err := strconv.Atoi(k[2:])
		if err != nil || i < 1 {
			continue
		}
		if s.Hists[h].Buckets == nil {
			s.Hists[h].Buckets = map[int]uint64{}
		}
		s.Hists[h].Buckets[i-1] = uint64(n)
	}
	s.Hists[HistBytesSent].Sum = s.Hists[HistResponseSize].Sum
	return s, true
}

// StubStatus is nginx's stub_status.
type StubStatus struct {
	Active, Accepted, Handled, Requests, Reading, Writing, Waiting float64
}

// GetStubStatus reads /nginx_status.
func (c *Client) GetStubStatus(ctx context.Context) (StubStatus, error) {
	data, err := c.getRaw(ctx, "/nginx_status")
	if err != nil {
		return StubStatus{}, err
	}
	return parseStubStatus(string(data))
}

// parseStubStatus reads stub_status's four lines: "Active connections: N",
// a header, "accepts handled requests" and "Reading: N Writing: N Waiting: N".
func parseStubStatus(s string) (StubStatus, error) {
	var st StubStatus
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) != 4 {
		return st, fmt.Errorf("nginx_status: %d lines", len(lines))
	}
	if _, err := fmt.Sscanf(lines[0], "Active connections: %g", &st.Active); err != nil {
		return st, fmt.Errorf("nginx_status: %w", err)
	}
	if _, err := fmt.Sscanf(strings.TrimSpace(lines[2]), "%g %g %g", &st.Accepted, &st.Handled, &st.Requests); err != nil {
		return st, fmt.Errorf("nginx_status: %w", err)
	}
	if _, err := fmt.Sscanf(strings.TrimSpace(lines[3]), "Reading: %g Writing: %g Waiting: %g", &st.Reading, &st.Writing, &st.Waiting); err != nil {
		return st, fmt.Errorf("nginx_status: %w", err)
	}
	return st, nil
}
