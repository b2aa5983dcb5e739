package nginx

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// gatherProcess registers c alone and returns its metrics by name.
func gatherProcess(t *testing.T, c *ProcessCollector) map[string]*dto.Metric {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.Metric{}
	for _, f := range families {
		out[f.GetName()] = f.GetMetric()[0]
	}
	return out
}

func metricValue(m *dto.Metric) float64 {
	if m.GetCounter() != nil {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}

// TestProcessCollector: ingress-nginx's nginx process metrics, under its
// names and controller_* labels, of the nginx master of the pid file and
// its workers (found by their parent in /proc, as for an nginx that
// syncer nginx runs in another container of the pod); none without a
// running nginx.
func TestProcessCollector(t *testing.T) {
	labels := prometheus.Labels{"controller_namespace": "ingress", "controller_class": "k8s.io/ingress-sync", "controller_pod": "p"}
	if got := gatherProcess(t, NewProcessCollector(ProcessCollectorOptions{PidFile: filepath.Join(t.TempDir(), "nginx.pid")})); len(got) != 0 {
		t.Errorf("metrics without nginx: %v", got)
	}
	h := startNginx(t, settingsConfig(t, nil), nil)
	got := gatherProcess(t, NewProcessCollector(ProcessCollectorOptions{PidFile: h.opts.PidFile(), ConstLabels: labels}))
	const prefix = "nginx_ingress_controller_nginx_process_"
	procs := 1 + h.opts.WorkerProcesses
	now := float64(time.Now().Unix())
	for name, ok := range map[string]func(float64) bool{
		"num_procs":                 func(v float64) bool { return v == float64(procs) },
		"cpu_seconds_total":         func(v float64) bool { return v >= 0 },
		"read_bytes_total":          func(v float64) bool { return v >= 0 },
		"write_bytes_total":         func(v float64) bool { return v >= 0 },
		"resident_memory_bytes":     func(v float64) bool { return v > 1<<20 },
		"virtual_memory_bytes":      func(v float64) bool { return v > 1<<20 },
		"oldest_start_time_seconds": func(v float64) bool { return v > now-3600 && v <= now+1 },
	} {
		m := got[prefix+name]
		if m == nil {
			t.Errorf("%s%s not served", prefix, name)
			continue
		}
		if v := metricValue(m); !ok(v) {
			t.Errorf("%s%s = %v", prefix, name, v)
		}
		seen := map[string]string{}
		for _, l := range m.GetLabel() {
			seen[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if seen[k] != v {
				t.Errorf("%s%s: label %s=%q, want %q", prefix, name, k, seen[k], v)
			}
		}
	}
}

// TestProcessCollectorAttached: with --nginx-mode=external the syncer is
// not nginx's parent (h's Process plays the keeper, `syncer nginx`); the
// collector of the attached syncer's options finds the master it follows
// and its workers all the same.
func TestProcessCollectorAttached(t *testing.T) {
	h, cfg, _ := attachFixture(t)
	s := attach(t, h, cfg)
	got := gatherProcess(t, NewProcessCollector(ProcessCollectorOptions{PidFile: s.app.opts.PidFile()}))
	want := float64(1 + len(workerPIDs(t, s.att.Pid())))
	if m := got["nginx_ingress_controller_nginx_process_num_procs"]; m == nil || metricValue(m) != want {
		t.Errorf("num_procs %v, want %v (the followed master %d and its workers)", m, want, s.att.Pid())
	}
}
