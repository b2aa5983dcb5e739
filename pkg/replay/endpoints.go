package replay

import (
	"net"
	"slices"
	"strconv"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/model"
)

// endpointsController is the controller class of the one-Service builds of
// endpointsOf; it never appears in output.
const endpointsController = "replay.ingress-sync.io/endpoints"

// endpointsOf returns, for each port (a Service port name or number as
// Ingresses reference it), the endpoints model.Build gives a Backend of
// Service namespace/name in s. It builds a store holding only that Service,
// its EndpointSlices and one Ingress with a path to each port: endpoints
// depend on nothing else, and they come from the same code as in a full
// Build. A port Build cannot resolve is left out.
func endpointsOf(s *model.Store, namespace, name string, ports []string) map[string][]model.Endpoint {
	svc := s.Service(namespace, name)
	if svc == nil {
		return nil
	}
	one := model.NewStore()
	apply := func(ev events.Event) { _ = one.Apply(ev) } // objects from a Store apply cleanly
	apply(events.Event{Op: events.OpCreate, Kind: events.KindService, Namespace: namespace, Name: name, Object: svc})
	for _, sl := range s.EndpointSlicesForService(namespace, name) {
		apply(events.Event{Op: events.OpCreate, Kind: events.KindEndpointSlice, Namespace: namespace, Name: sl.Name, Object: sl})
	}
	apply(events.Event{Op: events.OpCreate, Kind: events.KindIngress, Namespace: namespace, Name: "replay-endpoints",
		Object: routingIngress(namespace, name, ports)})
	cfg := model.Build(one, model.Options{ControllerClass: endpointsController, WatchIngressWithoutClass: true})
	out := make(map[string][]model.Endpoint, len(cfg.Backends))
	for _, b := range cfg.Backends {
		out[b.Port] = b.Endpoints
	}
	return out
}

// routingIngress routes one path to each port of Service name.
func routingIngress(namespace, name string, ports []string) *networkingv1.Ingress {
	prefix := networkingv1.PathTypePrefix
	paths := make([]networkingv1.HTTPIngressPath, 0, len(ports))
	for i, p := range ports {
		ref := networkingv1.ServiceBackendPort{Name: p}
		if n, err := strconv.ParseInt(p, 10, 32); err == nil {
			ref = networkingv1.ServiceBackendPort{Number: int32(n)}
		}
		paths = append(paths, networkingv1.HTTPIngressPath{
			Path: "/" + strconv.Itoa(i), PathType: &prefix,
			Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: name, Port: ref}},
		})
	}
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "replay-endpoints"},
		Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: paths}},
		}}},
	}
}

// endpointChange lists the endpoints added and removed from old to new.
func endpointChange(old, new *model.Backend) EndpointChange {
	c := EndpointChange{Backend: new.Name, Left: len(new.Endpoints)}
	i, j := 0, 0
	for i < len(old.Endpoints) || j < len(new.Endpoints) {
		switch cmpEndpoint(old.Endpoints, new.Endpoints, i, j) {
		case -1:
			c.Removed = append(c.Removed, endpointString(old.Endpoints[i]))
			i++
		case 1:
			c.Added = append(c.Added, endpointString(new.Endpoints[j]))
			j++
		default:
			i++
			j++
		}
	}
	return c
}

// cmpEndpoint compares a[i] with b[j]; an exhausted side sorts last.
func cmpEndpoint(a, b []model.Endpoint, i, j int) int {
	switch {
	case i == len(a):
		return 1
	case j == len(b):
		return -1
	}
	x, y := a[i], b[j]
	switch {
	case x.Address < y.Address || x.Address == y.Address && x.Port < y.Port:
		return -1
	case x == y:
		return 0
	}
	return 1
}

func endpointString(e model.Endpoint) string {
	return net.JoinHostPort(e.Address, strconv.Itoa(int(e.Port)))
}

// backendHosts maps each backend name to the hosts that route to it
// (locations of servers, "_" for the default server), sorted.
func backendHosts(c *model.Configuration) map[string][]string {
	out := make(map[string][]string, len(c.Backends))
	for _, s := range c.Servers {
		for _, l := range s.Locations {
			if l.Backend == "" {
				continue
			}
			if hs := out[l.Backend]; len(hs) == 0 || hs[len(hs)-1] != s.Hostname {
				out[l.Backend] = append(hs, s.Hostname)
			}
		}
	}
	for k, hs := range out {
		slices.Sort(hs)
		out[k] = slices.Compact(hs)
	}
	return out
}

// hostsOf is the sorted union of the hosts routing to the backends.
func hostsOf(idx map[string][]string, backends []model.Backend) []string {
	var out []string
	for _, b := range backends {
		out = append(out, idx[b.Name]...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
