package churn

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/test/testkit/freeport"
)

// The HTTPRoute scenarios: gateway-api-bench's route propagation (create →
// served, with 3k and 10k routes present) and route changes under steady
// traffic, on the same World as the Ingress scenarios.
const (
	routeChurnRate     = 50 // route changes per second
	routeEndpointRate  = 50 // endpoint changes per second beside them
	routeMaxExtra      = 500
	routeCreateTarget  = 30 // ms, create → served p99
	routeChurnProbes   = 8
	routeChurnEndpoint = 1 // endpoints per Service at least
)

func runHTTPRouteCreate3kScenario(ctx context.Context, o ScenarioOptions, res *ScenarioResult) error {
	return runHTTPRouteCreate(ctx, o, res, 3000)
}

func runHTTPRouteCreate10kScenario(ctx context.Context, o ScenarioOptions, res *ScenarioResult) error {
	return runHTTPRouteCreate(ctx, o, res, createBase)
}

// runHTTPRouteCreate: n HTTPRoutes through the API, then 50 new ones per
// second, every one followed through the Gateway's port until its host
// answers.
func runHTTPRouteCreate(ctx context.Context, o ScenarioOptions, res *ScenarioResult, n int) error {
	spec := httpRouteScenarioSpec(o, n)
	spec.EndpointRate, spec.IngressCreatesOnly, spec.IngressRate, spec.Duration = 0, true, createRate, createDuration
	if o.Duration > 0 {
		spec.Duration = o.Duration
	}
	rep, err := runOnGateway(ctx, o, spec, createProbes)
	if err != nil {
		return err
	}
	res.Reports["churn"] = rep
	res.Figures = []Figure{
		{"HTTPRoutes before the creates", float64(rep.Ingresses), ""},
		{"setup objects written", float64(rep.Setup.Objects), ""},
		{"setup applied and served after", rep.Setup.SettleSeconds, "s"},
		{"creates offered", rep.Events.OfferedRate, "/s"},
		{"creates written", rep.Events.AchievedRate, "/s"},
		{"creates followed through nginx", float64(rep.Served.Samples), ""},
		{"creates not followed (every probe busy)", float64(rep.Probes.Skipped), ""},
	}
	res.Figures = append(res.Figures, kubeFigures(rep, "create")...)
	res.Checks = []Check{
		atMost("HTTPRoute create → served by nginx p99", rep.Served.P99, routeCreateTarget, "ms"),
		atMost("reloads", syncerOf(rep).Reloads, 0, ""),
		failedProbes(rep),
	}
	if rep.Served.Samples == 0 {
		res.Error = "no create was served: see the report"
	}
	return nil
}

// runHTTPRouteChurnScenario: 10k HTTPRoutes, then route creates, updates
// and deletes beside endpoint changes whose new endpoints are probed.
func runHTTPRouteChurnScenario(ctx context.Context, o ScenarioOptions, res *ScenarioResult) error {
	spec := httpRouteScenarioSpec(o, createBase)
	spec.IngressRate, spec.EndpointRate, spec.MaxExtraIngresses = routeChurnRate, routeEndpointRate, routeMaxExtra
	spec.MinEndpoints, spec.Duration = routeChurnEndpoint, createDuration
	if o.Duration > 0 {
		spec.Duration = o.Duration
	}
	rep, err := runOnGateway(ctx, o, spec, routeChurnProbes)
	if err != nil {
		return err
	}
	res.Reports["churn"] = rep
	res.Figures = []Figure{
		{"HTTPRoutes before the churn", float64(rep.Ingresses), ""},
		{"changes offered", rep.Events.OfferedRate, "/s"},
		{"changes written", rep.Events.AchievedRate, "/s"},
		{"endpoint changes probed", float64(rep.Served.Samples), ""},
		{"probe requests", float64(rep.Probes.Requests), ""},
	}
	res.Figures = append(res.Figures, kubeFigures(rep, "write")...)
	res.Checks = []Check{
		atMost("reloads", syncerOf(rep).Reloads, 0, ""),
		failedProbes(rep),
	}
	if rep.Served.Samples == 0 {
		res.Error = "no change was probed: see the report"
	}
	return nil
}

// httpRouteScenarioSpec is the Spec of the HTTPRoute scenarios: n
// HTTPRoutes, no TLS.
func httpRouteScenarioSpec(o ScenarioOptions, n int) Spec {
	spec := scaledSpec(o, n)
	spec.Routes, spec.TLSEvery, spec.SecretRate = events.KindHTTPRoute, 0, 0
	return spec
}

// runOnGateway runs spec on a World whose watcher allocates the one port
// of a free range to the Gateway's listener, so the probes know where
// nginx serves the Gateway without asking.
func runOnGateway(ctx context.Context, o ScenarioOptions, spec Spec, probes int) (*Report, error) {
	ports, err := freeport.Ports(1)
	if err != nil {
		return nil, err
	}
	port := ports[0]
	o.WatcherArgs = append(slices.Clone(o.WatcherArgs), "--gateway-port-range", fmt.Sprintf("%d-%d", port, port),
		"--gateway-service-selector", "app.kubernetes.io/component=syncer", "--gateway-service-type", "ClusterIP")
	return runKube(ctx, o, spec, func(c *Config) {
		c.Probe.Concurrency = probes
		c.Probe.URL = withPort(c.Probe.URL, port)
	}, nil)
}

// withPort is base ("http://host:port") with another port.
func withPort(base string, port int) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	u.Host = u.Hostname() + ":" + strconv.Itoa(port)
	return u.String()
}
