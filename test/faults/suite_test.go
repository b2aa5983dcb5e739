package faults

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/test/testkit/churn"
	"github.com/ingress-sync/ingress-sync/test/testkit/natscluster"
	"github.com/ingress-sync/ingress-sync/test/testkit/world"
)

// Bounds of the waits after a fault and of the final checks.
const (
	convergeTimeout = 2 * time.Minute
	checkTimeout    = 2 * time.Minute
	pollPause       = 250 * time.Millisecond
)

// failoverLimit is issue 17's bound on watcher failover: SIGKILL of the
// leader to the first event published by the standby.
const failoverLimit = 5 * time.Second

// suite is the running system and what the run found.
type suite struct {
	t          *testing.T
	mode       mode
	dir, bin   string
	pw         passwords
	nats       *natscluster.Cluster
	w          *world.World
	nc         *nats.Conn
	js         jetstream.JetStream
	spec       churn.Spec
	churn      *churner
	probes     *prober
	failover   time.Duration
	rows       []FaultRow
	doomed     int             // Ingresses the watcher fault deleted so far
	doomedLast string          // the host of the last of them
	deleted    map[string]bool // hosts the faults deleted
	// nginxMaster is the master the nginx fault killed.
	nginxMaster int
	// decodeErrors are the syncers' decode errors before the garbage.
	decodeErrors map[string]float64
	// recoveries are, by fault, the times from a change made after it to
	// every nginx serving it (recovery_test.go).
	recoveries map[string][]time.Duration
}

// TestFaults runs the faults of the mode under churn, then the checks.
func TestFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("the fault suite runs the whole system: not with -short")
	}
	began := time.Now()
	m, err := parseMode()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("faults: %s run, seed %d (%s=%d repeats it)", m.name, m.seed, envSeed, m.seed)
	s := &suite{t: t, mode: m, bin: os.Getenv(envBin), pw: newPasswords(), spec: churnSpec(m.seed), deleted: map[string]bool{},
		recoveries: map[string][]time.Duration{}}
	if s.bin == "" {
		t.Fatalf("%s is not set: run the suite with go test, which builds the binaries", envBin)
	}
	s.dir = workDir(t)
	s.start()
	defer s.dumpLogsOnFailure()
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	s.startChurn(ctx)
	s.injectAll(ctx)
	s.logRecoveries()
	s.stopChurn(stop)
	s.checkAll(t.Context())
	s.writeReport(time.Since(began))
}

// start brings the system up.
func (s *suite) start() {
	ctx, cancel := context.WithTimeout(s.t.Context(), setupTimeout)
	defer cancel()
	s.startBackends(s.spec)
	s.startNATS(ctx)
	s.startWorld(ctx)
	s.connect()
}

// startChurn sets the churn's objects up, waits until every nginx serves
// them, then starts the churn and the probes.
func (s *suite) startChurn(ctx context.Context) {
	gen, err := churn.NewGenerator(s.spec, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	target, err := churn.NewKubeTarget(s.w.CP.Config(), 4)
	if err != nil {
		s.t.Fatal(err)
	}
	setupCtx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	if err := target.Setup(setupCtx, gen.Namespaces(), gen.Setup(world.ControllerClass)); err != nil {
		s.t.Fatal(err)
	}
	if err := s.eventually(setupCtx, "every nginx serves the base hosts", s.baseServed); err != nil {
		s.t.Fatal(err)
	}
	s.churn = newChurner(target, gen)
	go s.churn.run(ctx)
	s.probes = newProber(baseHosts(s.spec))
	s.probes.start(ctx, s.w.Syncers)
}

// stopChurn ends the churn and the probes.
func (s *suite) stopChurn(stop context.CancelFunc) {
	stop()
	s.churn.wait()
	s.probes.wait()
}

// injectAll injects the faults of the plan one after another.
func (s *suite) injectAll(ctx context.Context) {
	p := newPlan(s.mode)
	for n := 0; ; n++ {
		name, ok := p.next()
		if !ok {
			return
		}
		if n > 0 && s.mode.gap > 0 {
			s.t.Logf("pausing %s before the next fault (%s)", s.mode.gap, envGap)
			if err := sleep(ctx, s.mode.gap); err != nil {
				s.t.Fatalf("pause: %v", err)
			}
		}
		if err := s.inject(ctx, faultByName(name)); err != nil {
			s.t.Fatalf("fault %s: %v", name, err)
		}
	}
}

// inject runs one fault, waits for convergence and records its row.
func (s *suite) inject(ctx context.Context, f fault) error {
	s.t.Logf("fault: %s", f.name)
	before := s.probes.failedSoFar()
	s.probes.setFault(f.name)
	defer s.probes.setFault("")
	faultBegan := time.Now()
	note, err := f.run(s, ctx)
	if err != nil {
		return err
	}
	began := time.Now()
	if f.recovery {
		if err := s.measureRecovery(ctx, f, faultBegan); err != nil {
			return err
		}
	}
	cctx, cancel := context.WithTimeout(ctx, convergeTimeout)
	defer cancel()
	if err := s.converged(cctx, f); err != nil {
		return err
	}
	row := FaultRow{Name: f.name, Checked: f.checked, Converge: time.Since(began), Failed: s.probes.since(before), Note: note}
	s.rows = append(s.rows, row)
	s.t.Logf("fault %s (%s): converged in %s, failed probes %v", f.name, note, row.Converge, row.Failed)
	if f.after != nil {
		return f.after(s, row)
	}
	return nil
}

// converged waits until no component is down, every syncer has applied
// the stream as it was when the fault ended, and every nginx serves the
// base hosts, then for the fault's own condition.
func (s *suite) converged(ctx context.Context, f fault) error {
	target, err := s.lastSeq(ctx)
	if err != nil {
		return err
	}
	conds := []condition{
		{"every process runs", func(context.Context) error { return s.alive() }},
		{fmt.Sprintf("every syncer applied sequence %d", target), func(ctx context.Context) error { return s.applied(ctx, target) }},
		{"every nginx serves the base hosts", s.baseServed},
	}
	if f.converged != nil {
		conds = append(conds, condition{f.checked, func(ctx context.Context) error { return f.converged(s, ctx) }})
	}
	for _, c := range conds {
		if err := s.eventually(ctx, c.what, c.ok); err != nil {
			return err
		}
	}
	return nil
}

// condition is a named check of the system, polled until it passes.
type condition struct {
	what string
	ok   func(context.Context) error
}

// eventually polls cond until it returns nil, bounded by ctx.
func (s *suite) eventually(ctx context.Context, what string, cond func(context.Context) error) error {
	var first error
	for polls := 1; ; polls++ {
		err := cond(ctx)
		if err == nil {
			if first != nil {
				s.t.Logf("%s: after %d polls (first: %v)", what, polls, first)
			}
			return nil
		}
		if first == nil {
			first = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (first: %v; last: %v)", what, ctx.Err(), first, err)
		case <-time.After(pollPause):
		}
	}
}

// lastSeq is the stream's last sequence.
func (s *suite) lastSeq(ctx context.Context) (uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var last error
	for range 20 {
		st, err := s.js.Stream(ctx, world.Stream)
		if err == nil {
			return st.CachedInfo().State.LastSeq, nil
		}
		last = err
		select {
		case <-ctx.Done():
			return 0, errors.Join(ctx.Err(), last)
		case <-time.After(pollPause):
		}
	}
	return 0, last
}

// applied: every syncer reports it is ready and caught up at target or
// later.
func (s *suite) applied(_ context.Context, target uint64) error {
	for _, sy := range s.w.Syncers {
		st, ok := s.w.Status(sy.Name)
		if !ok || !st.Ready || !st.CaughtUp || st.Sequence < target {
			return fmt.Errorf("%s: ready %v, caught up %v, sequence %d (status seen: %v)", sy.Name, st.Ready, st.CaughtUp, st.Sequence, ok)
		}
	}
	return nil
}

// baseServed: every nginx answers every base host with 200.
func (s *suite) baseServed(ctx context.Context) error {
	for _, sy := range s.w.Syncers {
		client := sy.Client(nil)
		client.Timeout = probeTimeout
		for _, h := range baseHosts(s.spec) {
			if err := probe(ctx, client, h); err != nil {
				return fmt.Errorf("%s: %s: %w", sy.Name, h, err)
			}
		}
	}
	return nil
}

// components are every process of the system the suite started.
func (s *suite) components() []*world.Component {
	out := append([]*world.Component{}, s.w.Watchers...)
	for _, sy := range s.w.Syncers {
		out = append(out, &sy.Component)
		if sy.Keeper != nil {
			out = append(out, sy.Keeper)
		}
	}
	return out
}

// alive: no process of the system has exited (a killed one has been
// started again by its fault).
func (s *suite) alive() error {
	var errs []error
	for _, c := range s.components() {
		if done, err := c.Proc.Exited(); done {
			errs = append(errs, fmt.Errorf("%s exited (%v):\n%s", c.Name, err, c.LogTail()))
		}
	}
	for _, n := range s.nats.Nodes {
		if done, err := n.Proc.Exited(); done {
			errs = append(errs, fmt.Errorf("%s exited (%v)", n.Name, err))
		}
	}
	return errors.Join(errs...)
}

// dumpLogsOnFailure prints the end of every log when the suite failed.
func (s *suite) dumpLogsOnFailure() {
	if !s.t.Failed() {
		return
	}
	for _, c := range s.components() {
		s.t.Logf("===== %s (tail) =====\n%s", c.Name, c.LogTail())
	}
	for _, n := range s.nats.Nodes {
		s.t.Logf("===== %s (tail) =====\n%s", n.Name, n.Proc.LogTail(3000))
	}
}

// writeReport writes RELIABILITY.md after a full run (to FAULTS_REPORT).
func (s *suite) writeReport(took time.Duration) {
	if s.mode.name != modeFull || s.t.Failed() {
		return
	}
	if s.mode.report == "" {
		s.t.Logf("%s is empty: the report is not written", envReport)
		return
	}
	counts, _ := s.churn.result()
	sent, failures := s.probes.result()
	r := &Report{Mode: s.mode.name, Command: "make faults", Seed: s.mode.seed, Machine: ReadMachine(), Duration: took,
		Faults: s.rows, Probes: sent, Failures: failures, Failover: s.failover, FailoverLimit: failoverLimit, Churn: counts,
		Holdoff: holdoff, MaxHoldoff: maxHoldoff, Recoveries: s.recoveries, RecoveryLimit: recoveryLimit, RecoveryDelay: recoveryDelay}
	for _, sy := range s.w.Syncers {
		r.Nginx = append(r.Nginx, sy.Name)
	}
	if err := os.WriteFile(s.mode.report, r.Markdown(), 0o644); err != nil {
		s.t.Fatal(err)
	}
	s.t.Logf("wrote %s", s.mode.report)
}
