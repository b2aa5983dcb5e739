package ingress

import (
	"github.com/ingress-sync/ingress-sync/pkg/intent"
	networkingv1 "k8s.io/api/networking/v1"
)

// The classes the watcher, the syncers and the tools serve unless told
// otherwise (their --controller-class and --ingress-class flags).
const (
	// DefaultControllerClass is the spec.controller of the IngressClasses
	// ingress-sync implements by default.
	DefaultControllerClass = "k8s.io/ingress-sync"
	// DefaultIngressClass is the class name served by default, ingress-nginx's.
	DefaultIngressClass = "nginx"
)

// Annotations that select an Ingress class.
const (
	// LegacyClassAnnotation is the deprecated class annotation on Ingresses.
	LegacyClassAnnotation = "kubernetes.io/ingress.class"
	// DefaultClassAnnotation marks the IngressClass for Ingresses naming none.
	DefaultClassAnnotation = networkingv1.AnnotationIsDefaultIngressClass
)

// classMatcher decides which Ingresses we serve. It is computed once per
// Build from the IngressClasses in the Store.
type classMatcher struct {
	c       intent.Classes
	classes map[string]*networkingv1.IngressClass
	// withoutClass serves Ingresses naming no class: an IngressClass of our
	// controller is the default class, or WatchIngressWithoutClass.
	withoutClass bool
}

func newClassMatcher(classes map[string]*networkingv1.IngressClass, c intent.Classes) classMatcher {
	m := classMatcher{c: c, classes: classes, withoutClass: c.WithoutClass}
	for _, class := range classes {
		if class.Spec.Controller == c.Controller && class.Annotations[DefaultClassAnnotation] == "true" {
			m.withoutClass = true
		}
	}
	return m
}

// Serves reports whether ing is ours, by these rules in order:
//
//   - spec.ingressClassName set: it names an IngressClass whose
//     spec.controller is c.Controller; or, when no IngressClass of
//     that name exists, it equals c.Class. An existing
//     IngressClass of another controller is never ours, even when its name
//     equals c.Class.
//   - otherwise the kubernetes.io/ingress.class annotation, when present and
//     not empty, must equal c.Class.
//   - otherwise (no class at all) it is served when an IngressClass of our
//     controller carries ingressclass.kubernetes.io/is-default-class=true,
//     or with c.WithoutClass.
//
// The syncers apply it through the Ingress source (Source.Serving),
// the watcher for Ingress status through Serves, with every IngressClass
// by name.
func Serves(ing *networkingv1.Ingress, classes map[string]*networkingv1.IngressClass, c intent.Classes) bool {
	m := newClassMatcher(classes, c)
	return m.serves(ing)
}

func (m *classMatcher) serves(ing *networkingv1.Ingress) bool {
	if name := ing.Spec.IngressClassName; name != nil {
		if c, ok := m.classes[*name]; ok {
			return m.c.Controller != "" && c.Spec.Controller == m.c.Controller
		}
		return m.c.Class != "" && *name == m.c.Class
	}
	if class := ing.Annotations[LegacyClassAnnotation]; class != "" {
		return m.c.Class != "" && class == m.c.Class
	}
	return m.withoutClass
}
