package admission

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/ingress"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
	"github.com/ingress-sync/ingress-sync/pkg/model"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// buildOptions are the syncer flags the build of one Ingress assumes: it
// is served whatever its class (the class rule is the Handler's), and
// ssl-passthrough is taken as enabled, so that nothing a syncer with
// --enable-ssl-passthrough serves is refused.
var buildOptions = model.Options{WatchIngressWithoutClass: true, EnableSSLPassthrough: true}

// standsAlone reports whether what the build makes of e depends on its
// Ingress alone, given its Services: it names no Secret nor ConfigMap
// (which fail closed when missing) and it is no canary (served only
// beside its main Ingress).
func standsAlone(e *intent.Entry) bool {
	return len(e.Secrets) == 0 && len(e.ConfigMaps) == 0 && e.Settings.Canary == nil
}

// builtAlone builds a Store holding ing alone beside its Services (see
// buildBeside) and returns the reasons of the build's Problems of ing that
// leave it, or part of it, unserved. These are what the build decides from
// the Ingress beyond its entry: settings resolved at Build that fail closed
// (proxy-ssl-verify on without proxy-ssl-secret), the paths of a host that
// use-regex makes regular expressions whatever their type. Build is pure:
// this runs no nginx and renders nothing.
func builtAlone(e *intent.Entry, ing *networkingv1.Ingress) ([]string, error) {
	own := withoutClass(ing)
	problems, err := buildBeside(own, e.Services, nil)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range problems {
		if p.Namespace == own.Namespace && p.Name == own.Name && p.Unserved() != config.ServedAsIs {
			out = append(out, p.Reason)
		}
	}
	return out, nil
}

// buildBeside builds a Store holding own and others (Ingresses without
// class: they are ours), beside a Service of every name their backends
// reference, and of every one of services (own's entry's, which also
// names the Services of its annotations), each with every port they name;
// it returns the build's Problems of Ingresses.
func buildBeside(own *networkingv1.Ingress, services []intent.Key, others []*networkingv1.Ingress) ([]config.Problem, error) {
	all := append([]*networkingv1.Ingress{own}, others...)
	s := model.NewStore(ingress.NewSource())
	for _, svc := range stubServices(all, services) {
		if err := apply(s, events.KindService, svc); err != nil {
			return nil, err
		}
	}
	for _, i := range all {
		if err := apply(s, events.KindIngress, i); err != nil {
			return nil, err
		}
	}
	var out []config.Problem
	for _, p := range model.Build(s, buildOptions).Problems {
		if p.Kind == intent.KindIngress {
			out = append(out, p)
		}
	}
	return out, nil
}

func apply(s *model.Store, kind events.Kind, obj runtime.Object) error {
	m := obj.(metav1.Object)
	_, err := s.Apply(events.Event{Op: events.OpCreate, Kind: kind, Namespace: m.GetNamespace(), Name: m.GetName(), Object: obj})
	return err
}

// portsOf is every Service port ing's backends name, by number or name,
// and port 80 (the first port, which the default-backend annotation takes).
func portsOf(ing *networkingv1.Ingress) []corev1.ServicePort {
	out := []corev1.ServicePort{{Name: "", Port: 80, Protocol: corev1.ProtocolTCP}}
	seen := map[networkingv1.ServiceBackendPort]bool{{Number: 80}: true}
	add := func(b *networkingv1.IngressBackend) {
		if b == nil || b.Service == nil || seen[b.Service.Port] {
			return
		}
		seen[b.Service.Port] = true
		p := corev1.ServicePort{Name: b.Service.Port.Name, Port: b.Service.Port.Number, Protocol: corev1.ProtocolTCP}
		if p.Port < 1 || p.Port > 65535 {
			p.Port = 80
		}
		out = append(out, p)
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
