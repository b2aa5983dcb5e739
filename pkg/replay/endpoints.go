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

// serviceStore holds only one Service, its EndpointSlices and an Ingress
// routing one path to each of ports (Service port names or numbers as
// Ingresses reference them): model.Build on it gives the endpoints of the
// Backends of that Service. Endpoints depend on nothing else, so they come
// from the same code as in a full Build. It is kept up to date with the
// slice events of its Service.
type serviceStore struct {
	store *model.Store
	ports []string
}

// newServiceStore copies Service namespace/name and its slices from s; nil
// when s has no such Service.
func newServiceStore(s *model.Store, namespace, name string, ports []string) *serviceStore {
	svc := s.Service(namespace, name)
	if svc == nil {
		return nil
	}
	ss := &serviceStore{store: model.NewStore(), ports: ports}
	ss.apply(events.Event{Op: events.OpCreate, Kind: events.KindService, Namespace: namespace, Name: name, Object: svc})
	for _, sl := range s.EndpointSlicesForService(namespace, name) {
		ss.apply(events.Event{Op: events.OpCreate, Kind: events.KindEndpointSlice, Namespace: namespace, Name: sl.Name, Object: sl})
	}
	ss.apply(events.Event{Op: events.OpCreate, Kind: events.KindIngress, Namespace: namespace, Name: "replay-endpoints",
		Object: routingIngress(namespace, name, ports)})
	return ss
}

// apply records an event the main store accepted; it cannot fail here.
func (ss *serviceStore) apply(ev events.Event) { _ = ss.store.Apply(ev) }

// endpoints returns the endpoints of each port that Build resolves.
func (ss *serviceStore) endpoints() map[string][]model.Endpoint {
	cfg := model.Build(ss.store, model.Options{ControllerClass: endpointsController, WatchIngressWithoutClass: true})
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
