package churn

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/ingress-sync/ingress-sync/pkg/stream"
	"github.com/ingress-sync/ingress-sync/test/testkit/netns"
	"github.com/ingress-sync/ingress-sync/test/testkit/world"
)

// kubeWorkers is how many API writes the endpoints scenario runs at once.
const kubeWorkers = 16

// runEndpointsScenario: a World (control plane, NATS, watcher, one syncer
// with nginx) in the private namespace, echo backends on 198.18.0.1-240,
// 1k Ingresses written through the API, then 200 endpoint changes per
// second, followed through the stream, the syncer's reports and nginx.
func runEndpointsScenario(ctx context.Context, o ScenarioOptions, res *ScenarioResult) error {
	spec := DefaultSpec()
	spec.Seed = max(o.Seed, 1)
	if o.Duration > 0 {
		spec.Duration = o.Duration
	}
	rep, err := runKube(ctx, o, spec, nil, nil)
	if err != nil {
		return err
	}
	res.Reports["churn"] = rep
	endpointsFigures(rep, res)
	return nil
}

// runKube runs spec on a World in the private namespace (control plane,
// NATS, watcher, one syncer with nginx) with echo backends on the Spec's
// addresses; mutate, when set, adjusts the churn Config first, and after,
// when set, runs after the churn while the World still runs.
func runKube(ctx context.Context, o ScenarioOptions, spec Spec, mutate func(*Config), after func(context.Context, Config)) (*Report, error) {
	if !netns.Inside() {
		return nil, ErrOutsideNetns
	}
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	w, err := world.Start(wctx, world.Options{BinDir: o.BinDir, Dir: o.Dir, Syncers: 1,
		AdvertiseAddress: netns.AdvertiseAddress, StatusAddress: "198.18.0.250", SyncerArgs: o.SyncerArgs,
		WatcherArgs: o.WatcherArgs})
	cancel()
	if err != nil {
		return nil, err
	}
	defer func() { _ = w.Stop() }()
	backends, err := StartBackends(spec.Addresses, spec.Port)
	if err != nil {
		return nil, err
	}
	defer func() { _ = backends.Close() }()
	cfg, err := endpointsConfig(ctx, w, spec, o.Logger)
	if err != nil {
		return nil, err
	}
	defer cfg.NATS.Close()
	cfg.Progress, cfg.Logger = o.Progress, o.Logger
	if mutate != nil {
		mutate(&cfg)
	}
	rep, err := Run(ctx, cfg)
	if err == nil && after != nil {
		after(ctx, cfg)
	}
	return rep, err
}

func endpointsConfig(ctx context.Context, w *world.World, spec Spec, log *slog.Logger) (Config, error) {
	pool, err := CertificatePool(spec.Domain, 4)
	if err != nil {
		return Config{}, err
	}
	target, err := NewKubeTarget(w.CP.Config(), kubeWorkers)
	if err != nil {
		return Config{}, err
	}
	conn, err := stream.Connect(ctx, w.NATSURL, stream.WithName("churn"), stream.WithConnectOnce(), stream.WithConnectLogger(log))
	if err != nil {
		return Config{}, err
	}
	s := w.Syncers[0]
	return Config{
		Spec: spec, ControllerClass: world.ControllerClass, Certs: pool, Target: target, TargetName: "kube",
		NATS: conn, Stream: world.Stream, Prefix: world.Prefix,
		Probe:   ProbeConfig{URL: "http://127.0.0.1:" + strconv.Itoa(s.HTTPPort)},
		Syncers: []SyncerRef{{Pod: s.Name, MetricsURL: "http://127.0.0.1:" + strconv.Itoa(s.MetricsPort) + "/metrics"}},
		Processes: []ProcessSpec{
			{Name: "watcher", Pid: w.Watcher.Proc.Pid()},
			{Name: "syncer", Pid: s.Proc.Pid(), Children: "nginx"},
			{Name: "churn+nats", Pid: os.Getpid()},
		},
	}, nil
}

func endpointsFigures(rep *Report, res *ScenarioResult) {
	sy := syncerOf(rep)
	res.Figures = []Figure{
		{"Ingresses", float64(rep.Ingresses), ""},
		{"setup objects written", float64(rep.Setup.Objects), ""},
		{"endpoint changes offered", rep.Events.OfferedRate, "/s"},
		{"endpoint changes written", rep.Events.AchievedRate, "/s"},
		{"changes probed", float64(rep.Served.Samples), ""},
		{"probe requests", float64(rep.Probes.Requests), ""},
		{"stream lag max", float64(rep.Stream.MaxLag), "messages"},
	}
	res.Figures = append(res.Figures, kubeFigures(rep, "write")...)
	res.Checks = []Check{
		atMost("end-to-end p99 (write → served by nginx)", rep.Served.P99, 100, "ms"),
		atMost("write → applied by the syncer p99", rep.Applied.P99, 100, "ms"),
		atMost("reloads", sy.Reloads, 0, ""),
		failedProbes(rep),
	}
	if rep.Served.Samples == 0 || rep.Applied.Samples == 0 {
		res.Error = "no latency samples: see the report"
	}
}

// kubeFigures are the figures every kube scenario reports after its own:
// the syncer's, the latencies from what (the write) to the stream, to the
// syncer and to nginx, and the processes.
func kubeFigures(rep *Report, what string) []Figure {
	out := syncerFigures(rep)
	out = append(out, latencyFigures(what+" → in the stream", rep.Streamed)...)
	out = append(out, latencyFigures(what+" → applied by the syncer", rep.Applied.Latency)...)
	out = append(out, latencyFigures(what+" → served by nginx", rep.Served)...)
	return append(out, processFigures(rep, "watcher", "syncer", "nginx", "churn+nats")...)
}

// failedProbes holds the failed probe requests and timeouts to 0.
func failedProbes(rep *Report) Check {
	return atMost("failed probe requests (and timeouts)", float64(rep.Probes.Failed+rep.Probes.Timeouts), 0, "")
}
