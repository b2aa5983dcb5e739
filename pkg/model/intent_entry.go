package model

import "k8s.io/apimachinery/pkg/runtime"

// kindIngress is the Origin kind of Ingresses.
const kindIngress = "Ingress"

// ingressEntry is what a Source made of one stored route object (an
// Ingress): its Origin, its route intents and settings, and what it
// references, for the Store's indexes.
type ingressEntry struct {
	origin Origin
	key    objectKey
	// name is "namespace/name".
	name string
	// object is the object translated, for its Source (Serving).
	object runtime.Object
	// ann is shared (noAnnotations) by the Ingresses without any of ours:
	// read-only.
	ann *ingressAnnotations
	// created is the creationTimestamp: Unix seconds and nanoseconds.
	created      int64
	createdNanos int
	// services, secrets and configMaps are the referenced objects,
	// sorted, unique.
	services   []objectKey
	secrets    []objectKey
	configMaps []objectKey
	// hosts are the hosts of its rules and TLS sections (ingressHosts).
	hosts []string
	// rules, tls and defaultBackend are its route intents (intent.go).
	rules          []hostIntent
	tls            []tlsIntent
	defaultBackend *backendRef
	// canaryNotes are the Problems of a canary Ingress about what of it
	// does not apply (see canaryNotes).
	canaryNotes []string
	// settingPrefix names its settings in Problems: for an Ingress,
	// "annotation nginx.ingress.kubernetes.io/".
	settingPrefix string
	// problems are what the translation rejected (annotation values),
	// reported when the entry is served; refused, when set, says why it
	// is not served at all (snippets).
	problems []string
	refused  string
}

// setting names one of e's settings in a Problem, as its source writes
// it (see settingPrefix).
func (e *ingressEntry) setting(name string) string { return e.settingPrefix + name }
