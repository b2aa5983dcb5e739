package model

import networkingv1 "k8s.io/api/networking/v1"

// kindIngress is the Origin kind of Ingresses.
const kindIngress = "Ingress"

// ingressEntry is a stored Ingress with what Apply derived from it.
type ingressEntry struct {
	origin Origin
	key    objectKey
	// name is "namespace/name".
	name string
	obj  *networkingv1.Ingress
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
}
