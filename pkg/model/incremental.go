package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// Incremental builds Configurations from a Store in proportion to what
// changed since the last one: the syncer and replay apply events through
// it and ask it for the Configuration after each burst.
//
//   - Events that cannot change the Configuration (Store.CanChange) cost
//     nothing more than the Store update.
//   - EndpointSlice events change only the endpoints of Backends, TCP and
//     UDP services and passthrough hosts of their Services: those are
//     recomputed from the Store as Build computes them, the rest of the
//     Configuration is shared with the previous one, and the checksum
//     rehashes only the buckets of the changed Backends (checksum_tree.go).
//   - Ingress events rebuild the Servers of the hosts they touch, and of
//     the hosts of the Ingresses that share one with them (see
//     incremental_hosts.go), unless a setting of those Ingresses is
//     decided across hosts.
//   - Any other event that can change it makes the next Configuration a
//     full Build, the reference: the result of an Incremental is always
//     equal to Build of the same Store (the property test checks it after
//     every step of random event sequences).
//
// Configurations it returns are never modified afterwards. An Incremental
// is not safe for concurrent use.
type Incremental struct {
	s    *Store
	opts Options
	cur  *config.Configuration
	sums *config.Sums
	// deps are, by Service, the Backends of cur whose endpoints are that
	// Service's (not service-upstream's ClusterIP).
	deps map[intent.Key][]endpointDep
	// depOf is the Service of deps that feeds each Backend, by name.
	depOf map[string]intent.Key
	// full: the next Configuration needs a full Build; touched: the
	// Services whose endpoints changed since cur otherwise; changes: the
	// Ingress events since cur.
	full    bool
	touched map[intent.Key]struct{}
	changes []entryChange
	// hostsOK is set when cur leaves Ingress changes to rebuildHosts (no
	// server-alias annotation, no renamed Backends);
	// defaultWinner is the Ingress whose spec.defaultBackend cur uses.
	hostsOK       bool
	defaultWinner entryKey
	// users are, by Backend name, the Ingresses that route to it in cur
	// (Key{} for the default backend flag and default-backend
	// annotations).
	users map[string][]entryKey
	// w is the writer of the Backends' checksums of patches.
	w *config.Hasher
}

// endpointDep is a Backend of cur fed by a Service's slices.
type endpointDep struct {
	name string // of the Backend
	port string // the slices' port name
	sum  config.EndpointsSum
}

// NewIncremental returns an Incremental over s (which it applies events
// to) building with opts.
func NewIncremental(s *Store, opts Options) *Incremental {
	return &Incremental{s: s, opts: opts, full: true, touched: map[intent.Key]struct{}{}}
}

// Store returns the Store events go to.
func (in *Incremental) Store() *Store { return in.s }

// Full is a full Build of the Store, the reference the Incremental's
// Configurations equal.
func (in *Incremental) Full() *config.Configuration { return Build(in.s, in.opts) }

// Has reports whether the Store holds the object of kind at
// namespace/name (see Store.Has).
func (in *Incremental) Has(kind events.Kind, namespace, name string) bool {
	return in.s.Has(kind, namespace, name)
}

// Len is the number of objects the Store holds.
func (in *Incremental) Len() int { return in.s.Len() }

// Apply applies ev to the Store and reports whether it can change the
// next Configuration.
func (in *Incremental) Apply(ev events.Event) (bool, error) {
	eff, err := in.s.Apply(ev)
	if err != nil || !in.s.CanChange(eff, in.opts) {
		return false, err
	}
	if _, route := in.s.sourceOf(eff.Kind); route {
		in.changes = append(in.changes, entryChange{key: entryKey{string(eff.Kind), eff.key}, before: eff.entryBefore})
		return true, nil
	}
	switch eff.Kind {
	case events.KindEndpointSlice:
	default:
		in.full = true
		return true, nil
	}
	for _, k := range eff.Services {
		in.touched[intent.Key(k)] = struct{}{}
	}
	return true, nil
}

// Build returns the Configuration of the Store as it is now: the previous
// one when nothing that matters changed, a patch of its endpoints after
// EndpointSlice events only, a full Build otherwise.
func (in *Incremental) Build() *config.Configuration {
	switch {
	case in.full || in.cur == nil:
		in.rebuild()
	case len(in.changes) > 0:
		switch {
		case !in.rebuildHosts():
			in.rebuild()
		case len(in.touched) > 0:
			in.patch() // the endpoints of the Backends outside the island
		}
		in.changes = in.changes[:0]
	case len(in.touched) > 0:
		in.patch()
	}
	return in.cur
}

// rebuild builds in full and indexes the result.
func (in *Incremental) rebuild() {
	cfg, b := build(in.s, in.opts)
	cfg.NewGeneration()
	in.cur, in.sums, in.full = cfg, b.sums, false
	clear(in.touched)
	in.changes = in.changes[:0]
	in.deps = make(map[intent.Key][]endpointDep, len(b.backendList))
	in.depOf = make(map[string]intent.Key, len(b.backendList))
	// An alias depends on every host (a rule host is not an alias).
	in.hostsOK = !slices.ContainsFunc(b.entries, func(e *intent.Entry) bool { return len(e.Settings.Upstream.Aliases) > 0 })
	in.users = make(map[string][]entryKey, len(b.backendList))
	for _, be := range b.backendList {
		if be.used {
			in.users[be.name] = appendUsers(nil, be.users)
		}
		if be.used && be.name != be.key.name() {
			in.hostsOK = false
		}
		if be.used && be.err == nil && !be.clusterIP {
			in.addDep(be)
		}
	}
	in.defaultWinner = entryKey{}
	if b.defaultWinner != nil {
		in.defaultWinner = keyOf(b.defaultWinner)
	}
}

// addDep records that the slices of be's Service feed be.
func (in *Incremental) addDep(be *backendState) {
	k := intent.Key{Namespace: be.key.namespace, Name: be.key.service}
	in.deps[k] = append(in.deps[k], endpointDep{name: be.name, port: be.portName, sum: be.epSum})
	in.depOf[be.name] = k
}

// patch puts the current endpoints of the touched Services into a copy of
// cur that shares every unchanged part (and Backend, and chunk of its
// BackendList) with it.
func (in *Incremental) patch() {
	out := *in.cur
	b := &builder{s: in.s}
	if in.w == nil {
		in.w = config.NewHasher()
	}
	w := in.w
	var changed []int
	for k := range in.touched {
		deps := in.deps[k]
		for j := range deps {
			d := &deps[j]
			eps, sum := b.endpoints(k, d.port)
			if sum == d.sum {
				continue
			}
			_, i, ok := in.cur.Backends.Find(d.name)
			if !ok {
				continue
			}
			if changed == nil {
				out.Backends = in.cur.Backends.Patched()
			}
			be := *out.Backends.At(i)
			be.Endpoints, be.Checksum, d.sum = eps, w.Backend(&be, sum), sum
			out.Backends.Replace(i, &be, in.cur.Backends)
			in.sums.SetBackend(be.Name, be.Checksum)
			changed = append(changed, i)
		}
	}
	l4 := in.patchL4(&out, b)
	l4 = in.patchStreams(&out, b) || l4
	in.patchPassthrough(&out, changed)
	clear(in.touched)
	if changed == nil && !l4 {
		return
	}
	out.Checksum = in.sums.Checksum(&out)
	out.PatchedFrom(in.cur, changed)
	in.cur = &out
}

// patchPassthrough copies the new endpoints of the changed Backends into
// the passthrough hosts of out that use them.
func (in *Incremental) patchPassthrough(out *config.Configuration, changed []int) {
	if len(changed) == 0 || len(out.Passthrough) == 0 {
		return
	}
	out.Passthrough = slices.Clone(out.Passthrough)
	for i := range out.Passthrough {
		for _, j := range changed {
			if be := out.Backends.At(j); be.Name == out.Passthrough[i].Backend {
				out.Passthrough[i].Endpoints = be.Endpoints
			}
		}
	}
}

// patchStreams puts the current endpoints of the touched Services into
// the backends of the streams of out, copying them first; it reports a
// change.
func (in *Incremental) patchStreams(out *config.Configuration, b *builder) bool {
	changed := false
	for i := range out.Streams {
		for j, be := range out.Streams[i].Backends {
			if _, ok := in.touched[intent.Key{Namespace: be.Namespace, Name: be.Service}]; !ok || be.Service == "" {
				continue
			}
			eps := b.streamEndpoints(out.Streams[i].Protocol, be)
			if slices.Equal(eps, be.Endpoints) {
				continue
			}
			if !changed {
				out.Streams = slices.Clone(out.Streams)
				changed = true
			}
			out.Streams[i].Backends = slices.Clone(out.Streams[i].Backends)
			out.Streams[i].Backends[j].Endpoints = eps
		}
	}
	return changed
}

// patchL4 puts the current endpoints of the touched Services into the TCP
// and UDP services of out, copying them first; it reports a change.
func (in *Incremental) patchL4(out *config.Configuration, b *builder) bool {
	changed := false
	for i := range out.L4 {
		svc := &out.L4[i]
		k := intent.Key{Namespace: svc.Namespace, Name: svc.Service}
		if _, ok := in.touched[k]; !ok {
			continue
		}
		obj := in.s.services[k]
		if obj == nil {
			continue
		}
		sp := l4ServicePort(obj, svc.ServicePort, corev1.Protocol(svc.Protocol))
		if sp == nil {
			continue
		}
		eps, _ := b.endpoints(k, sp.name)
		if slices.Equal(eps, svc.Endpoints) {
			continue
		}
		if !changed {
			out.L4 = slices.Clone(out.L4)
			svc = &out.L4[i]
			changed = true
		}
		svc.Endpoints = eps
	}
	return changed
}
