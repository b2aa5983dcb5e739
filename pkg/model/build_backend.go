package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// backendKey identifies a Backend: a Service port as Ingresses reference it.
type backendKey struct {
	namespace, service, port string
}

func (k backendKey) name() string { return k.namespace + "-" + k.service + "-" + k.port }

func compareBackendKeys(a, b backendKey) int {
	if c := cmp.Compare(a.namespace, b.namespace); c != 0 {
		return c
	}
	if c := cmp.Compare(a.service, b.service); c != 0 {
		return c
	}
	return cmp.Compare(a.port, b.port)
}

// backendState is a Backend while it is built. Resolution is done once
// per key and remembered, failures included.
type backendState struct {
	key       backendKey
	err       error
	endpoints []config.Endpoint
	epSum     config.EndpointsSum
	// used is set when a location or the default backend routes here;
	// users are the Ingresses that do (nil for the default backend flag
	// and the default-backend annotation), oldest first.
	used  bool
	users []*intent.Entry
	// opinions are the Ingresses routing here that set balancing
	// annotations.
	opinions []*intent.Entry
	// upstreamOpinions are those that set service-upstream.
	upstreamOpinions []*intent.Entry
	name             string
	// portName is the Service port's name, the one of its slices' ports;
	// clusterIP is set when service-upstream replaced the endpoints by the
	// Service's ClusterIP (see Incremental).
	portName  string
	clusterIP bool
}

// use records that e routes to the backend.
func (be *backendState) use(e *intent.Entry) {
	be.used = true
	if n := len(be.users); n == 0 || be.users[n-1] != e {
		be.users = append(be.users, e)
	}
	if e != nil && e.Settings.Balancing != nil {
		be.opinions = append(be.opinions, e)
	}
	be.noteServiceUpstream(e)
}

var errExternalName = errors.New("is of type ExternalName, which is not supported (the balancer needs endpoint addresses)")

// backendFor resolves an Ingress backend in namespace ns.
func (b *builder) backendFor(ns string, ref intent.BackendRef) (*backendState, error) {
	if ref.Unsupported {
		return nil, errors.New("only Service backends are supported")
	}
	ns = cmp.Or(ref.Namespace, ns)
	if !intent.IsDNSLabel(ref.Service) || !intent.IsDNSLabel(ns) {
		return nil, fmt.Errorf("service %q in namespace %q is not a valid name", ref.Service, ns)
	}
	var port string
	switch {
	case ref.PortName != "":
		if !intent.IsDNSLabel(ref.PortName) {
			return nil, fmt.Errorf("service %s port name %q is not valid", ref.Service, ref.PortName)
		}
		port = ref.PortName
	case ref.PortNumber > 0:
		port = strconv.Itoa(int(ref.PortNumber))
	default:
		return nil, fmt.Errorf("service %s has no port name or number", ref.Service)
	}
	key := backendKey{ns, ref.Service, port}
	be, ok := b.lastBackend, b.lastBackend != nil && b.lastBackend.key == key
	if !ok {
		be, ok = b.backends[key]
	}
	if !ok {
		be = b.backendSlab.alloc()
		b.backendList = append(b.backendList, be)
		be.key = key
		be.err = b.resolve(be, ref)
		b.backends[key] = be
	}
	b.lastBackend = be
	if be.err != nil {
		return nil, be.err
	}
	return be, nil
}

// resolve finds the Service port and its ready endpoints.
func (b *builder) resolve(be *backendState, ref intent.BackendRef) error {
	svcKey := intent.Key{Namespace: be.key.namespace, Name: be.key.service}
	svc := b.s.services[svcKey]
	if svc == nil {
		return fmt.Errorf("service %s not found", svcKey)
	}
	if svc.typ == corev1.ServiceTypeExternalName {
		return fmt.Errorf("service %s %w", svcKey, errExternalName)
	}
	sp := servicePort(svc, ref)
	if sp == nil {
		return fmt.Errorf("service %s has no port %s", svcKey, be.key.port)
	}
	be.portName = sp.name
	be.endpoints, be.epSum = b.endpoints(svcKey, sp.name)
	return nil
}

func servicePort(svc *serviceEntry, ref intent.BackendRef) *servicePortEntry {
	for i := range svc.ports {
		p := &svc.ports[i]
		if ref.PortName != "" && p.name == ref.PortName || ref.PortName == "" && p.port == ref.PortNumber {
			return p
		}
	}
	return nil
}

// endpoints merges the ready endpoints of the Service's slices for the
// slice port named portName. A single contributing slice is used as it is,
// with the sum the Store computed.
func (b *builder) endpoints(svc intent.Key, portName string) ([]config.Endpoint, config.EndpointsSum) {
	var first *slicePort
	var merged []config.Endpoint
	for _, se := range b.s.slicesByService[svc] {
		p := se.port(portName)
		switch {
		case p == nil || len(p.endpoints) == 0:
		case first == nil:
			first = p
		default:
			if merged == nil {
				merged = append(make([]config.Endpoint, 0, 2*len(first.endpoints)), first.endpoints...)
			}
			merged = append(merged, p.endpoints...)
		}
	}
	switch {
	case merged != nil:
		slices.SortFunc(merged, compareEndpoints)
		merged = slices.Compact(merged)
		return merged, config.SumEndpoints(merged)
	case first != nil:
		return first.endpoints, first.sum
	}
	return []config.Endpoint{}, config.SumEndpoints(nil)
}

func compareEndpoints(a, b config.Endpoint) int {
	if c := cmp.Compare(a.Address, b.Address); c != 0 {
		return c
	}
	return cmp.Compare(a.Port, b.Port)
}

// flagDefaultBackend resolves Options.DefaultBackendService on its first
// port; nil (the built-in 404) with a Problem when it cannot.
func (b *builder) flagDefaultBackend() *backendState {
	key, err := intent.ParseKey(b.opts.DefaultBackendService)
	if err != nil {
		b.problem(config.ProblemKindOptions, "", "default-backend-service", "%v", err)
		return nil
	}
	svc := b.s.services[key]
	if svc == nil || len(svc.ports) == 0 {
		b.problem("Service", key.Namespace, key.Name, "default backend service not found or without ports; the built-in 404 answers")
		return nil
	}
	be, err := b.backendFor(key.Namespace, intent.BackendRef{Service: key.Name, PortNumber: svc.ports[0].port})
	if err != nil {
		b.problem("Service", key.Namespace, key.Name, "default backend: %v; the built-in 404 answers", err)
		return nil
	}
	be.use(nil)
	return be
}

// finishBackends names the used backends and returns them sorted by name.
func (b *builder) finishBackends() config.BackendList {
	used := make([]*backendState, 0, len(b.backendList))
	for _, be := range b.backendList {
		if be.used {
			be.name = be.key.name()
			used = append(used, be)
		}
	}
	slices.SortFunc(used, func(x, y *backendState) int {
		if c := cmp.Compare(x.name, y.name); c != 0 {
			return c
		}
		return compareBackendKeys(x.key, y.key)
	})
	renamed := false
	base := ""
	for i, be := range used {
		if i > 0 && be.name == base {
			be.name += "-" + keyHash(be.key)
			renamed = true
		} else {
			base = be.name
		}
	}
	if renamed {
		slices.SortFunc(used, func(x, y *backendState) int { return cmp.Compare(x.name, y.name) })
	}
	w := config.NewHasher()
	arr := make([]config.Backend, len(used))
	for i, be := range used {
		arr[i] = b.backend(be)
	}
	b.finishAffinity(used, arr)
	out := make([]*config.Backend, len(used))
	for i, be := range used {
		arr[i].Checksum = w.Backend(&arr[i], be.epSum)
		out[i] = &arr[i]
	}
	return config.NewBackendList(out)
}

func keyHash(k backendKey) string {
	sum := sha256.Sum256([]byte(k.namespace + "/" + k.service + "/" + k.port))
	return hex.EncodeToString(sum[:4])
}

// backend builds the Backend of be, with the balancing settings of the
// oldest Ingress that sets them.
func (b *builder) backend(be *backendState) config.Backend {
	out := config.Backend{
		Name:        be.name,
		Namespace:   be.key.namespace,
		Service:     be.key.service,
		Port:        be.key.port,
		Endpoints:   be.endpoints,
		LoadBalance: cmp.Or(b.global.LoadBalance, config.LoadBalanceRoundRobin),
	}
	b.applyServiceUpstream(be, &out)
	if len(be.opinions) == 0 {
		return out
	}
	slices.SortFunc(be.opinions, compareAge)
	be.opinions = slices.Compact(be.opinions)
	winner := be.opinions[0]
	bal := winner.Settings.Balancing
	out.LoadBalance, out.UpstreamHashBy, out.UpstreamHashBySubsetSize = bal.LoadBalance, bal.HashBy, bal.SubsetSize
	if bal.Affinity != nil {
		a := *bal.Affinity
		out.Affinity = &a
	}
	for _, e := range be.opinions[1:] {
		if !e.Settings.Balancing.Equal(bal) {
			b.entryProblem(e, "backend %s: load-balance, upstream-hash-by and affinity annotations differ from %s, which is older and is used; ignored",
				be.name, winner)
		}
	}
	return out
}
