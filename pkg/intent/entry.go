package intent

import "k8s.io/apimachinery/pkg/runtime"

// KindIngress is the Origin kind of Ingresses.
const KindIngress = "Ingress"

// Entry is what a Source made of one stored route object (an
// Ingress): its Origin, its route intents and settings, and what it
// references, for the Store's indexes.
type Entry struct {
	Origin Origin
	Key    Key
	// name is "namespace/name".
	Name string
	// object is the object translated, for its Source (Serving).
	Object runtime.Object
	// ann is shared (noAnnotations) by the Ingresses without any of ours:
	// read-only.
	Settings *Settings
	// created is the creationTimestamp: Unix seconds and nanoseconds.
	Created      int64
	CreatedNanos int
	// services, secrets and configMaps are the referenced objects,
	// sorted, unique.
	Services   []Key
	Secrets    []Key
	ConfigMaps []Key
	// hosts are the Servers of its rules and TLS sections, by
	// config.ServerKey (the hostname on nginx's own ports).
	Hosts []string
	// rules, tls and defaultBackend are its route intents (intent.go).
	Rules          []Host
	TLS            []TLS
	DefaultBackend *BackendRef
	// Streams are its TCP, UDP and TLS passthrough routes (Gateway API
	// TCPRoutes, UDPRoutes and TLSRoutes): an entry with any is built in
	// full, never spliced by host.
	Streams []Stream
	// canaryNotes are the Problems of a canary Ingress about what of it
	// does not apply (see canaryNotes).
	CanaryNotes []string
	// settingPrefix names its settings in Problems: for an Ingress,
	// "annotation nginx.ingress.kubernetes.io/".
	SettingPrefix string
	// problems are what the translation rejected (annotation values),
	// reported when the entry is served; refused, when set, says why it
	// is not served at all (snippets).
	Problems []string
	Refused  string
}

// String names e's object in Problems: its kind and "namespace/name".
func (e *Entry) String() string { return e.Origin.Kind + " " + e.Name }

// Setting names one of e's settings in a Problem, as its source writes
// it (see settingPrefix).
func (e *Entry) Setting(name string) string { return e.SettingPrefix + name }
