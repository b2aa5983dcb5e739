package churn

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ingress-sync/ingress-sync/internal/certs"
)

// ScenarioOptions configure RunScenarios.
type ScenarioOptions struct {
	// BinDir holds the watcher and syncer binaries.
	BinDir string
	// Dir receives the logs, NATS storage and nginx directories; it must be
	// traversable by nginx's unprivileged workers.
	Dir string
	// Names selects scenarios (ScenarioNames); empty runs all.
	Names []string
	// Duration is the churn of the endpoints scenario (default 30s).
	Duration time.Duration
	Seed     uint64
	// SyncerArgs are appended to the syncers' flags (e.g. --max-holdoff).
	SyncerArgs []string
	// WatcherArgs are appended to the watcher's flags.
	WatcherArgs []string
	Progress    io.Writer
	Logger      *slog.Logger
}

// ScenarioResult is the outcome of one scenario: the churn report (when it
// ran one), the figures it measured and the targets they are held to.
type ScenarioResult struct {
	Name    string   `json:"name"`
	Title   string   `json:"title"`
	About   string   `json:"about"`
	Seconds float64  `json:"seconds"`
	Figures []Figure `json:"figures"`
	Checks  []Check  `json:"checks"`
	// Reports are the churn runs of the scenario, by phase.
	Reports map[string]*Report `json:"reports,omitempty"`
	Error   string             `json:"error,omitempty"`
}

// Figure is one measured value.
type Figure struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

// Check is a figure held to a target; Met says whether it is reached.
type Check struct {
	Name   string  `json:"name"`
	Target string  `json:"target"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit"`
	Met    bool    `json:"met"`
}

func atMost(name string, v, limit float64, unit string) Check {
	return Check{Name: name, Target: "<= " + withUnit(limit, unit), Value: v, Unit: unit, Met: v <= limit}
}

func atLeast(name string, v, limit float64, unit string) Check {
	return Check{Name: name, Target: ">= " + withUnit(limit, unit), Value: v, Unit: unit, Met: v >= limit}
}

// scenario is one benchmark run.
type scenario struct {
	name, title, about string
	run                func(ctx context.Context, o ScenarioOptions, res *ScenarioResult) error
}

func scenarios() []scenario {
	return []scenario{
		{"endpoints-1k", "1k Ingresses through the Kubernetes API, 200 endpoint changes/s, probes through nginx",
			"The whole system (etcd, kube-apiserver, embedded NATS, watcher, one syncer with nginx) and 240 echo " +
				"backends. Endpoint changes scale a Service between 1 and 4 endpoints or replace one (a new pod IP). " +
				"Probes follow a sample of the changes that add an endpoint to a host without TLS, one request every 5 ms.",
			runEndpointsScenario},
		{"stream-rate", "stream-only churn: endpoint changes published to JetStream as fast as one syncer applies them",
			"One syncer binary with nginx on 1k Ingresses. Live: offered at 25k/s for 10 s; the publisher and the " +
				"embedded NATS server run in the churn process, on the same two cores as the syncer and nginx, so the " +
				"rate is this machine's publishing rate, and the latency includes the wait for a publish slot. Backlog: " +
				"100k changes published while the syncer is stopped (SIGSTOP), then the time it takes after SIGCONT " +
				"to apply them all: the syncer's own rate.",
			runStreamRateScenario},
		{"rss-10k", "syncer memory with 10k Ingresses (bootstrap, then 200 endpoint changes/s for 10s)",
			"Resident memory of the syncer binary from /proc, sampled every second. The bootstrap time includes " +
				"nginx -t, the start of nginx and the push of the route, backend and certificate tables.",
			runRSSScenario},
		{"rss-50k", "syncer memory and CPU with 50k Ingresses (bootstrap, then 200 endpoint changes/s for 10s)",
			"As rss-10k, with 50k Ingresses (and their Services, EndpointSlices and one TLS Secret in ten).",
			runRSS50kScenario},
		{"bootstrap-50k", "a new syncer bootstraps 50k objects from the stream",
			"16130 Ingresses with their Services and EndpointSlices and 1613 TLS Secrets published, then a syncer " +
				"started: ready when nginx serves the whole configuration (first build, nginx.conf rendered, nginx -t, " +
				"nginx started, routes, backends and certificates pushed). Memory of the syncer and of nginx (master " +
				"and workers) from /proc at ready. The nginx -t figure times that step again on the same file.",
			runBootstrapScenario},
		{"ingress-create-10k", "10k Ingresses through the Kubernetes API, then 50 new Ingresses/s, each followed through nginx",
			"The whole system as in endpoints-1k. After the setup (10k Ingresses with their Services and " +
				"EndpointSlices, 1k TLS Secrets, written by 16 API clients), new Ingresses (a new host each, to an " +
				"existing Service) are created at 50/s; up to 32 at once are probed through nginx every 5 ms from the " +
				"start of the API write until a backend answers their host (nginx answers 404 until then). Reloads " +
				"are the syncer's reload counter before and after the creates.",
			runIngressCreateScenario},
		{"ingress-burst-1k", "10k Ingresses through the Kubernetes API, then 1,000 new Ingresses at once",
			"The whole system as in endpoints-1k, set up as in ingress-create-10k. Then 1000 new Ingresses are " +
				"written at once (16 API clients). The last one served is the create with the highest resourceVersion " +
				"(the watcher publishes in that order and the syncer applies the stream in order), requested through " +
				"nginx every 5 ms from the start of the burst; afterwards every host of the burst is requested once.",
			runIngressBurstScenario},
		{"httproute-create-3k", "3k HTTPRoutes through the Kubernetes API, then 50 new HTTPRoutes/s, each followed through nginx",
			"As ingress-create-10k, with HTTPRoutes instead of Ingresses: one GatewayClass of ours, one Gateway with " +
				"an HTTP listener on port 80 taking routes of every namespace (served by nginx on the port the watcher " +
				"allocates it), 3k HTTPRoutes (one host each, to its own Service), then new HTTPRoutes at 50/s, each " +
				"probed through the Gateway's port every 5 ms from the start of the API write until a backend answers.",
			runHTTPRouteCreate3kScenario},
		{"httproute-create-10k", "10k HTTPRoutes through the Kubernetes API, then 50 new HTTPRoutes/s, each followed through nginx",
			"As httproute-create-3k, with 10k HTTPRoutes before the creates.", runHTTPRouteCreate10kScenario},
		{"httproute-churn-10k", "10k HTTPRoutes, then route creates, updates and deletes under steady traffic",
			"As httproute-create-10k; then, for 30 s, 50 route changes/s (create, update of a rule, delete of the " +
				"HTTPRoutes the churn made; base routes are never deleted) and 50 endpoint changes/s, whose added " +
				"endpoints are probed through nginx: every probe request must succeed and nothing may reload.",
			runHTTPRouteChurnScenario},
	}
}

// ScenarioNames lists the scenarios in the order they run.
func ScenarioNames() []string {
	var out []string
	for _, s := range scenarios() {
		out = append(out, s.name)
	}
	return out
}

// RunScenarios runs the selected scenarios one after the other, each on
// its own World or NATS server. A failing scenario is reported in its
// result and does not stop the others.
func RunScenarios(ctx context.Context, o ScenarioOptions) ([]ScenarioResult, error) {
	for _, n := range o.Names {
		if !slices.Contains(ScenarioNames(), n) {
			return nil, fmt.Errorf("%w: unknown scenario %q (known: %s)", ErrInvalidSpec, n, strings.Join(ScenarioNames(), ", "))
		}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	var out []ScenarioResult
	for _, s := range scenarios() {
		if len(o.Names) > 0 && !slices.Contains(o.Names, s.name) {
			continue
		}
		res := ScenarioResult{Name: s.name, Title: s.title, About: s.about, Reports: map[string]*Report{}}
		fmt.Fprintf(o.Progress, "== scenario %s: %s\n", s.name, s.title)
		start := time.Now()
		so := o
		so.Dir = filepath.Join(o.Dir, s.name)
		err := os.MkdirAll(so.Dir, 0o755)
		if err == nil {
			err = s.run(ctx, so, &res)
		}
		if err != nil {
			res.Error = err.Error()
			o.Logger.Error("scenario failed", "scenario", s.name, "err", err)
		}
		res.Seconds = seconds(time.Since(start))
		out = append(out, res)
	}
	return out, nil
}

// CertificatePool generates n certificates for *.<domain>.
func CertificatePool(domain string, n int) ([]*certs.Pair, error) {
	out := make([]*certs.Pair, 0, n)
	for range n {
		p, err := certs.Generate(certs.Options{Hosts: []string{"*." + domain}})
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// latencyFigures are the percentiles of l, named after what they measure.
func latencyFigures(what string, l Latency) []Figure {
	return []Figure{{what + " p50", l.P50, "ms"}, {what + " p90", l.P90, "ms"}, {what + " p99", l.P99, "ms"}, {what + " max", l.Max, "ms"}}
}

// processOf finds a report by name.
func processOf(rep *Report, name string) ProcessReport {
	for _, p := range rep.Processes {
		if p.Name == name {
			return p
		}
	}
	return ProcessReport{Name: name}
}

// syncerFigures are the build and event-lag figures of the first syncer.
func syncerFigures(rep *Report) []Figure {
	s := syncerOf(rep)
	out := []Figure{{"syncer builds", s.Builds, ""}, {"syncer dynamic updates", s.DynamicUpdates, ""}, {"syncer reloads", s.Reloads, ""}}
	for _, h := range []struct {
		name string
		v    *float64
	}{
		{"syncer build duration p50 (histogram bound)", s.BuildP50Ms}, {"syncer build duration p99 (histogram bound)", s.BuildP99Ms},
		{"syncer event lag p50 (watcher observed → applied, histogram bound)", s.EventLagP50Ms},
		{"syncer event lag p99 (histogram bound)", s.EventLagP99Ms},
	} {
		if h.v != nil {
			out = append(out, Figure{h.name, *h.v, "ms"})
		}
	}
	return out
}

func syncerOf(rep *Report) SyncerReport {
	if len(rep.Syncers) == 0 {
		return SyncerReport{}
	}
	return rep.Syncers[0]
}
