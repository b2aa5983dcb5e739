package faults

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Report is what a run of the suite found: RELIABILITY.md.
type Report struct {
	Mode    string // short, full or soak
	Command string
	Seed    uint64
	Machine Machine
	// Duration is the time of the whole run, setup included.
	Duration time.Duration
	// Nginx names the nginx of every syncer, in order.
	Nginx  []string
	Faults []FaultRow
	// Probes counts the requests sent through each nginx.
	Probes   map[string]int
	Failures []ProbeFailure
	// Failover is the longest time from SIGKILL of the leading watcher to
	// the first event published by the new leader; FailoverLimit its bound.
	Failover, FailoverLimit time.Duration
	// Churn counts the writes of the churn, and those the API refused.
	Churn ChurnCounts
	// Holdoff and MaxHoldoff are the syncers' --holdoff and --max-holdoff.
	Holdoff, MaxHoldoff string
	// Recoveries are, by fault, the times from a change made after the
	// fault to every nginx serving it; RecoveryLimit their bound and
	// RecoveryDelay how long after the kube-apiserver was back the change
	// was made.
	Recoveries                   map[string][]time.Duration
	RecoveryLimit, RecoveryDelay time.Duration
}

// RecoveryStats summarizes recovery times.
type RecoveryStats struct {
	N             int
	P50, P99, Max time.Duration
}

// Summarize is the count, median, 99th percentile (nearest rank) and
// maximum of ds.
func Summarize(ds []time.Duration) RecoveryStats {
	if len(ds) == 0 {
		return RecoveryStats{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := func(p float64) time.Duration {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[max(i, 0)]
	}
	return RecoveryStats{N: len(s), P50: rank(0.50), P99: rank(0.99), Max: s[len(s)-1]}
}

// ChurnCounts are the writes of the churn by class.
type ChurnCounts struct {
	Endpoints, Ingresses, Failed int
}

// FaultRow is one fault injected.
type FaultRow struct {
	Name    string
	Checked string // what the suite checked after it
	// Converge is the time from the end of the fault (the process back,
	// the server up) until the system converged.
	Converge time.Duration
	// Failed counts the failed probes through each nginx during the fault
	// and its convergence.
	Failed map[string]int
	Note   string
}

// ProbeFailure is one failed request through an nginx.
type ProbeFailure struct {
	At    time.Duration // since the churn began
	Fault string        // the fault under way ("" between faults)
	Nginx string
	Host  string
	Error string // the status or the error
}

// Machine is what the run ran on.
type Machine struct {
	CPU    string
	Cores  int
	Kernel string
}

// ReadMachine reads the CPU model and the kernel release from /proc.
func ReadMachine() Machine {
	m := Machine{CPU: "unknown", Cores: runtime.NumCPU(), Kernel: "unknown"}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// maxFailureRows bounds the table of failed probes; the rest are counted.
const maxFailureRows = 50

// Markdown renders the report.
func (r *Report) Markdown() []byte {
	var b bytes.Buffer
	b.WriteString("# Reliability\n\n")
	b.WriteString("Written by `make faults` (test/faults); do not edit: run it again.\n")
	fmt.Fprintf(&b, "The fault suite runs the real components in a private network namespace: a control plane, a 3-node cluster of nats-server processes, two watchers (leader and standby), two syncers with their nginx, echo backends. Churn runs throughout (%d EndpointSlice and %d Ingress writes, %d refused by the API while it was down), and probes run through every nginx. Faults come one after another, each followed by a bounded wait for convergence.\n\n",
		r.Churn.Endpoints, r.Churn.Ingresses, r.Churn.Failed)
	fmt.Fprintf(&b, "The syncers batch changes (`--holdoff %s --max-holdoff %s`): under churn a syncer applies at least every %s, the floor of most convergence times, which end when every syncer reports the stream's sequence at the end of the fault.\n\n",
		r.Holdoff, r.MaxHoldoff, r.MaxHoldoff)
	r.faultTable(&b)
	r.failureTables(&b)
	r.recoveryTable(&b)
	b.WriteString("## Watcher failover\n\n")
	fmt.Fprintf(&b, "SIGKILL of the leading watcher to the first event published by the standby: %s (bound %s).\n\n",
		duration(r.Failover), duration(r.FailoverLimit))
	b.WriteString("## Run\n\n")
	fmt.Fprintf(&b, "- command: `%s`\n- mode: %s (seed %d), %s in all\n", r.Command, r.Mode, r.Seed, duration(r.Duration.Round(time.Second)))
	fmt.Fprintf(&b, "- machine: %s, %d cores, Linux %s\n", r.Machine.CPU, r.Machine.Cores, r.Machine.Kernel)
	return b.Bytes()
}

func (r *Report) faultTable(b *bytes.Buffer) {
	b.WriteString("## Faults\n\n| # | fault | checked after it | converged in |")
	for _, n := range r.Nginx {
		fmt.Fprintf(b, " failed probes %s |", n)
	}
	b.WriteString("\n|---|---|---|---|" + strings.Repeat("---|", len(r.Nginx)) + "\n")
	for i, f := range r.Faults {
		checked := f.Checked
		if f.Note != "" {
			checked += " (" + f.Note + ")"
		}
		fmt.Fprintf(b, "| %d | %s | %s | %s |", i+1, f.Name, checked, duration(f.Converge))
		for _, n := range r.Nginx {
			fmt.Fprintf(b, " %d |", f.Failed[n])
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

func (r *Report) recoveryTable(b *bytes.Buffer) {
	if len(r.Recoveries) == 0 {
		return
	}
	b.WriteString("## Recovery\n\n")
	fmt.Fprintf(b, "A new Ingress created %s after the kube-apiserver answered again, and one created right after the stream was recreated: the time from its creation to every nginx serving its host (bound %s).\n\n",
		duration(r.RecoveryDelay), duration(r.RecoveryLimit))
	b.WriteString("| fault | changes | p50 | p99 | max |\n|---|---|---|---|---|\n")
	for _, name := range slices.Sorted(maps.Keys(r.Recoveries)) {
		st := Summarize(r.Recoveries[name])
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s |\n", name, st.N, duration(st.P50), duration(st.P99), duration(st.Max))
	}
	b.WriteString("\n")
}

// failureKey groups failed probes of one fault, nginx, host and error.
type failureKey struct{ fault, nginx, host, err string }

func (r *Report) failureTables(b *bytes.Buffer) {
	b.WriteString("## Failed probes\n\n| nginx | requests | failed |\n|---|---|---|\n")
	failed := map[string]int{}
	for _, f := range r.Failures {
		failed[f.Nginx]++
	}
	for _, n := range r.Nginx {
		fmt.Fprintf(b, "| %s | %d | %d |\n", n, r.Probes[n], failed[n])
	}
	b.WriteString("\n")
	if len(r.Failures) == 0 {
		b.WriteString("No probe failed.\n\n")
		return
	}
	type group struct {
		key         failureKey
		n           int
		first, last time.Duration
	}
	groups := map[failureKey]*group{}
	for _, f := range r.Failures {
		k := failureKey{cmp.Or(f.Fault, "(between faults)"), f.Nginx, f.Host, f.Error}
		g := groups[k]
		if g == nil {
			g = &group{key: k, first: f.At}
			groups[k] = g
		}
		g.n++
		g.last = f.At
	}
	list := make([]*group, 0, len(groups))
	for _, g := range groups {
		list = append(list, g)
	}
	slices.SortFunc(list, func(a, c *group) int { return cmp.Compare(a.first, c.first) })
	b.WriteString("Where they failed:\n\n| fault | nginx | host | error | count | first at | last at |\n|---|---|---|---|---|---|---|\n")
	for i, g := range list {
		if i == maxFailureRows {
			fmt.Fprintf(b, "\n%d more groups not shown.\n", len(list)-maxFailureRows)
			break
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %d | %s | %s |\n", g.key.fault, g.key.nginx, g.key.host,
			strings.ReplaceAll(g.key.err, "|", "\\|"), g.n, duration(g.first), duration(g.last))
	}
	b.WriteString("\n")
}

// duration prints d in seconds with millisecond precision.
func duration(d time.Duration) string {
	return fmt.Sprintf("%.3f s", d.Seconds())
}
