package model

import (
	"slices"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// Effect is what one event did to the Store (Store.Apply), as Contour's
// cache says whether an object is relevant: CanChange tells whether a
// Configuration built from the Store can differ because of it, and for an
// EndpointSlice, Services names the only part it can change (the
// endpoints of those Services; see Incremental).
type Effect struct {
	Kind events.Kind
	key  intent.Key
	// Services are, for an EndpointSlice whose ready endpoints changed,
	// the Services it belonged to before and after the event.
	Services []ServiceKey
	// unchanged: an EndpointSlice with the same Service and the same
	// ready endpoints on every port as before (sliceBefore).
	unchanged   bool
	sliceBefore *sliceEntry
	// entryBefore is, for a route object, its entry before the event.
	entryBefore *intent.Entry
	// observed: a source that observes the kind kept something of the
	// object (intent.Observer), which can change how it translates.
	observed bool
	// remade is the number of entries the source of the kind made again
	// (intent.Source.Keep).
	remade int
}

// ServiceKey names a Service.
type ServiceKey struct{ Namespace, Name string }

// before records, for an event of kind at key, what the Store held.
func (s *Store) before(kind events.Kind, key intent.Key) Effect {
	eff := Effect{Kind: kind, key: key}
	if _, route := s.sourceOf(kind); route {
		eff.entryBefore = s.entries[entryKey{string(kind), key}]
	}
	switch kind {
	case events.KindEndpointSlice:
		if e := s.slices[key]; e != nil {
			eff.Services = append(eff.Services, ServiceKey(e.service))
			eff.sliceBefore = e
		}
	}
	return eff
}

// after completes eff once the event is in the Store.
func (s *Store) after(eff *Effect) {
	if eff.Kind != events.KindEndpointSlice {
		return
	}
	now := s.slices[eff.key]
	eff.unchanged = sameSlice(eff.sliceBefore, now)
	if now != nil && (eff.sliceBefore == nil || now.service != eff.sliceBefore.service) {
		eff.Services = append(eff.Services, ServiceKey(now.service))
	}
	eff.Services = slices.DeleteFunc(eff.Services, func(k ServiceKey) bool { return k.Name == "" })
	eff.sliceBefore = nil
}

// sameSlice reports whether two slice entries feed the same endpoints.
func sameSlice(a, b *sliceEntry) bool {
	if a == nil || b == nil || a.service != b.service || len(a.ports) != len(b.ports) {
		return a == b
	}
	for i := range a.ports {
		if a.ports[i].name != b.ports[i].name || a.ports[i].sum != b.ports[i].sum {
			return false
		}
	}
	return true
}

// CanChange reports whether eff can change the Configuration Build makes
// from s with opts. It is false only when Build provably reads nothing
// that changed: an EndpointSlice with the same ready endpoints, or one of
// a Service nothing routes to; a Secret or Service nothing names; an
// Ingress not served before nor after; an object a source keeps narrowly
// (intent.NarrowKeeper: a Namespace) that made no entry again.
func (s *Store) CanChange(eff Effect, opts Options) bool {
	if eff.observed {
		return true
	}
	if src, route := s.sourceOf(eff.Kind); route {
		serves, now := s.serving(opts), s.entries[entryKey{string(eff.Kind), eff.key}]
		return eff.entryBefore != nil && serves(eff.entryBefore) || now != nil && serves(now)
	} else if src != nil {
		// A source's other kinds (IngressClasses) decide what is served
		// and how its routes translate; those it keeps narrowly only
		// through the entries it made again.
		n, narrow := src.(intent.NarrowKeeper)
		return !narrow || !n.KeepsNarrowly(eff.Kind) || eff.remade > 0
	}
	switch eff.Kind {
	case events.KindEndpointSlice:
		if eff.unchanged {
			return false
		}
		return slices.ContainsFunc(eff.Services, func(k ServiceKey) bool { return s.serviceUsed(k, opts) })
	case events.KindService:
		return s.serviceUsed(ServiceKey(eff.key), opts)
	case events.KindSecret:
		return eff.key.String() == opts.DefaultSSLCertificate || len(s.entriesBySecret[eff.key]) > 0
	case events.KindConfigMap:
		return s.configMapUsed(eff.key, opts)
	}
	return true
}

// configMapUsed reports whether Build can read ConfigMap k: the
// controller's, a services ConfigMap, the one the controller's
// proxy-set-headers or add-headers names, or one an Ingress names in
// custom-headers or auth-proxy-set-headers (the Store's index).
func (s *Store) configMapUsed(k intent.Key, opts Options) bool {
	ref := k.String()
	if ref == opts.ConfigMap || ref == opts.TCPServicesConfigMap || ref == opts.UDPServicesConfigMap {
		return true
	}
	if ck, err := intent.ParseKey(opts.ConfigMap); err == nil {
		// The values Build uses: a key that became invalid keeps its last
		// valid value (configMapEntry).
		if g, _, _ := s.global(ck); g.ProxySetHeaders == ref || g.AddHeaders == ref {
			return true
		}
	}
	return len(s.entriesByConfigMap[k]) > 0
}

// serviceUsed reports whether Build can read Service k: an Ingress names
// it, it is the default backend, or a TCP or UDP services ConfigMap names
// it.
func (s *Store) serviceUsed(k ServiceKey, opts Options) bool {
	key := intent.Key(k)
	if len(s.entriesByService[key]) > 0 || key.String() == opts.DefaultBackendService {
		return true
	}
	for _, src := range l4Sources(opts) {
		ck, err := intent.ParseKey(src.ref)
		if err != nil {
			continue
		}
		cm := s.ConfigMap(ck.Namespace, ck.Name)
		if cm == nil {
			continue
		}
		for _, v := range cm.Data {
			// Build's own entry parser: an entry it refuses reads no Service.
			if svc, err := parseL4Value(src.proto, v); err == nil && svc.Namespace == key.Namespace && svc.Service == key.Name {
				return true
			}
		}
	}
	return false
}
