package model

import (
	"fmt"

	"github.com/ingress-sync/ingress-sync/pkg/intent"
	corev1 "k8s.io/api/core/v1"
)

// The Secrets and ConfigMaps that an Ingress's annotations name
// (auth-secret, auth-tls-secret, proxy-ssl-secret, auth-proxy-set-headers,
// custom-headers) are read through one lookup, resolveRef. It owns:
//
//   - the key (refKey): "name" is in the Ingress's namespace, and
//     "namespace/name" must name that namespace too, as ingress-nginx with
//     its default allow-cross-namespace-resources=false. The Store's
//     indexes of the objects an Ingress names use the same key.
//   - the Store access, and the reason when the object is not there;
//   - the per-Build cache: what a feature makes of one annotation of one
//     Ingress is resolved once per Build, however many locations and hosts
//     ask, and its Problems are reported once. Every Build starts with an
//     empty cache, so the next Build (or the hosts an Incremental rebuilds)
//     reads an object that changed.
//   - the outcome: a reference that cannot be served fails closed, with the
//     Problem "<reason>; the Ingress's routes answer 503" and the feature's
//     unavailable value (never the content without the protection asked
//     for).
//
// A feature gives only its own parsing of the object's data (refUse.parse).
// Not read through it: the TLS certificates of spec.tls, which name a
// Secret of the Ingress's namespace only, are shared by hosts rather than
// resolved per Ingress, and fall back to the default certificate (see
// buildTLS); and the objects the options and the controller ConfigMap name
// (default-ssl-certificate, proxy-set-headers, add-headers), read once per
// Build with Problems of their own kind.

// Kinds of the objects annotations name.
const (
	refSecret    = "Secret"
	refConfigMap = "ConfigMap"
)

// objectRef is the object one annotation of an Ingress names.
type objectRef struct {
	// kind is refSecret or refConfigMap.
	kind string
	// annotation is the name of the setting, as its source names it
	// after the entry's settingPrefix.
	annotation string
	// ref is its value, "name" or "namespace/name".
	ref string
}

// refObject is the object an objectRef names, as the lookup found it: one
// of secret and configMap is set, by kind.
type refObject struct {
	objectRef
	key       intent.Key
	secret    *corev1.Secret
	configMap *corev1.ConfigMap
	// settingPrefix is that of the entry whose setting names the object.
	settingPrefix string
}

// reason returns a reason about o for a Problem: "annotation
// <annotation>: <kind> <namespace/name>" followed by detail, formatted.
func (o refObject) reason(detail string, args ...any) string {
	return fmt.Sprintf("%s%s: %s %s", o.settingPrefix, o.annotation, o.kind, o.key) + fmt.Sprintf(detail, args...)
}

// lookupRef returns the object r names for e, or why it cannot: another
// namespace's, or one the Store does not hold.
func (b *builder) lookupRef(e *intent.Entry, r objectRef) (refObject, string) {
	o := refObject{objectRef: r, settingPrefix: e.SettingPrefix}
	k, ok := intent.RefKey(e.Key.Namespace, r.ref)
	if !ok {
		return o, fmt.Sprintf("%s=%s: the %s must be in the %s's namespace %s", e.Setting(r.annotation), r.ref, r.kind, e.Origin.Kind, e.Key.Namespace)
	}
	o.key = k
	switch r.kind {
	case refSecret:
		if s := b.s.secrets[k]; s != nil {
			o.secret = s.obj
		}
	case refConfigMap:
		if cm := b.s.configMaps[k]; cm != nil {
			o.configMap = cm.obj
		}
	}
	if o.secret == nil && o.configMap == nil {
		return o, o.reason(" not found")
	}
	return o, ""
}

// refUse is what a feature makes of the object one annotation of an
// Ingress names: a value of type T.
type refUse[T any] struct {
	objectRef
	// invalid says why the feature's annotations cannot be applied at
	// all; they then fail without a lookup.
	invalid string
	// optional: ref "" names nothing, and parse gets an object without
	// data (auth-proxy-set-headers is optional to auth-url).
	optional bool
	// parse makes the feature's value of the object e's annotation
	// names, or says why it cannot (a reason made with refObject.reason);
	// it may report Problems that do not fail the reference
	// (b.ingressProblem).
	parse func(b *builder, e *intent.Entry, o refObject) (T, string)
	// unavailable returns e's value when the reference cannot be served
	// (the zero T when nil): for a reference that fails closed, that of
	// routes answering 503.
	unavailable func(e *intent.Entry) T
}

// failClosed ends the Problem of a reference that fails closed.
const failClosed = "the Ingress's routes answer 503"

// refUseKey is the key of the per-Build cache: a feature is known by the
// annotation that names its object.
type refUseKey struct {
	e          *intent.Entry
	annotation string
}

// resolveRef returns what use makes of the object e's annotation names,
// resolved once per Build: when it cannot be served, use.unavailable with
// a Problem of e. Features call it for each location: functions of use
// that capture no variable keep the calls that find the cache free of
// allocations.
func resolveRef[T any](b *builder, e *intent.Entry, use refUse[T]) T {
	key := refUseKey{e, use.annotation}
	if v, ok := b.refs[key]; ok {
		return v.(T)
	}
	v, _, reason := use.resolve(b, e)
	if reason != "" {
		b.entryProblem(e, "%s; %s", reason, failClosed)
		var zero T
		v = zero
		if use.unavailable != nil {
			v = use.unavailable(e)
		}
	}
	if b.refs == nil {
		b.refs = map[refUseKey]any{}
	}
	b.refs[key] = v
	return v
}

// resolve makes the value of use for e, or says why it cannot.
func (use *refUse[T]) resolve(b *builder, e *intent.Entry) (v T, o refObject, reason string) {
	if use.invalid != "" {
		return v, o, use.invalid
	}
	o.objectRef = use.objectRef
	if use.ref != "" || !use.optional {
		if o, reason = b.lookupRef(e, use.objectRef); reason != "" {
			return v, o, reason
		}
	}
	v, reason = use.parse(b, e, o)
	return v, o, reason
}
