package churn

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/ingress-sync/ingress-sync/internal/certs"
	"github.com/ingress-sync/ingress-sync/pkg/stream"
	"github.com/ingress-sync/ingress-sync/pkg/stream/embedded"
	"github.com/ingress-sync/ingress-sync/test/testkit/world"
)

// streamEnv is what the stream-only scenarios run on: an embedded NATS
// server with the event stream, and syncer binaries (no control plane, no
// watcher).
type streamEnv struct {
	o    ScenarioOptions
	srv  *server.Server
	conn *stream.Conn
	js   jetstream.JetStream
	pool []*certs.Pair
}

func startStreamEnv(ctx context.Context, o ScenarioOptions) (*streamEnv, error) {
	e := &streamEnv{o: o}
	var err error
	if e.pool, err = CertificatePool(DefaultSpec().Domain, 4); err != nil {
		return nil, err
	}
	e.srv, err = embedded.Start(ctx, embedded.Options{StoreDir: filepath.Join(o.Dir, "nats"), Port: -1})
	if err != nil {
		return nil, err
	}
	if e.conn, err = stream.Connect(ctx, e.srv.ClientURL(), stream.WithName("churn"), stream.WithConnectOnce(),
		stream.WithConnectLogger(o.Logger)); err == nil {
		e.js = e.conn.JetStream()
		_, err = stream.Ensure(ctx, e.js, stream.Config{Name: world.Stream, SubjectPrefix: world.Prefix})
	}
	if err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

func (e *streamEnv) close() {
	if e.conn != nil {
		e.conn.Close()
	}
	e.srv.Shutdown()
	e.srv.WaitForShutdown()
}

// publishSetup publishes the setup of spec and returns how many objects
// and how long it took.
func (e *streamEnv) publishSetup(ctx context.Context, spec Spec) (int, time.Duration, error) {
	gen, err := NewGenerator(spec, e.pool)
	if err != nil {
		return 0, 0, err
	}
	t, err := NewStreamTarget(e.js, world.Prefix, 8192)
	if err != nil {
		return 0, 0, err
	}
	defer func() { _ = t.Close(ctx) }()
	changes := gen.Setup(world.ControllerClass)
	start := time.Now()
	err = t.Setup(ctx, nil, changes)
	return len(changes), time.Since(start), err
}

// bootstrap starts a syncer on the stream and times it: until it reports
// caught up (metrics polled every 100ms) and until /readyz (every 10ms).
func (e *streamEnv) bootstrap(ctx context.Context, name string) (s *world.Syncer, caughtUp, ready time.Duration, err error) {
	s, err = world.NewSyncer(world.SyncerOptions{Bin: filepath.Join(e.o.BinDir, "syncer"), Dir: e.o.Dir, Name: name,
		NATSURL: e.srv.ClientURL(), Args: append([]string{"--log-level", "warn"}, e.o.SyncerArgs...)})
	if err == nil {
		err = s.Start()
	}
	if err != nil {
		return nil, 0, 0, err
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.WaitReady(ctx) }()
	client := newLocalClient()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			ready = time.Since(start)
			if caughtUp == 0 {
				caughtUp = ready
			}
			if err != nil {
				_ = s.Stop()
				return nil, 0, 0, err
			}
			return s, caughtUp, ready, nil
		case <-tick.C:
			if m, err := scrapeMetrics(ctx, client, s.MetricsURL()); err == nil && caughtUp == 0 && m.sum(metricCaughtUp) == 1 {
				caughtUp = time.Since(start)
			}
		}
	}
}

// config is a Run on this environment's stream against syncer s, with
// the setup already published.
func (e *streamEnv) config(spec Spec, s *world.Syncer, maxPending int) (Config, error) {
	t, err := NewStreamTarget(e.js, world.Prefix, maxPending)
	if err != nil {
		return Config{}, err
	}
	return Config{
		Spec: spec, ControllerClass: world.ControllerClass, Certs: e.pool, Target: t, TargetName: "stream",
		NATS: e.conn, Stream: world.Stream, Prefix: world.Prefix, SkipSetup: true,
		Syncers: []SyncerRef{{Pod: s.Name, MetricsURL: s.MetricsURL()}},
		Processes: []ProcessSpec{
			{Name: "syncer", Pid: s.Proc.Pid(), Children: "nginx"},
			{Name: "churn+nats", Pid: os.Getpid()},
		},
		Progress: e.o.Progress, Logger: e.o.Logger,
	}, nil
}

// streamRun is a prepared stream scenario: its environment, the setup of
// its Spec published, and a syncer bootstrapped on it.
type streamRun struct {
	env                      *streamEnv
	syncer                   *world.Syncer
	objects                  int
	publish, caughtUp, ready time.Duration
}

// prepareStream starts the environment, publishes the setup of spec and
// bootstraps a syncer named name on it.
func prepareStream(ctx context.Context, o ScenarioOptions, spec Spec, name string) (*streamRun, error) {
	e, err := startStreamEnv(ctx, o)
	if err != nil {
		return nil, err
	}
	r := &streamRun{env: e}
	if r.objects, r.publish, err = e.publishSetup(ctx, spec); err == nil {
		r.syncer, r.caughtUp, r.ready, err = e.bootstrap(ctx, name)
	}
	if err != nil {
		e.close()
		return nil, err
	}
	return r, nil
}

func (r *streamRun) close() {
	_ = r.syncer.Stop()
	r.env.close()
}

// streamSpec is the default Spec with n Ingresses over 100 namespaces (10
// for fewer than 10k).
func scaledSpec(o ScenarioOptions, n int) Spec {
	spec := DefaultSpec()
	spec.Ingresses, spec.Seed = n, max(o.Seed, 1)
	if n >= 10000 {
		spec.Namespaces = 100
	}
	return spec
}

// runStreamRateScenario: 1k Ingresses on the stream and one syncer, then
// endpoint changes in two phases: live, offered at 25k/s for 10s, where
// the rate is bounded by how fast this machine publishes; and a backlog of
// 100k changes published while the syncer is stopped (SIGSTOP), then
// worked off after SIGCONT, where the rate is the syncer's own.
func runStreamRateScenario(ctx context.Context, o ScenarioOptions, res *ScenarioResult) error {
	spec := scaledSpec(o, 1000)
	sr, err := prepareStream(ctx, o, spec, "syncer-0")
	if err != nil {
		return err
	}
	defer sr.close()
	e, s := sr.env, sr.syncer
	live := spec
	live.EndpointRate, live.Events, live.Duration = 25000, 250000, 10*time.Second
	liveRep, err := e.runOn(ctx, live, s, nil, nil)
	if err != nil {
		return err
	}
	backlog := spec
	backlog.EndpointRate, backlog.Events, backlog.Duration = 1e6, 100000, 0
	pause := func() { _ = s.Proc.Signal(syscall.SIGSTOP) }
	resume := func() { _ = s.Proc.Signal(syscall.SIGCONT) }
	backRep, err := e.runOn(ctx, backlog, s, pause, resume)
	if err != nil {
		return err
	}
	res.Reports["live"], res.Reports["backlog"] = liveRep, backRep
	streamRateFigures(liveRep, backRep, res)
	return nil
}

func streamRateFigures(live, backlog *Report, res *ScenarioResult) {
	drainRate := 0.0
	if backlog.Stream.DrainSeconds > 0 {
		drainRate = math.Round(float64(backlog.Events.Completed) / backlog.Stream.DrainSeconds)
	}
	syncer := processOf(backlog, "syncer")
	res.Figures = []Figure{
		{"live: events offered", live.Events.OfferedRate, "/s"},
		{"live: events published (acked)", live.Events.AchievedRate, "/s"},
		{"live: events applied by the syncer", live.Applied.Rate, "/s"},
	}
	res.Figures = append(res.Figures, latencyFigures("live: publish → applied", live.Applied.Latency)...)
	res.Figures = append(res.Figures, []Figure{
		{"live: stream lag max", float64(live.Stream.MaxLag), "messages"},
		{"live: dynamic updates", syncerOf(live).DynamicUpdates, ""},
		{"live: reloads", syncerOf(live).Reloads, ""},
		{"backlog: events", float64(backlog.Events.Completed), ""},
		{"backlog: worked off in", backlog.Stream.DrainSeconds, "s"},
		{"backlog: events applied by the syncer", drainRate, "/s"},
		{"backlog: builds", syncerOf(backlog).Builds, ""},
		{"backlog: syncer CPU", syncer.CPUSeconds, "s"},
	}...)
	if syncer.CPUSeconds > 0 {
		res.Figures = append(res.Figures, Figure{"backlog: events per syncer CPU-second", math.Round(float64(backlog.Events.Completed) / syncer.CPUSeconds), "/s"})
	}
	res.Figures = append(res.Figures, processFigures(live, "syncer", "nginx", "churn+nats")...)
	res.Checks = []Check{
		atLeast("events applied by one syncer (backlog)", drainRate, 20000, "/s"),
		atLeast("events applied by one syncer (live, publisher-bound here)", live.Applied.Rate, 20000, "/s"),
	}
}

// runOn runs spec on this environment against syncer s, with the setup
// already published; pause and resume are the churn hooks (may be nil).
func (e *streamEnv) runOn(ctx context.Context, spec Spec, s *world.Syncer, pause, resume func()) (*Report, error) {
	cfg, err := e.config(spec, s, 8192)
	if err != nil {
		return nil, err
	}
	cfg.OnChurnStart, cfg.OnWritesDone = pause, resume
	return Run(ctx, cfg)
}

// runRSSScenario: 10k Ingresses published, a syncer bootstraps them, then
// 200 endpoint changes per second for 10s; its RSS throughout.
func runRSSScenario(ctx context.Context, o ScenarioOptions, res *ScenarioResult) error {
	return runEndpointChurnAt(ctx, o, res, 10000, 300)
}

// runRSS50kScenario is runRSSScenario at 50k Ingresses.
func runRSS50kScenario(ctx context.Context, o ScenarioOptions, res *ScenarioResult) error {
	return runEndpointChurnAt(ctx, o, res, 50000, 500)
}

// runEndpointChurnAt bootstraps a syncer on n Ingresses from the stream,
// then publishes 200 endpoint changes/s for 10 s: publish → applied
// latency, the syncer's CPU and its RSS (at most rssMB).
func runEndpointChurnAt(ctx context.Context, o ScenarioOptions, res *ScenarioResult, n int, rssMB float64) error {
	spec := scaledSpec(o, n)
	spec.Duration = 10 * time.Second
	sr, err := prepareStream(ctx, o, spec, "syncer-0")
	if err != nil {
		return err
	}
	defer sr.close()
	rep, err := sr.env.runOn(ctx, spec, sr.syncer, nil, nil)
	if err != nil {
		return err
	}
	res.Reports["churn"] = rep
	syncer := processOf(rep, "syncer")
	res.Figures = []Figure{
		{"objects", float64(sr.objects), ""},
		{"bootstrap (start → ready)", seconds(sr.ready), "s"},
		{"syncer Go heap in use", syncerOf(rep).HeapInuseMB, "MB"},
	}
	res.Figures = append(res.Figures, latencyFigures("publish → applied", rep.Applied.Latency)...)
	res.Figures = append(res.Figures, syncerFigures(rep)...)
	res.Figures = append(res.Figures, processFigures(rep, "syncer", "nginx")...)
	k := fmt.Sprintf("%dk Ingresses", spec.Ingresses/1000)
	res.Checks = []Check{
		atMost("syncer RSS with "+k+" (max)", syncer.RSSMaxMB, rssMB, "MB"),
		atMost("publish → applied p99 with "+k+", 200 endpoint changes/s", rep.Applied.Latency.P99, 50, "ms"),
		atMost("syncer CPU with "+k+", 200 endpoint changes/s", syncer.CPUPercent, 25, "% of a core"),
	}
	return nil
}

// runBootstrapScenario: 50k objects published (16130 Ingresses with their
// Services and EndpointSlices, and 1613 TLS Secrets), then a new syncer:
// the time until it is ready (nginx serving the whole configuration).
func runBootstrapScenario(ctx context.Context, o ScenarioOptions, res *ScenarioResult) error {
	sr, err := prepareStream(ctx, o, scaledSpec(o, 16130), "syncer-new")
	if err != nil {
		return err
	}
	defer sr.close()
	procs := newProcSampler([]ProcessSpec{{Name: "syncer", Pid: sr.syncer.Proc.Pid(), Children: "nginx"}})
	procs.sample()
	objects, ready := sr.objects, sr.ready
	res.Figures = []Figure{
		{"objects", float64(objects), ""},
		{"publishing them", seconds(sr.publish), "s"},
		{"start → caught up", seconds(sr.caughtUp), "s"},
		{"start → ready", seconds(ready), "s"},
	}
	res.Figures = append(res.Figures, memoryFigures(procs, "at ready")...)
	// The workers load the route, backend and certificate tables from the
	// shared dicts in timers (every second): their memory settles after ready.
	time.Sleep(settleMemory)
	procs.sample()
	res.Figures = append(res.Figures, memoryFigures(procs, fmt.Sprintf("%s after ready", settleMemory))...)
	nginx := processOf(&Report{Processes: procs.report()}, "nginx")
	res.Checks = []Check{
		atMost(fmt.Sprintf("new syncer ready with %d objects", objects), seconds(ready), 5, "s"),
		atMost(fmt.Sprintf("nginx RSS %s after ready (master and workers)", settleMemory), nginx.RSSLastMB, 300, "MB"),
	}
	if d, err := timeConfigTest(ctx, sr.syncer.Dir); err == nil {
		res.Checks = append(res.Checks, atMost("nginx -t of the bootstrap nginx.conf", seconds(d), 1, "s"))
	} else {
		o.Logger.Warn("nginx -t of the served configuration failed", "err", err)
	}
	return nil
}

// settleMemory is how long after ready bootstrap-50k samples memory again.
const settleMemory = 5 * time.Second

// memoryFigures are the RSS and PSS of the last sample of every process,
// named with when.
func memoryFigures(procs *procSampler, when string) []Figure {
	var out []Figure
	for _, p := range procs.report() {
		out = append(out, Figure{p.Name + " RSS " + when, p.RSSLastMB, "MB"}, Figure{p.Name + " PSS " + when, p.PSSLastMB, "MB"})
	}
	return out
}

func processFigures(rep *Report, names ...string) []Figure {
	var out []Figure
	for _, n := range names {
		p := processOf(rep, n)
		out = append(out, Figure{n + " CPU", p.CPUPercent, "% of a core"}, Figure{n + " RSS max", p.RSSMaxMB, "MB"})
		if p.Pids > 1 {
			out = append(out, Figure{n + " PSS max (shared pages counted once)", p.PSSMaxMB, "MB"})
		}
	}
	return out
}

// timeConfigTest runs nginx -t on the nginx.conf a syncer's nginx serves
// from dir and returns how long it took: a step of every bootstrap and
// reload, which grew with the number of server blocks when every host was
// one (nginx.conf now holds global settings only).
func timeConfigTest(ctx context.Context, dir string) (time.Duration, error) {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		bin = "/usr/sbin/nginx"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	start := time.Now()
	out, err := exec.CommandContext(ctx, bin, "-t", "-q", "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-e", "stderr").CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("nginx -t: %w: %s", err, out)
	}
	return time.Since(start), nil
}
