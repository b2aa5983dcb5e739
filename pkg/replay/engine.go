package replay

import (
	"fmt"
	"slices"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/model"
)

// engine holds a Store and the Configuration that model.Build makes of it,
// and tells, event after event, what each one changed. The invariant after
// every step is cur == model.Build(store, opts) (cur.Checksum aside, see
// exact). To be fast it builds in full only when an event can change more
// than endpoints:
//
//   - A ConfigMap other than Options.ConfigMap, a Secret that no Ingress
//     lists in spec.tls and that is not Options.DefaultSSLCertificate, and a
//     Service that no Ingress references and that is not
//     Options.DefaultBackendService are read by nothing in Build: no change.
//   - An EndpointSlice only feeds the endpoints of the Backends of the
//     Service it is labelled with (before and after the event). Those are
//     recomputed by model.Build on a store holding just that Service, its
//     slices and an Ingress routing to each of its ports (endpointsOf), and
//     patched into cur; the rest of cur cannot change.
//   - An Ingress that is not served before nor after its event (another
//     class) is not read by Build either.
//   - Everything else (served Ingresses, IngressClasses, referenced
//     Services, Secrets and the controller ConfigMap) is a full Build.
type engine struct {
	opts  model.Options
	store *model.Store
	cur   *model.Configuration
	// exact is false once endpoints were patched into cur: cur.Checksum is
	// then stale and is recomputed when asked for (checksum).
	exact bool
	// hosts maps a backend name to the hosts routing to it in cur, and
	// backends a Service to the indexes of its Backends in cur.Backends;
	// both only change with a full Build.
	hosts    map[string][]string
	backends map[serviceKey][]int
	// services are the one-Service stores of the EndpointSlice path, kept
	// until the next full Build (which may change Services or ports).
	services map[serviceKey]*serviceStore
	// verify (tests) compares every step with a full Build; verifyErr is
	// the first difference.
	verify    bool
	verifyErr error
}

func newEngine(opts model.Options) *engine {
	return &engine{opts: opts, store: model.NewStore()}
}

// apply records ev in the store without building (events before a
// timeline's start).
func (e *engine) apply(ev events.Event) error { return e.store.Apply(ev) }

// rebuild builds cur in full from the store.
func (e *engine) rebuild() {
	e.cur = model.Build(e.store, e.opts)
	e.exact = true
	e.hosts = backendHosts(e.cur)
	e.services = map[serviceKey]*serviceStore{}
	e.backends = make(map[serviceKey][]int, len(e.cur.Backends))
	for i, b := range e.cur.Backends {
		k := serviceKey{b.Namespace, b.Service}
		e.backends[k] = append(e.backends[k], i)
	}
}

// serviceKey identifies a Service.
type serviceKey struct{ namespace, name string }

// checksum is the checksum of cur, recomputed if endpoints were patched.
func (e *engine) checksum() string {
	if !e.exact {
		e.cur.Checksum = e.cur.ComputeChecksum()
		e.exact = true
	}
	return e.cur.Checksum
}

// step applies ev and says what it changed and whether the Configuration
// differs. A store error leaves the store and cur as they were.
func (e *engine) step(ev events.Event) (Diff, model.Change, bool, error) {
	if e.cur == nil {
		e.rebuild()
	}
	var oldSlice *discoveryv1.EndpointSlice
	oldServed := false
	switch ev.Kind {
	case events.KindEndpointSlice:
		oldSlice = e.store.EndpointSlice(ev.Namespace, ev.Name)
	case events.KindIngress:
		oldServed = e.served(ev.Namespace, ev.Name)
	}
	if err := e.store.Apply(ev); err != nil {
		return Diff{}, model.Change{}, false, err
	}
	var d Diff
	var ch model.Change
	changed := false
	switch {
	case !e.canChange(ev):
	case ev.Kind == events.KindIngress && !oldServed && !e.served(ev.Namespace, ev.Name):
		// Build reads only the Ingresses it serves; the classes did not change.
	case ev.Kind == events.KindEndpointSlice:
		d, ch = e.stepSlice(ev, oldSlice)
		changed = len(ch.BackendsUpserted) > 0
	default:
		d, ch, changed = e.stepFull()
	}
	if e.verify {
		e.check(ev)
	}
	return d, ch, changed, nil
}

// canChange reports whether ev may change the Configuration; false only
// when Build provably reads nothing of ev's object.
func (e *engine) canChange(ev events.Event) bool {
	key := ev.Namespace + "/" + ev.Name
	switch ev.Kind {
	case events.KindConfigMap:
		// The controller's, or one an Ingress or the controller's names
		// (custom-headers, auth-proxy-set-headers, proxy-set-headers): the
		// watcher publishes no other.
		return true
	case events.KindSecret:
		return key == e.opts.DefaultSSLCertificate || len(e.store.IngressesForSecret(ev.Namespace, ev.Name)) > 0
	case events.KindService:
		return e.serviceUsed(ev.Namespace, ev.Name)
	}
	return true
}

// served reports whether the store holds Ingress namespace/name and Build
// serves it.
func (e *engine) served(namespace, name string) bool {
	ing := e.store.Ingress(namespace, name)
	return ing != nil && e.store.Serves(ing, e.opts)
}

// serviceUsed reports whether Build can read the Service.
func (e *engine) serviceUsed(namespace, name string) bool {
	return namespace+"/"+name == e.opts.DefaultBackendService || len(e.store.IngressesForService(namespace, name)) > 0
}

// stepFull builds in full and compares with cur. Diff covers everything
// the checksum covers but a default certificate that went away, compared
// here.
func (e *engine) stepFull() (Diff, model.Change, bool) {
	old, oldHosts := e.cur, e.hosts
	e.rebuild()
	ch := model.Diff(old, e.cur)
	if ch.Empty() && old.DefaultCertificate == e.cur.DefaultCertificate {
		return Diff{}, model.Change{}, false
	}
	return summarize(old, ch, oldHosts, e.hosts), ch, true
}

// stepSlice recomputes the endpoints of the Backends of the Services the
// slice ev belonged to before (before) and after the event.
func (e *engine) stepSlice(ev events.Event, before *discoveryv1.EndpointSlice) (Diff, model.Change) {
	var d Diff
	var ch model.Change
	done := ""
	for _, s := range []*discoveryv1.EndpointSlice{before, e.store.EndpointSlice(ev.Namespace, ev.Name)} {
		if s == nil {
			continue
		}
		svc := s.Labels[discoveryv1.LabelServiceName]
		if svc == "" || svc == done || !e.serviceUsed(ev.Namespace, svc) {
			continue
		}
		done = svc
		e.patchService(ev, svc, &d, &ch)
	}
	if len(ch.BackendsUpserted) > 0 {
		d.Hosts = hostsOf(e.hosts, ch.BackendsUpserted)
		sortDiff(&d)
	}
	return d, ch
}

// patchService puts the current endpoints into cur's Backends of Service
// name (in the namespace of the slice event ev) and records those that
// changed.
func (e *engine) patchService(ev events.Event, name string, d *Diff, ch *model.Change) {
	key := serviceKey{ev.Namespace, name}
	idx := e.backends[key]
	if len(idx) == 0 {
		return
	}
	ss := e.services[key]
	if ss == nil {
		ports := make([]string, len(idx))
		for j, i := range idx {
			ports[j] = e.cur.Backends[i].Port
		}
		if ss = newServiceStore(e.store, ev.Namespace, name, ports); ss == nil {
			return
		}
		e.services[key] = ss
	} else {
		ss.apply(ev)
	}
	eps := ss.endpoints()
	for _, i := range idx {
		b := &e.cur.Backends[i]
		if slices.Equal(b.Endpoints, eps[b.Port]) {
			continue
		}
		nb := *b
		// The checksum is left to whoever needs it (model.Diff and
		// ComputeChecksum compute a missing one): BackendChecksum per event
		// would cost more than the rest of the step.
		nb.Endpoints, nb.Checksum = eps[b.Port], ""
		d.Endpoints = append(d.Endpoints, endpointChange(b, &nb))
		ch.BackendsUpserted = append(ch.BackendsUpserted, nb)
		*b = nb
		e.exact = false
	}
}

// check compares cur with a full Build (tests only).
func (e *engine) check(ev events.Event) {
	full := model.Build(e.store, e.opts)
	if got, want := e.checksum(), full.Checksum; got != want && e.verifyErr == nil {
		e.verifyErr = fmt.Errorf("replay: incremental configuration after seq %d (%s %s %s) has checksum %s, a full Build %s",
			ev.Sequence, ev.Op, ev.Kind, ev.Key(), got, want)
	}
}

// has reports whether the store holds the object of ev.
func (e *engine) has(ev events.Event) bool {
	s, ns, n := e.store, ev.Namespace, ev.Name
	switch ev.Kind {
	case events.KindIngress:
		return s.Ingress(ns, n) != nil
	case events.KindIngressClass:
		return s.IngressClass(n) != nil
	case events.KindService:
		return s.Service(ns, n) != nil
	case events.KindEndpointSlice:
		return s.EndpointSlice(ns, n) != nil
	case events.KindSecret:
		return s.Secret(ns, n) != nil
	case events.KindConfigMap:
		return s.ConfigMap(ns, n) != nil
	}
	return false
}
