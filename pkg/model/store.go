package model

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// Store holds the current state of every ingress input, typed and indexed
// so that Build runs in time linear in the number of objects. It is fed by
// Apply and is not safe for concurrent use: the syncer applies events and
// builds from one goroutine. The Store keeps the objects it is given;
// callers must not modify them afterwards.
//
// Work that depends only on one object (annotation parsing, TLS key pair
// validation, ready endpoints of a slice) is done once in Apply, not in
// every Build.
type Store struct {
	// entries are the route objects' translations, by kind and key.
	entries    map[entryKey]*intent.Entry
	services   map[intent.Key]*serviceEntry
	slices     map[intent.Key]*sliceEntry
	secrets    map[intent.Key]*secretEntry
	configMaps map[intent.Key]*configMapEntry
	// sources translate the route objects (Ingresses) into the entries
	// and keep their other kinds; globalSrc reads the controller
	// ConfigMap.
	sources   []intent.Source
	globalSrc intent.GlobalSource

	// slicesByService indexes EndpointSlices by the label
	// kubernetes.io/service-name (same namespace), sorted by slice name.
	slicesByService map[intent.Key][]*sliceEntry
	// entriesByService, entriesBySecret and entriesByConfigMap index the
	// entries by the objects they reference (Entry.Services, Secrets,
	// ConfigMaps); entriesByHost by their hosts (Entry.Hosts), under
	// intent.Key{Name: host}.
	entriesByService   refIndex
	entriesBySecret    refIndex
	entriesByConfigMap refIndex
	entriesByHost      refIndex

	// remade counts the entries a source's Keep made again during the
	// Apply under way (Effect.remade).
	remade int
}

// entryKey identifies an entry: the kind of its object (the event kind,
// which is also its Origin's) and its namespace/name.
type entryKey struct {
	kind string
	intent.Key
}

// keyOf is e's entryKey.
func keyOf(e *intent.Entry) entryKey { return entryKey{e.Origin.Kind, e.Key} }

// NewStore returns an empty Store whose route objects sources translate
// (for Ingresses, ingress.NewSource()), each its own kinds. The first
// source that is also a GlobalSource reads the controller ConfigMap;
// without one the global settings are the defaults.
func NewStore(sources ...intent.Source) *Store {
	var gs intent.GlobalSource = defaultGlobal{}
	for _, src := range slices.Backward(sources) {
		if g, ok := src.(intent.GlobalSource); ok {
			gs = g
		}
	}
	return &Store{
		sources:            sources,
		globalSrc:          gs,
		entries:            map[entryKey]*intent.Entry{},
		services:           map[intent.Key]*serviceEntry{},
		slices:             map[intent.Key]*sliceEntry{},
		secrets:            map[intent.Key]*secretEntry{},
		configMaps:         map[intent.Key]*configMapEntry{},
		slicesByService:    map[intent.Key][]*sliceEntry{},
		entriesByService:   refIndex{},
		entriesBySecret:    refIndex{},
		entriesByConfigMap: refIndex{},
		entriesByHost:      refIndex{},
	}
}

// Len is the number of objects held, all kinds together.
func (s *Store) Len() int {
	n := len(s.entries) + len(s.services) + len(s.slices) + len(s.secrets) + len(s.configMaps)
	for _, src := range s.sources {
		n += src.Len()
	}
	return n
}

// sourceOf returns the source of kind, if any, and whether kind is one of
// its route kinds.
func (s *Store) sourceOf(kind events.Kind) (src intent.Source, route bool) {
	for _, src := range s.sources {
		if ok, route := src.Takes(kind); ok {
			return src, route
		}
	}
	return nil, false
}

// serving returns, for each source by route kind, whether an entry is
// served with opts (intent.Source.Serving).
func (s *Store) serving(opts Options) func(e *intent.Entry) bool {
	bySource := map[string]func(*intent.Entry) bool{}
	return func(e *intent.Entry) bool {
		f, ok := bySource[e.Origin.Kind]
		if !ok {
			src, _ := s.sourceOf(events.Kind(e.Origin.Kind))
			f = src.Serving(opts.classes())
			bySource[e.Origin.Kind] = f
		}
		return f(e)
	}
}

// allEntries returns the entries, in no order.
func (s *Store) allEntries() []*intent.Entry {
	out := make([]*intent.Entry, 0, len(s.entries))
	for _, e := range s.entries {
		out = append(out, e)
	}
	return out
}

// Has reports whether the Store holds the object of kind at namespace/name
// (IngressClasses by name only).
func (s *Store) Has(kind events.Kind, namespace, name string) bool {
	k := intent.Key{Namespace: namespace, Name: name}
	var ok bool
	if src, route := s.sourceOf(kind); route {
		_, ok = s.entries[entryKey{string(kind), k}]
		return ok
	} else if src != nil {
		return src.Has(kind, k)
	}
	switch kind {
	case events.KindService:
		_, ok = s.services[k]
	case events.KindEndpointSlice:
		_, ok = s.slices[k]
	case events.KindSecret:
		_, ok = s.secrets[k]
	case events.KindConfigMap:
		_, ok = s.configMaps[k]
	}
	return ok
}

// Apply records one event: create and update store ev.Object (which must be
// the typed object of ev.Kind), delete removes the object by its key. The
// key is the event's namespace/name, or the object's when the event has
// none. Deleting an unknown object is not an error. The Effect says what
// the event touched (see Effect and CanChange); on error the Store is as
// it was.
func (s *Store) Apply(ev events.Event) (Effect, error) {
	if !ev.Op.Valid() {
		return Effect{}, fmt.Errorf("%w %q", intent.ErrInvalidOp, ev.Op)
	}
	key, err := eventKey(ev)
	if err != nil {
		return Effect{}, err
	}
	eff := s.before(ev.Kind, key)
	obj := ev.Object
	s.remade = 0
	if ev.Op == events.OpDelete {
		err, obj = s.delete(ev.Kind, key), nil
	} else if isNilObject(ev.Object) {
		return Effect{}, fmt.Errorf("%w: %s %s", intent.ErrMissingObject, ev.Kind, key)
	} else {
		err = s.upsert(ev.Kind, key, ev.Object)
	}
	if err == nil {
		eff.observed, err = s.observe(ev.Kind, key, obj)
	}
	if err != nil {
		return Effect{}, err
	}
	eff.remade = s.remade
	s.after(&eff)
	return eff, nil
}

// eventKey is the identity of the event's object, checked against the
// object's own metadata when both are present.
func eventKey(ev events.Event) (intent.Key, error) {
	key := intent.Key{Namespace: ev.Namespace, Name: ev.Name}
	acc, ok := ev.Object.(metav1.Object)
	if !ok || isNilObject(ev.Object) {
		if key.Name == "" {
			return key, fmt.Errorf("%w: %s event without name or object", intent.ErrMissingObject, ev.Kind)
		}
		return key, nil
	}
	obj := intent.Key{Namespace: acc.GetNamespace(), Name: acc.GetName()}
	if key.Name == "" {
		return obj, nil
	}
	if obj.Name != "" && obj != key {
		return key, fmt.Errorf("%w: event %s, object %s", intent.ErrKeyMismatch, key, obj)
	}
	return key, nil
}

// isNilObject reports a nil interface or a typed nil pointer of a kind we
// store (whose metadata accessors would panic).
func isNilObject(obj runtime.Object) bool {
	if obj == nil {
		return true
	}
	v := reflect.ValueOf(obj)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// upsert stores obj, checking that its type is that of kind.
func (s *Store) upsert(kind events.Kind, key intent.Key, obj runtime.Object) error {
	if src, route := s.sourceOf(kind); route {
		e, err := src.Translate(kind, key, obj)
		if err == nil {
			s.putEntry(entryKey{string(kind), key}, e)
		}
		return err
	} else if src != nil {
		return s.keep(src, kind, key, obj)
	}
	switch kind {
	case events.KindService:
		return put(kind, obj, func(o *corev1.Service) { s.services[key] = newServiceEntry(o) })
	case events.KindEndpointSlice:
		return put(kind, obj, func(o *discoveryv1.EndpointSlice) { s.putSlice(key, o) })
	case events.KindSecret:
		return put(kind, obj, func(o *corev1.Secret) { s.secrets[key] = newSecretEntry(o) })
	case events.KindConfigMap:
		return put(kind, obj, func(o *corev1.ConfigMap) {
			s.configMaps[key] = newConfigMapEntry(o, s.configMaps[key], s.globalSrc.ValidGlobal)
		})
	}
	return fmt.Errorf("%w %q", intent.ErrUnknownKind, kind)
}

// put hands obj to store when it is a T (never a nil one: Apply checked).
func put[T runtime.Object](kind events.Kind, obj runtime.Object, store func(T)) error {
	o, ok := obj.(T)
	if !ok {
		return fmt.Errorf("%w: %s event holds %T", intent.ErrWrongType, kind, obj)
	}
	store(o)
	return nil
}

// delete removes the object of kind at key.
func (s *Store) delete(kind events.Kind, key intent.Key) error {
	if src, route := s.sourceOf(kind); route {
		s.removeEntry(entryKey{string(kind), key})
		return s.keep(src, kind, key, nil)
	} else if src != nil {
		return s.keep(src, kind, key, nil)
	}
	switch kind {
	case events.KindService:
		delete(s.services, key)
	case events.KindEndpointSlice:
		s.removeSlice(key)
	case events.KindSecret:
		delete(s.secrets, key)
	case events.KindConfigMap:
		delete(s.configMaps, key)
	default:
		return fmt.Errorf("%w %q", intent.ErrUnknownKind, kind)
	}
	return nil
}

// observe hands an object of a kind the Store keeps to the sources that
// observe it (intent.Observer), and stores the entries they made again;
// it reports whether one of them kept something of it.
func (s *Store) observe(kind events.Kind, key intent.Key, obj runtime.Object) (bool, error) {
	changed := false
	for _, src := range s.sources {
		o, ok := src.(intent.Observer)
		if !ok || !o.Observes(kind) {
			continue
		}
		again, c, err := o.Observe(kind, key, obj)
		if err != nil {
			return changed, err
		}
		for _, e := range again {
			s.putEntry(keyOf(e), e)
		}
		changed = changed || c
	}
	return changed, nil
}

// keep hands an object of a source's other kinds to it (nil: removed), and
// stores the entries it made again.
func (s *Store) keep(src intent.Source, kind events.Kind, key intent.Key, obj runtime.Object) error {
	again, err := src.Keep(kind, key, obj)
	for _, e := range again {
		s.putEntry(keyOf(e), e)
	}
	s.remade += len(again)
	return err
}

func (s *Store) putEntry(key entryKey, e *intent.Entry) {
	s.removeEntry(key)
	s.entries[key] = e
	for _, ref := range e.Services {
		s.entriesByService.add(ref, key)
	}
	for _, ref := range e.Secrets {
		s.entriesBySecret.add(ref, key)
	}
	for _, ref := range e.ConfigMaps {
		s.entriesByConfigMap.add(ref, key)
	}
	for _, h := range e.Hosts {
		s.entriesByHost.add(intent.Key{Name: h}, key)
	}
}

func (s *Store) removeEntry(key entryKey) {
	e, ok := s.entries[key]
	if !ok {
		return
	}
	for _, ref := range e.Services {
		s.entriesByService.remove(ref, key)
	}
	for _, ref := range e.Secrets {
		s.entriesBySecret.remove(ref, key)
	}
	for _, ref := range e.ConfigMaps {
		s.entriesByConfigMap.remove(ref, key)
	}
	for _, h := range e.Hosts {
		s.entriesByHost.remove(intent.Key{Name: h}, key)
	}
	delete(s.entries, key)
}

func (s *Store) putSlice(key intent.Key, slice *discoveryv1.EndpointSlice) {
	s.removeSlice(key)
	e := newSliceEntry(key, slice)
	s.slices[key] = e
	if e.service.Name == "" {
		return
	}
	list := s.slicesByService[e.service]
	i, _ := slices.BinarySearchFunc(list, key.Name, compareSliceName)
	s.slicesByService[e.service] = slices.Insert(list, i, e)
}

func (s *Store) removeSlice(key intent.Key) {
	e, ok := s.slices[key]
	if !ok {
		return
	}
	list := s.slicesByService[e.service]
	if i, found := slices.BinarySearchFunc(list, key.Name, compareSliceName); found {
		list = slices.Delete(list, i, i+1)
	}
	if len(list) == 0 {
		delete(s.slicesByService, e.service)
	} else {
		s.slicesByService[e.service] = list
	}
	delete(s.slices, key)
}

func compareSliceName(e *sliceEntry, name string) int { return cmp.Compare(e.name, name) }

// refIndex maps a referenced object to the Ingresses that reference it.
// A slice, not a set: most objects have one or a few referrers, and an
// Ingress is removed from the index before it is added again (putIngress),
// so that add never sees a key it holds.
type refIndex map[intent.Key][]entryKey

func (idx refIndex) add(ref intent.Key, key entryKey) { idx[ref] = append(idx[ref], key) }

func (idx refIndex) remove(ref intent.Key, key entryKey) {
	list := idx[ref]
	i := slices.Index(list, key)
	switch {
	case i < 0:
	case len(list) == 1:
		delete(idx, ref)
	default:
		list[i] = list[len(list)-1]
		idx[ref] = list[:len(list)-1]
	}
}

// ConfigMap returns the stored ConfigMap, or nil.
func (s *Store) ConfigMap(namespace, name string) *corev1.ConfigMap {
	if e := s.configMaps[intent.Key{Namespace: namespace, Name: name}]; e != nil {
		return e.obj
	}
	return nil
}

// configMapEntry is a stored ConfigMap and, for the keys it has, the last
// value that was valid as a controller ConfigMap key, which a later
// invalid value of the key keeps (see parseGlobal). A key that leaves the
// ConfigMap forgets its value, and so does a deleted ConfigMap: the
// default applies again.
type configMapEntry struct {
	obj  *corev1.ConfigMap
	good map[string]string
}

// newConfigMapEntry records cm after prev (nil for a new ConfigMap); valid
// says which values are valid controller ConfigMap values.
func newConfigMapEntry(cm *corev1.ConfigMap, prev *configMapEntry, valid func(key, value string) bool) *configMapEntry {
	e := &configMapEntry{obj: cm}
	for k, v := range cm.Data {
		old, had := "", false
		if prev != nil {
			old, had = prev.good[k]
		}
		switch {
		case had && old == v:
		case valid(k, v):
			old, had = v, true
		}
		if had {
			if e.good == nil {
				e.good = make(map[string]string, len(cm.Data))
			}
			e.good[k] = old
		}
	}
	return e
}

// global reads the controller ConfigMap at key (see GlobalSource).
func (s *Store) global(key intent.Key) (config.Global, *config.ExternalAuth, []string) {
	if e := s.configMaps[key]; e != nil {
		return s.globalSrc.Global(e.obj, e.good)
	}
	return s.globalSrc.Global(nil, nil)
}

// referrers returns the names ("namespace/name") of the entries that
// idx lists for namespace/name, sorted.
func (s *Store) referrers(idx refIndex, namespace, name string) []string {
	out := make([]string, 0, len(idx[intent.Key{Namespace: namespace, Name: name}]))
	for _, k := range idx[intent.Key{Namespace: namespace, Name: name}] {
		out = append(out, s.entries[k].Name)
	}
	slices.Sort(out)
	return out
}

// defaultGlobal is the GlobalSource of a Store whose source reads no
// controller ConfigMap: the defaults, and no value is valid.
type defaultGlobal struct{}

func (defaultGlobal) Global(*corev1.ConfigMap, map[string]string) (config.Global, *config.ExternalAuth, []string) {
	return config.DefaultGlobal(), nil, nil
}

func (defaultGlobal) ValidGlobal(string, string) bool { return false }
