package watch

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestClassRuleServes(t *testing.T) {
	class := func(name, controller string, isDefault bool) *networkingv1.IngressClass {
		c := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.IngressClassSpec{Controller: controller}}
		if isDefault {
			c.Annotations = map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}
		}
		return c
	}
	byName := func(cs ...*networkingv1.IngressClass) map[string]*networkingv1.IngressClass {
		m := map[string]*networkingv1.IngressClass{}
		for _, c := range cs {
			m[c.Name] = c
		}
		return m
	}
	ing := func(className string, annotation string) *networkingv1.Ingress {
		i := &networkingv1.Ingress{}
		if className != "" {
			i.Spec.IngressClassName = &className
		}
		if annotation != "" {
			i.Annotations = map[string]string{legacyClassAnnotation: annotation}
		}
		return i
	}
	rule := classRule{controller: "k8s.io/ingress-sync", name: "nginx"}
	ours, theirs := class("ours", rule.controller, false), class("theirs", "k8s.io/ingress-nginx", false)
	tests := []struct {
		name    string
		rule    classRule
		ing     *networkingv1.Ingress
		classes map[string]*networkingv1.IngressClass
		want    bool
	}{
		{name: "class of our controller", rule: rule, ing: ing("ours", ""), classes: byName(ours, theirs), want: true},
		{name: "class of another controller", rule: rule, ing: ing("theirs", ""), classes: byName(ours, theirs)},
		{name: "flag name without IngressClass", rule: rule, ing: ing("nginx", ""), classes: byName(ours), want: true},
		{name: "flag name owned by another controller", rule: rule, ing: ing("nginx", ""), classes: byName(class("nginx", "k8s.io/ingress-nginx", false))},
		{name: "unknown class", rule: rule, ing: ing("other", ""), classes: byName(ours)},
		{name: "legacy annotation", rule: rule, ing: ing("", "nginx"), want: true},
		{name: "legacy annotation of another class", rule: rule, ing: ing("", "traefik")},
		{name: "class name wins over annotation", rule: rule, ing: ing("theirs", "nginx"), classes: byName(theirs)},
		{name: "no class, no default", rule: rule, ing: ing("", ""), classes: byName(ours)},
		{name: "no class, our default", rule: rule, ing: ing("", ""), classes: byName(class("ours", rule.controller, true)), want: true},
		{name: "no class, their default", rule: rule, ing: ing("", ""), classes: byName(class("theirs", "x", true))},
		{name: "no class, watch without class", rule: classRule{controller: rule.controller, name: "nginx", withoutClass: true}, ing: ing("", ""), want: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.rule.serves(tc.ing, tc.classes); got != tc.want {
				t.Errorf("serves() = %v, want %v", got, tc.want)
			}
		})
	}
}
