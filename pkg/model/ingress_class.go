package model

import (
	networkingv1 "k8s.io/api/networking/v1"
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
	opts    Options
	classes map[string]*networkingv1.IngressClass
	// withoutClass serves Ingresses naming no class: an IngressClass of our
	// controller is the default class, or WatchIngressWithoutClass.
	withoutClass bool
}

func newClassMatcher(classes map[string]*networkingv1.IngressClass, opts Options) classMatcher {
	m := classMatcher{opts: opts, classes: classes, withoutClass: opts.WatchIngressWithoutClass}
	for _, c := range classes {
		if c.Spec.Controller == opts.ControllerClass && c.Annotations[DefaultClassAnnotation] == "true" {
			m.withoutClass = true
		}
	}
	return m
}

// Serves reports whether ing is ours, by these rules in order:
//
//   - spec.ingressClassName set: it names an IngressClass whose
//     spec.controller is opts.ControllerClass; or, when no IngressClass of
//     that name exists, it equals opts.IngressClass. An existing
//     IngressClass of another controller is never ours, even when its name
//     equals opts.IngressClass.
//   - otherwise the kubernetes.io/ingress.class annotation, when present and
//     not empty, must equal opts.IngressClass.
//   - otherwise (no class at all) it is served when an IngressClass of our
//     controller carries ingressclass.kubernetes.io/is-default-class=true,
//     or with opts.WatchIngressWithoutClass.
//
// The syncers apply it through the Ingress source (ingressSource.Serving),
// the watcher for Ingress status through Serves, with every IngressClass
// by name.
func Serves(ing *networkingv1.Ingress, classes map[string]*networkingv1.IngressClass, opts Options) bool {
	m := newClassMatcher(classes, opts)
	return m.serves(ing)
}

func (m *classMatcher) serves(ing *networkingv1.Ingress) bool {
	if name := ing.Spec.IngressClassName; name != nil {
		if c, ok := m.classes[*name]; ok {
			return m.opts.ControllerClass != "" && c.Spec.Controller == m.opts.ControllerClass
		}
		return m.opts.IngressClass != "" && *name == m.opts.IngressClass
	}
	if class := ing.Annotations[LegacyClassAnnotation]; class != "" {
		return m.opts.IngressClass != "" && class == m.opts.IngressClass
	}
	return m.withoutClass
}
