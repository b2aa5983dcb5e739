package ingress

import (
	"fmt"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// Source is the Ingress translator as the Store and Build use it
// (Source, GlobalSource): it translates Ingresses into entries, keeps the
// IngressClasses for the class rule, and reads ingress-nginx's controller
// ConfigMap.
type Source struct {
	classes map[string]*networkingv1.IngressClass
}

func NewSource() *Source {
	return &Source{classes: map[string]*networkingv1.IngressClass{}}
}

// Takes reports the Ingress kinds: Ingresses are routes.
func (src *Source) Takes(kind events.Kind) (ok, route bool) {
	switch kind {
	case events.KindIngress:
		return true, true
	case events.KindIngressClass:
		return true, false
	}
	return false, false
}

// Translate parses ing's annotations and makes its route intents.
func (src *Source) Translate(kind events.Kind, key intent.Key, obj runtime.Object) (*intent.Entry, error) {
	ing, ok := obj.(*networkingv1.Ingress)
	if !ok {
		return nil, fmt.Errorf("%w: %s event holds %T", intent.ErrWrongType, kind, obj)
	}
	return newIngressEntry(key, ing), nil
}

// Keep stores or removes an IngressClass (cluster-scoped: by name). No
// Ingress's translation depends on one: the class rule is applied at
// Build (Serving).
func (src *Source) Keep(kind events.Kind, key intent.Key, obj runtime.Object) ([]*intent.Entry, error) {
	if kind == events.KindIngress {
		return nil, nil // an Ingress deleted: the Store removes its entry
	}
	if obj == nil {
		delete(src.classes, key.Name)
		return nil, nil
	}
	c, ok := obj.(*networkingv1.IngressClass)
	if !ok {
		return nil, fmt.Errorf("%w: %s event holds %T", intent.ErrWrongType, kind, obj)
	}
	src.classes[key.Name] = c
	return nil, nil
}

// Has reports whether the IngressClass key.Name is kept.
func (src *Source) Has(kind events.Kind, key intent.Key) bool {
	_, ok := src.classes[key.Name]
	return kind == events.KindIngressClass && ok
}

// Len is the number of IngressClasses kept.
func (src *Source) Len() int { return len(src.classes) }

// Serving applies the class rule (see Serves) to the entries of
// Ingresses.
func (src *Source) Serving(c intent.Classes) func(e *intent.Entry) bool {
	m := newClassMatcher(src.classes, c)
	return func(e *intent.Entry) bool { return m.serves(e.Object.(*networkingv1.Ingress)) }
}

// Global reads ingress-nginx's controller ConfigMap (see parseGlobal).
func (src *Source) Global(cm *corev1.ConfigMap, good map[string]string) (config.Global, *config.ExternalAuth, []string) {
	g, problems := parseGlobalKeeping(cm, good)
	return g, globalExternalAuth(&g.Auth), problems
}

// ValidGlobal reports whether value is valid for the ConfigMap key.
func (src *Source) ValidGlobal(key, value string) bool { return validGlobalValue(key, value) }
