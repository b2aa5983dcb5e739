package faults

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The modes of the suite, chosen by the environment.
const (
	modeShort = "short" // default: a few faults, part of `make test`
	modeFull  = "full"  // FAULTS=full: every fault once, writes the report
	modeSoak  = "soak"  // FAULTS_DURATION=30m: faults in random order
)

// Environment of the suite.
const (
	envMode     = "FAULTS"
	envDuration = "FAULTS_DURATION"
	envSeed     = "FAULTS_SEED"
	envReport   = "FAULTS_REPORT" // where the full run writes RELIABILITY.md
	envKeep     = "FAULTS_KEEP"   // keep the run's folder (logs)
	// envOnly limits a soak to some faults: their names, comma-separated
	// (FAULTS_ONLY='stream deleted and recreated').
	envOnly = "FAULTS_ONLY"
	// envCount ends a soak after that many faults (FAULTS_COUNT=50), or
	// at FAULTS_DURATION, whichever comes first.
	envCount = "FAULTS_COUNT"
	// envGap is a pause between the faults of a soak (FAULTS_GAP=90s):
	// client-go keeps a reflector's retry backoff for two minutes, so
	// kube-apiserver outages closer together than that measure a flapping
	// API server, not one outage after another.
	envGap = "FAULTS_GAP"
)

// shortFaults are the faults of the default run, bounded to a few minutes;
// it logs the recovery bounds (recoveryLimit) of the API outage and the
// recreated stream, the full run and soaks assert them.
var shortFaults = []string{faultWatcherKill, faultSyncerKill, faultAPIDown, faultRecreate, faultGarbage, faultNginxKill}

// maxSoakFaults bounds the faults of a soak, whatever its duration.
const maxSoakFaults = 10000

// mode is how the suite runs.
type mode struct {
	name   string
	soak   time.Duration // soak: how long to go on injecting faults
	seed   uint64
	report string
	only   []string      // the faults of a soak (default allFaults)
	count  int           // a soak ends after count faults (0: maxSoakFaults)
	gap    time.Duration // a soak pauses this long between faults
	rnd    *rand.Rand
}

func parseMode() (mode, error) {
	m := mode{name: modeShort, report: os.Getenv(envReport), seed: uint64(time.Now().UnixNano())}
	if s := os.Getenv(envSeed); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return m, fmt.Errorf("%s=%q: %w", envSeed, s, err)
		}
		m.seed = seed
	}
	if d := os.Getenv(envDuration); d != "" {
		soak, err := time.ParseDuration(d)
		if err != nil || soak <= 0 {
			return m, fmt.Errorf("%s=%q: want a positive duration such as 30m", envDuration, d)
		}
		m.name, m.soak = modeSoak, soak
		if err := m.parseSoak(); err != nil {
			return m, err
		}
	} else if v := os.Getenv(envMode); v == modeFull {
		m.name = modeFull
	} else if v != "" && v != modeShort {
		return m, fmt.Errorf("%s=%q: want full or short", envMode, v)
	}
	m.rnd = rand.New(rand.NewPCG(m.seed, 0x6661756c))
	return m, nil
}

// parseSoak reads FAULTS_ONLY and FAULTS_COUNT.
func (m *mode) parseSoak() error {
	m.only, m.count = allFaults(), maxSoakFaults
	if v := os.Getenv(envOnly); v != "" {
		m.only = nil
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			if !slices.Contains(allFaults(), name) {
				return fmt.Errorf("%s: unknown fault %q, want some of %q", envOnly, name, allFaults())
			}
			m.only = append(m.only, name)
		}
	}
	if v := os.Getenv(envCount); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > maxSoakFaults {
			return fmt.Errorf("%s=%q: want a count from 1 to %d", envCount, v, maxSoakFaults)
		}
		m.count = n
	}
	if v := os.Getenv(envGap); v != "" {
		gap, err := time.ParseDuration(v)
		if err != nil || gap < 0 {
			return fmt.Errorf("%s=%q: want a duration such as 90s", envGap, v)
		}
		m.gap = gap
	}
	return nil
}

// plan is the next fault to inject, or false when the run is over.
type plan struct {
	m     mode
	began time.Time
	order []string
	n     int
}

func newPlan(m mode) *plan {
	p := &plan{m: m, began: time.Now()}
	switch m.name {
	case modeShort:
		p.order = shortFaults
	case modeFull:
		p.order = allFaults()
	}
	return p
}

func (p *plan) next() (string, bool) {
	if p.m.name != modeSoak {
		if p.n >= len(p.order) {
			return "", false
		}
		p.n++
		return p.order[p.n-1], true
	}
	if p.n >= p.m.count || time.Since(p.began) >= p.m.soak {
		return "", false
	}
	if p.n%len(p.m.only) == 0 {
		p.order = slices.Clone(p.m.only)
		p.m.rnd.Shuffle(len(p.order), func(i, j int) { p.order[i], p.order[j] = p.order[j], p.order[i] })
	}
	p.n++
	return p.order[(p.n-1)%len(p.order)], true
}

// stopFor is how long the SIGSTOP fault keeps a syncer stopped: 10–40 s at
// random in a soak, 10 s in the full run, 3 s in the short one.
func (m mode) stopFor() time.Duration {
	switch m.name {
	case modeSoak:
		return 10*time.Second + time.Duration(m.rnd.Int64N(int64(30*time.Second)))
	case modeFull:
		return 10 * time.Second
	}
	return 3 * time.Second
}
