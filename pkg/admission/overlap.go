package admission

import (
	"fmt"
	"strings"

	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/ingress"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// conflictMark is the word of the build's Problem of a path that an older
// Ingress holds with the same host, path and path type.
const conflictMark = "): conflicts with "

// Conflicts says which paths of ing the build would leave to an older
// Ingress among neighbours (the stored Ingresses of our classes that share
// a host with it, not ing itself), and which paths of a newer neighbour ing
// would take (an UPDATE of an older Ingress): the build of ing beside them,
// each path claimed by the oldest (model.Build). A CREATE has no creation
// time yet: ing is then taken as the newest. Only these conflicts are
// read from that build; what else it reports depends on objects the
// webhook does not know.
func Conflicts(ing *networkingv1.Ingress, neighbours []*networkingv1.Ingress) ([]string, error) {
	if len(neighbours) == 0 {
		return nil, nil
	}
	own := withoutClass(ing)
	if own.CreationTimestamp.IsZero() {
		own.CreationTimestamp = newestAfter(neighbours)
	}
	problems, err := buildBeside(own, nil, mapSlice(neighbours, withoutClass))
	if err != nil {
		return nil, err
	}
	self := intent.KindIngress + " " + own.Namespace + "/" + own.Name
	var out []string
	for _, p := range problems {
		if p.Unserved() != config.RoutesUnserved || !strings.Contains(p.Reason, conflictMark) {
			continue
		}
		switch {
		case p.Namespace == own.Namespace && p.Name == own.Name:
			out = append(out, p.Reason)
		case strings.Contains(p.Reason, conflictMark+self+","):
			out = append(out, fmt.Sprintf("would leave a path of Ingress %s/%s unserved: %s", p.Namespace, p.Name, p.Reason))
		}
	}
	return out, nil
}

// withoutClass is a copy of ing without its class: the Ingresses checked
// here are ours already.
func withoutClass(ing *networkingv1.Ingress) *networkingv1.Ingress {
	own := ing.DeepCopy()
	own.Spec.IngressClassName = nil
	delete(own.Annotations, ingress.LegacyClassAnnotation)
	return own
}

// newestAfter is a second after the newest creation time of ings.
func newestAfter(ings []*networkingv1.Ingress) metav1.Time {
	var t metav1.Time
	for _, i := range ings {
		if t.Before(&i.CreationTimestamp) {
			t = i.CreationTimestamp
		}
	}
	return metav1.NewTime(t.Add(1e9))
}

func mapSlice[T any](in []T, f func(T) T) []T {
	out := make([]T, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}

// stubServices is a Service of every name the Ingresses' backends
// reference, and of every key of services (the first Ingress's), with
// every port they name for it, so that the build places all their paths.
func stubServices(ings []*networkingv1.Ingress, services []intent.Key) []*corev1.Service {
	byKey := map[intent.Key]*corev1.Service{}
	var order []intent.Key
	add := func(k intent.Key, ports []corev1.ServicePort) {
		svc, ok := byKey[k]
		if !ok {
			svc = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name},
				Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "198.18.0.1"}}
			byKey[k] = svc
			order = append(order, k)
		}
		svc.Spec.Ports = mergePorts(svc.Spec.Ports, ports)
	}
	for i, ing := range ings {
		ports := portsOf(ing)
		for _, name := range serviceNames(ing) {
			add(intent.Key{Namespace: ing.Namespace, Name: name}, ports)
		}
		if i == 0 {
			for _, k := range services {
				add(k, ports)
			}
		}
	}
	out := make([]*corev1.Service, len(order))
	for i, k := range order {
		out[i] = byKey[k]
	}
	return out
}

func mergePorts(have, add []corev1.ServicePort) []corev1.ServicePort {
	for _, p := range add {
		dup := false
		for _, h := range have {
			dup = dup || (h.Name == p.Name && h.Port == p.Port)
		}
		if !dup {
			have = append(have, p)
		}
	}
	return have
}

// serviceNames are the Services ing's backends name.
func serviceNames(ing *networkingv1.Ingress) []string {
	var out []string
	add := func(b *networkingv1.IngressBackend) {
		if b != nil && b.Service != nil && b.Service.Name != "" {
			out = append(out, b.Service.Name)
		}
	}
	add(ing.Spec.DefaultBackend)
	for i := range ing.Spec.Rules {
		if http := ing.Spec.Rules[i].HTTP; http != nil {
			for j := range http.Paths {
				add(&http.Paths[j].Backend)
			}
		}
	}
	return out
}

// regexMode reports whether ing makes the paths of its hosts regular
// expressions (use-regex, rewrite-target; the build decides per host).
func regexMode(ing *networkingv1.Ingress) bool {
	_, rx := ing.Annotations[ingress.AnnotationPrefix+"use-regex"]
	_, rw := ing.Annotations[ingress.AnnotationPrefix+"rewrite-target"]
	return rx || rw
}
