package intent

import (
	"errors"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// A Source is the translator of one API (Ingress, Gateway API) as the
// Store and Build use it. The Store gives it the events of its kinds: it
// translates each route object once, when it is stored, into an entry
// (route intents, see intent.go) that the Store indexes and Build places;
// it keeps its other objects itself (IngressClasses). At Build it says
// which entries are served. Everything else (Services, endpoints, Secrets,
// certificates, the Configuration's assembly) is the build's, the same for
// every source.
type Source interface {
	// Takes reports whether kind is one of the source's: route kinds
	// (route) have entries, the others are kept by the source.
	Takes(kind events.Kind) (ok, route bool)
	// Translate returns the entry of route object obj stored at key; an
	// error wrapping ErrWrongType when obj is not of kind. Whatever of a
	// valid object it cannot translate is a Problem of the entry.
	Translate(kind events.Kind, key Key, obj runtime.Object) (*Entry, error)
	// Keep stores an object of the source's other kinds at key, or
	// removes it when obj is nil; it is also called with nil when a route
	// object is deleted (the Store removes its entry). It returns the entries of the route
	// objects whose translation depends on that object, made again (a
	// Gateway API route on its Gateway): the Store replaces those it
	// holds by them. A change of such an object makes the next
	// Configuration a full Build.
	Keep(kind events.Kind, key Key, obj runtime.Object) ([]*Entry, error)
	// Has and Len say what the source keeps of its other kinds.
	Has(kind events.Kind, key Key) bool
	Len() int
	// Serving returns whether an entry is served with the controller's
	// classes, given the objects the source keeps now (for Ingress: the
	// class rule).
	Serving(c Classes) func(e *Entry) bool
}

// A ListenerSource is a Source whose objects make nginx listen on ports of
// its own (the Gateway source: a port per Gateway listener). Build
// validates the ports (config.ValidListenerPort) and the Hosts of the
// source's entries are served on them (Host.Port).
type ListenerSource interface {
	Listeners() []Listener
}

// Listener is a port a ListenerSource asks nginx to listen on, for the
// object Origin names (in Problems). H2C (not with TLS) serves HTTP/2
// with prior knowledge there instead of HTTP/1.1 (config.Listener.H2C).
type Listener struct {
	Port   int
	TLS    bool
	H2C    bool
	Origin Origin
}

// An Observer is a Source that also reads the objects of a kind the Store
// keeps itself (the Gateway source reads the Services the watcher keeps
// for each Gateway). The Store hands it every object of kinds Observes
// returns true for, after storing it (nil when deleted); Observe returns
// the entries made again, and whether it kept anything of the object
// (then the next Configuration is a full Build).
type Observer interface {
	Observes(kind events.Kind) bool
	Observe(kind events.Kind, key Key, obj runtime.Object) (again []*Entry, changed bool, err error)
}

// A NarrowKeeper is a Source some of whose other kinds reach the
// Configuration only through the entries Keep makes again (the Gateway
// source's Namespaces: their labels are read by the routes of the
// Namespace alone): a change of such an object for which Keep makes no
// entry again cannot change the Configuration.
type NarrowKeeper interface {
	KeepsNarrowly(kind events.Kind) bool
}

// Classes are the controller's class flags, which decide what a source
// serves.
type Classes struct {
	// Controller is the controller name its classes name (an
	// IngressClass's spec.controller).
	Controller string
	// Class is the class name it answers to without a class object
	// (--ingress-class).
	Class string
	// WithoutClass serves the objects that name no class.
	WithoutClass bool
}

// A GlobalSource reads the controller ConfigMap into the global settings
// (for ingress-nginx's ConfigMap, the Ingress source).
type GlobalSource interface {
	// Global reads cm (nil for none) over the defaults: a key with an
	// invalid value keeps its value in good, if any, else the default,
	// with a reason. auth is the external authentication the ConfigMap
	// asks of every route (nil for none).
	Global(cm *corev1.ConfigMap, good map[string]string) (g config.Global, auth *config.ExternalAuth, problems []string)
	// ValidGlobal reports whether value is valid for key.
	ValidGlobal(key, value string) bool
}

// Errors returned (wrapped) by Store.Apply.
var (
	ErrUnknownKind   = errors.New("unknown kind")
	ErrInvalidOp     = errors.New("invalid op")
	ErrWrongType     = errors.New("object type does not match kind")
	ErrMissingObject = errors.New("create or update without object")
	ErrKeyMismatch   = errors.New("object namespace/name differ from the event")
)
