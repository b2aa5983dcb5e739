package replay

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"

	"fmt"
	"maps"
	"slices"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// Builder is the configuration builder a replay drives: the syncer's own
// (model.Incremental), fed the events one by one. Apply reports whether
// an event can change the Configuration; Build returns the Configuration
// of the events applied so far, Full the same built from scratch (the
// reference Build must equal); Has and Len describe the objects held.
type Builder interface {
	Apply(ev events.Event) (bool, error)
	Build() *config.Configuration
	Full() *config.Configuration
	Has(kind events.Kind, namespace, name string) bool
	Len() int
}

// engine holds a Builder and the Configuration it made last, and tells,
// event after event, what each one changed. The invariant after every
// step is cur == inc.Full(): the Builder patches the endpoints after
// EndpointSlice events, builds in full after the others that can change
// the Configuration, and does nothing for the rest.
type engine struct {
	inc Builder
	cur *config.Configuration
	// hosts maps a backend name to the hosts routing to it in cur; it
	// changes only with cur's Servers.
	hosts map[string][]string
	// verify (tests) compares every step with a full Build; verifyErr is
	// the first difference.
	verify    bool
	verifyErr error
}

func newEngine(inc Builder) *engine { return &engine{inc: inc} }

// apply records ev in the store without building (events before a
// timeline's start).
func (e *engine) apply(ev events.Event) error {
	_, err := e.inc.Apply(ev)
	return err
}

// rebuild makes cur the Configuration of the store.
func (e *engine) rebuild() {
	old := e.cur
	e.cur = e.inc.Build()
	if old == nil || !sameServers(old, e.cur) {
		e.hosts = backendHosts(e.cur)
	}
}

// sameServers reports whether b shares a's Servers (an endpoint patch).
func sameServers(a, b *config.Configuration) bool {
	return len(a.Servers) == len(b.Servers) && (len(a.Servers) == 0 || &a.Servers[0] == &b.Servers[0])
}

// checksum is the checksum of cur.
func (e *engine) checksum() string { return e.cur.Checksum }

// step applies ev and says what it changed and whether the Configuration
// differs. A store error leaves the store and cur as they were.
func (e *engine) step(ev events.Event) (Diff, config.Change, bool, error) {
	if e.cur == nil {
		e.rebuild()
	}
	matters, err := e.inc.Apply(ev)
	if err != nil {
		return Diff{}, config.Change{}, false, err
	}
	d, ch, changed := Diff{}, config.Change{}, false
	if matters {
		old, oldHosts := e.cur, e.hosts
		e.cur = e.inc.Build()
		ch = config.Diff(old, e.cur)
		if !sameServers(old, e.cur) {
			e.hosts = rehost(oldHosts, old, ch)
		}
		if !ch.Empty() || old.DefaultCertificate != e.cur.DefaultCertificate {
			d, changed = summarize(old, ch, oldHosts, e.hosts), true
		}
	}
	if e.verify {
		e.check(ev)
	}
	return d, ch, changed, nil
}

// check compares cur with a full Build, and hosts with backendHosts of
// it (tests only).
func (e *engine) check(ev events.Event) {
	full := e.inc.Full()
	if got, want := e.checksum(), full.Checksum; got != want && e.verifyErr == nil {
		e.verifyErr = fmt.Errorf("replay: incremental configuration after seq %d (%s %s %s) has checksum %s, a full Build %s",
			ev.Sequence, ev.Op, ev.Kind, ev.Key(), got, want)
	}
	if got, want := e.hosts, backendHosts(full); !maps.EqualFunc(got, want, slices.Equal) && e.verifyErr == nil {
		e.verifyErr = fmt.Errorf("replay: the hosts of the backends after seq %d (%s %s %s) are %v, a full Build's %v",
			ev.Sequence, ev.Op, ev.Kind, ev.Key(), got, want)
	}
}

// has reports whether the store holds the object of ev.
func (e *engine) has(ev events.Event) bool { return e.inc.Has(ev.Kind, ev.Namespace, ev.Name) }
