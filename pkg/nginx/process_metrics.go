package nginx

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/procfs"
)

// ProcessCollectorOptions configure a ProcessCollector.
type ProcessCollectorOptions struct {
	// PidFile is nginx's pid file (Options.PidFile): the master's pid,
	// whether the syncer runs nginx as its child or the keeper runs it in
	// its own container with a shared process namespace.
	PidFile string
	// ProcRoot is the proc file system ("": /proc).
	ProcRoot string
	// ConstLabels are ingress-nginx's controller_namespace,
	// controller_class and controller_pod.
	ConstLabels prometheus.Labels
	Logger      *slog.Logger
}

// ProcessCollector is a prometheus.Collector of ingress-nginx's nginx
// process metrics (nginx_ingress_controller_nginx_process_*), under its
// names and labels: the nginx master of the pid file and its children
// (workers, cache helpers), read from /proc on every scrape.
type ProcessCollector struct {
	o                                      ProcessCollectorOptions
	procs, cpu, read, write, rss, vsz, old *prometheus.Desc
}

// NewProcessCollector returns a collector of the nginx of o.PidFile.
func NewProcessCollector(o ProcessCollectorOptions) *ProcessCollector {
	if o.ProcRoot == "" {
		o.ProcRoot = procfs.DefaultMountPoint
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	desc := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("nginx_ingress_controller_nginx_process_"+name, help, nil, o.ConstLabels)
	}
	return &ProcessCollector{o: o,
		procs: desc("num_procs", "number of processes"),
		cpu:   desc("cpu_seconds_total", "Cpu usage in seconds"),
		read:  desc("read_bytes_total", "number of bytes read"),
		write: desc("write_bytes_total", "number of bytes written"),
		rss:   desc("resident_memory_bytes", "number of bytes of memory in use"),
		vsz:   desc("virtual_memory_bytes", "number of bytes of memory in use"),
		old:   desc("oldest_start_time_seconds", "start time in seconds since 1970/01/01"),
	}
}

// Describe implements prometheus.Collector.
func (c *ProcessCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.procs, c.cpu, c.read, c.write, c.rss, c.vsz, c.old} {
		ch <- d
	}
}

// processTotals are the sums over nginx's processes.
type processTotals struct {
	procs                 int
	cpu, read, write      float64
	rss, vsz, oldestStart float64
}

// Collect implements prometheus.Collector: nothing while nginx is not
// running (no pid file, or no such process).
func (c *ProcessCollector) Collect(ch chan<- prometheus.Metric) {
	t, err := c.totals()
	if err != nil {
		c.o.Logger.Debug("nginx process metrics not read", "error", err)
		return
	}
	gauge, counter := prometheus.GaugeValue, prometheus.CounterValue
	ch <- prometheus.MustNewConstMetric(c.procs, gauge, float64(t.procs))
	ch <- prometheus.MustNewConstMetric(c.rss, gauge, t.rss)
	ch <- prometheus.MustNewConstMetric(c.vsz, gauge, t.vsz)
	ch <- prometheus.MustNewConstMetric(c.old, gauge, t.oldestStart)
	ch <- prometheus.MustNewConstMetric(c.cpu, counter, t.cpu)
	ch <- prometheus.MustNewConstMetric(c.read, counter, t.read)
	ch <- prometheus.MustNewConstMetric(c.write, counter, t.write)
}

// errNoMaster: the pid file names no running process.
var errNoMaster = errors.New("no nginx master process")

// totals reads the master of the pid file and its children.
func (c *ProcessCollector) totals() (processTotals, error) {
	var t processTotals
	b, err := os.ReadFile(c.o.PidFile)
	if err != nil {
		return t, err
	}
	master, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || master < 1 {
		return t, fmt.Errorf("%w: pid file %s holds %q", errNoMaster, c.o.PidFile, b)
	}
	fs, err := procfs.NewFS(c.o.ProcRoot)
	if err != nil {
		return t, err
	}
	all, err := fs.AllProcs()
	if err != nil {
		return t, err
	}
	for _, p := range all {
		st, err := p.Stat()
		if err != nil || p.PID != master && st.PPID != master {
			continue
		}
		t.add(p, st)
	}
	if t.procs == 0 {
		return t, fmt.Errorf("%w: pid %d", errNoMaster, master)
	}
	return t, nil
}

// add counts one process; its I/O only when readable.
func (t *processTotals) add(p procfs.Proc, st procfs.ProcStat) {
	t.procs++
	t.cpu += st.CPUTime()
	t.rss += float64(st.ResidentMemory())
	t.vsz += float64(st.VirtualMemory())
	if start, err := st.StartTime(); err == nil && (t.oldestStart == 0 || start < t.oldestStart) {
		t.oldestStart = start
	}
	if io, err := p.IO(); err == nil {
		t.read += float64(io.ReadBytes)
		t.write += float64(io.WriteBytes)
	}
}
