package faults

import (
	"testing"
	"time"

	"github.com/ingress-sync/ingress-sync/test/testkit/golden"
)

// TestReportMarkdown: the renderer of RELIABILITY.md on a fixed report.
func TestReportMarkdown(t *testing.T) {
	r := &Report{
		Mode: "full", Command: "make faults", Seed: 7, Duration: 9*time.Minute + 12*time.Second,
		Machine: Machine{CPU: "Test CPU @ 2.00GHz", Cores: 2, Kernel: "6.1.0"},
		Nginx:   []string{"syncer-0", "syncer-1"},
		Faults: []FaultRow{
			{Name: "watcher SIGKILL", Checked: "failover, deleted host 404", Converge: 1500 * time.Millisecond},
			{Name: "syncer SIGKILL", Checked: "syncer back, caught up", Converge: 3 * time.Second,
				Failed: map[string]int{"syncer-1": 3}, Note: "nginx is the syncer's child"},
		},
		Probes: map[string]int{"syncer-0": 1000, "syncer-1": 990},
		Failures: []ProbeFailure{
			{At: 10 * time.Second, Fault: "syncer SIGKILL", Nginx: "syncer-1", Host: "app-1.faults.test", Error: "connection refused"},
			{At: 11 * time.Second, Fault: "syncer SIGKILL", Nginx: "syncer-1", Host: "app-1.faults.test", Error: "connection refused"},
			{At: 12 * time.Second, Fault: "syncer SIGKILL", Nginx: "syncer-1", Host: "app-2.faults.test", Error: "status 502"},
		},
		Failover: 2900 * time.Millisecond, FailoverLimit: 5 * time.Second,
		Churn: ChurnCounts{Endpoints: 2000, Ingresses: 500, Failed: 120}, Holdoff: "300ms", MaxHoldoff: "2s",
		Recoveries: map[string][]time.Duration{
			"kube-apiserver down":          {1200 * time.Millisecond, 2 * time.Second, 1500 * time.Millisecond},
			"stream deleted and recreated": {900 * time.Millisecond},
		},
		RecoveryLimit: 5 * time.Second, RecoveryDelay: time.Second,
	}
	golden.Check(t, "reliability", r.Markdown(), "go test ./test/faults -run TestReportMarkdown -update")
}

// TestSummarize: nearest-rank percentiles.
func TestSummarize(t *testing.T) {
	tests := []struct {
		name string
		in   []time.Duration
		want RecoveryStats
	}{
		{"empty", nil, RecoveryStats{}},
		{"one", []time.Duration{3}, RecoveryStats{N: 1, P50: 3, P99: 3, Max: 3}},
		{"ten", []time.Duration{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, RecoveryStats{N: 10, P50: 5, P99: 10, Max: 10}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Summarize(tc.in); got != tc.want {
				t.Errorf("Summarize(%v) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}
