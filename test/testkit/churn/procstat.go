package churn

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat
// (100 on every Linux platform Go supports).
const clockTicks = 100

// ProcessSpec names a process whose CPU and RSS are reported. With
// Children set, its descendants (a syncer's nginx master and workers) are
// reported too, under that name.
type ProcessSpec struct {
	Name     string
	Pid      int
	Children string
}

// ProcessReport is the CPU and memory of one process or group.
type ProcessReport struct {
	Name       string  `json:"name"`
	Pids       int     `json:"pids"`       // processes at the last sample
	CPUSeconds float64 `json:"cpuSeconds"` // user + system during the churn
	CPUPercent float64 `json:"cpuPercent"` // of one core, averaged over the churn
	RSSMaxMB   float64 `json:"rssMaxMB"`   // largest sum of VmRSS seen
	RSSLastMB  float64 `json:"rssLastMB"`
	// PSS counts a page shared by n processes as 1/n in each (nginx
	// workers share the configuration and the Lua shared dicts), so the
	// PSS of a group adds up where its RSS does not.
	PSSMaxMB  float64 `json:"pssMaxMB"`
	PSSLastMB float64 `json:"pssLastMB"`
}

// procSampler samples /proc for its groups: CPU ticks per pid since the
// first sample (pids born later count from 0) and the RSS sum.
type procSampler struct {
	specs  []ProcessSpec
	start  time.Time
	last   time.Time
	base   map[int]uint64
	groups []*procGroup
	byName map[string]*procGroup
}

type procGroup struct {
	name            string
	ticks           map[int]uint64
	pids            int
	rssMaxKB, rssKB uint64
	pssMaxKB, pssKB uint64
}

func newProcSampler(specs []ProcessSpec) *procSampler {
	s := &procSampler{specs: specs, base: map[int]uint64{}, byName: map[string]*procGroup{}}
	for _, sp := range specs {
		s.group(sp.Name)
		if sp.Children != "" {
			s.group(sp.Children)
		}
	}
	return s
}

func (s *procSampler) group(name string) *procGroup {
	g := s.byName[name]
	if g == nil {
		g = &procGroup{name: name, ticks: map[int]uint64{}}
		s.byName[name] = g
		s.groups = append(s.groups, g)
	}
	return g
}

// sample reads every process once.
func (s *procSampler) sample() {
	now := time.Now()
	first := s.start.IsZero()
	if first {
		s.start = now
	}
	s.last = now
	var parents map[int][]int
	members := map[*procGroup][]int{}
	for _, sp := range s.specs {
		members[s.byName[sp.Name]] = append(members[s.byName[sp.Name]], sp.Pid)
		if sp.Children != "" {
			if parents == nil {
				parents = processTree()
			}
			g := s.byName[sp.Children]
			members[g] = append(members[g], descendants(parents, sp.Pid)...)
		}
	}
	for g, pids := range members {
		g.pids, g.rssKB, g.pssKB = 0, 0, 0
		for _, pid := range pids {
			st, err := readStat(pid)
			if err != nil {
				continue
			}
			if _, seen := s.base[pid]; !seen {
				s.base[pid] = 0
				if first {
					s.base[pid] = st.ticks
				}
			}
			g.ticks[pid] = st.ticks
			g.pids++
			g.rssKB += readKB(fmt.Sprintf("/proc/%d/status", pid), "VmRSS:")
			g.pssKB += readKB(fmt.Sprintf("/proc/%d/smaps_rollup", pid), "Pss:")
		}
		g.rssMaxKB, g.pssMaxKB = max(g.rssMaxKB, g.rssKB), max(g.pssMaxKB, g.pssKB)
	}
}

// report turns the samples into ProcessReports.
func (s *procSampler) report() []ProcessReport {
	elapsed := s.last.Sub(s.start).Seconds()
	out := make([]ProcessReport, 0, len(s.groups))
	for _, g := range s.groups {
		var ticks uint64
		for pid, t := range g.ticks {
			ticks += t - min(s.base[pid], t)
		}
		r := ProcessReport{Name: g.name, Pids: g.pids, CPUSeconds: float64(ticks) / clockTicks,
			RSSMaxMB: round1(float64(g.rssMaxKB) / 1024), RSSLastMB: round1(float64(g.rssKB) / 1024),
			PSSMaxMB: round1(float64(g.pssMaxKB) / 1024), PSSLastMB: round1(float64(g.pssKB) / 1024)}
		if elapsed > 0 {
			r.CPUPercent = round1(100 * r.CPUSeconds / elapsed)
		}
		out = append(out, r)
	}
	return out
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }

type procStat struct {
	ppid  int
	ticks uint64
}

// readStat reads the parent and the CPU ticks (utime + stime) of pid.
func readStat(pid int) (procStat, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	// The command name may hold spaces and parentheses: fields start after
	// the last ')'. Then state is field 3 of stat, ppid 4, utime 14, stime 15.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 > len(data) {
		return procStat{}, fmt.Errorf("churn: malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(string(data[i+2:]))
	if len(f) < 13 {
		return procStat{}, fmt.Errorf("churn: short /proc/%d/stat", pid)
	}
	ppid, _ := strconv.Atoi(f[1])
	u, _ := strconv.ParseUint(f[11], 10, 64)
	sy, _ := strconv.ParseUint(f[12], 10, 64)
	return procStat{ppid: ppid, ticks: u + sy}, nil
}

// readKB reads the "<field> <n> kB" line of a /proc file (0 when
// unknown): VmRSS of status, Pss of smaps_rollup.
func readKB(path, field string) uint64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// processTree maps every pid to its children.
func processTree() map[int][]int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := readStat(pid); err == nil {
			out[st.ppid] = append(out[st.ppid], pid)
		}
	}
	return out
}

// descendants lists the children of pid, their children, and so on.
func descendants(children map[int][]int, pid int) []int {
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}
