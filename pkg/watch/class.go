package watch

import (
	networkingv1 "k8s.io/api/networking/v1"
)

// legacyClassAnnotation is the deprecated class annotation on Ingresses.
const legacyClassAnnotation = "kubernetes.io/ingress.class"

// classRule is the configuration that decides which Ingresses we serve.
type classRule struct {
	controller   string // --controller-class
	name         string // --ingress-class
	withoutClass bool   // --watch-ingress-without-class
}

// serves reports whether we serve ing, given every IngressClass by name:
//
//   - spec.ingressClassName names an IngressClass of our controller, or no
//     IngressClass of that name exists and the name is --ingress-class (an
//     IngressClass of another controller is never ours, even by that name:
//     during a migration from ingress-nginx both may be installed);
//   - else a non-empty kubernetes.io/ingress.class annotation equals
//     --ingress-class;
//   - else (no class at all) an IngressClass of our controller is marked
//     ingressclass.kubernetes.io/is-default-class=true, or
//     --watch-ingress-without-class is set.
//
// TODO(model): call model.(*Store).Serves, which implements the same rule for
// the syncers, once the watcher keeps a model.Store, so both share one code.
func (r classRule) serves(ing *networkingv1.Ingress, classes map[string]*networkingv1.IngressClass) bool {
	if name := ing.Spec.IngressClassName; name != nil {
		if c, ok := classes[*name]; ok {
			return c.Spec.Controller == r.controller
		}
		return *name == r.name
	}
	if class := ing.Annotations[legacyClassAnnotation]; class != "" {
		return class == r.name
	}
	if r.withoutClass {
		return true
	}
	for _, c := range classes {
		if c.Spec.Controller == r.controller && c.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true" {
			return true
		}
	}
	return false
}
