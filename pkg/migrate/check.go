package migrate

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// DefaultConfigMap is the controller ConfigMap of a default ingress-nginx
// installation (its Helm chart and static manifests).
const DefaultConfigMap = "ingress-nginx/ingress-nginx-controller"

// checkController is the controller class Check builds with; the
// Ingresses checked are given an IngressClass of it.
const checkController = ingress.DefaultControllerClass

// Options say what Check looks at.
type Options struct {
	// IngressClass selects the Ingresses checked: those whose
	// spec.ingressClassName or kubernetes.io/ingress.class annotation is
	// this class, and those without any class. "" checks every Ingress.
	IngressClass string
	// ConfigMap is the "namespace/name" of the ingress-nginx controller
	// ConfigMap; "" checks none.
	ConfigMap string
	// NewBuilder returns the builder ingress-sync serves with (the
	// syncer's), empty, for the given classes and controller ConfigMap.
	NewBuilder func(b BuildOptions) Builder
}

// BuildOptions are the syncer flags a check builds with.
type BuildOptions struct {
	ControllerClass, IngressClass, ConfigMap string
}

// Builder is what a check needs of the syncer's builder: events in, the
// Configuration (and its Problems) out.
type Builder interface {
	Apply(ev events.Event) (bool, error)
	Full() *config.Configuration
}

// Check looks up every annotation and ConfigMap key in use and builds the
// objects with Options.NewBuilder (the syncer's) as ingress-sync would serve them once their
// class is switched.
func Check(in *Input, o Options) (*Report, error) {
	if o.NewBuilder == nil {
		return nil, fmt.Errorf("%w: no builder", ErrInput)
	}
	r := &Report{Source: in.Source, Notes: slices.Clone(in.Notes)}
	var cmNS, cmName string
	if o.ConfigMap != "" {
		var err error
		if cmNS, cmName, err = splitKey(o.ConfigMap); err != nil {
			return nil, err
		}
	}
	var objs []runtime.Object
	checked := map[string]bool{}
	gatewayAPI := 0
	for _, obj := range in.Objects {
		if slices.Contains(events.GatewayKinds, events.KindOf(obj)) {
			gatewayAPI++ // served as they are: nothing of ingress-nginx to check
			continue
		}
		switch v := obj.(type) {
		case *networkingv1.IngressClass:
			continue // the Ingresses checked get ingress-sync's class
		case *corev1.Namespace:
			continue // read by the Gateway API listeners only
		case *networkingv1.Ingress:
			if !selected(v, o.IngressClass) {
				continue
			}
			r.Ingresses++
			checked["Ingress/"+v.Namespace+"/"+v.Name] = true
			r.Findings = append(r.Findings, annotationFindings(v)...)
			obj = switchClass(v)
		case *corev1.ConfigMap:
			if v.Namespace == cmNS && v.Name == cmName {
				r.ConfigMap = o.ConfigMap
				checked["ConfigMap/"+o.ConfigMap] = true
				r.Findings = append(r.Findings, keyFindings(v)...)
			}
		}
		objs = append(objs, obj)
	}
	if gatewayAPI > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%s not checked: migrate-check checks Ingresses and the controller ConfigMap", count(gatewayAPI, "Gateway API object", "Gateway API objects")))
	}
	if o.ConfigMap != "" && r.ConfigMap == "" {
		r.Notes = append(r.Notes, fmt.Sprintf("ConfigMap %s not found: the ingress-nginx defaults are assumed", o.ConfigMap))
	}
	if in.Manifests {
		stubs := missingServices(objs)
		objs = append(objs, stubs...)
		if len(stubs) > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("%s named by the Ingresses but missing from the directory: assumed to exist", count(len(stubs), "Service", "Services")))
		}
	}
	problems, err := build(objs, o, r.ConfigMap)
	if err != nil {
		return nil, err
	}
	r.Problems = relevantProblems(problems, checked, r.Findings)
	r.summarize()
	return r, nil
}

// selected reports whether ing is of class (or has none); "" selects all.
func selected(ing *networkingv1.Ingress, class string) bool {
	if class == "" {
		return true
	}
	if c := ing.Spec.IngressClassName; c != nil {
		return *c == class
	}
	if c, ok := ing.Annotations[ingress.LegacyClassAnnotation]; ok {
		return c == class
	}
	return true
}

// checkClass is the class the checked Ingresses are switched to.
const checkClass = "ingress-sync"

// switchClass returns a copy of ing served by the Build of Check.
func switchClass(ing *networkingv1.Ingress) *networkingv1.Ingress {
	c := ing.DeepCopy()
	class := checkClass
	c.Spec.IngressClassName = &class
	delete(c.Annotations, ingress.LegacyClassAnnotation)
	return c
}

func annotationFindings(ing *networkingv1.Ingress) []Finding {
	var out []Finding
	for k := range ing.Annotations {
		if !strings.HasPrefix(k, ingress.AnnotationPrefix) {
			continue
		}
		status, note := ingress.AnnotationStatus(k)
		out = append(out, Finding{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name, Type: "annotation",
			Key: strings.TrimPrefix(k, ingress.AnnotationPrefix), Status: status, Note: note})
	}
	slices.SortFunc(out, func(a, b Finding) int { return cmp.Compare(a.Key, b.Key) })
	return out
}

func keyFindings(cm *corev1.ConfigMap) []Finding {
	var out []Finding
	for k := range cm.Data {
		status, note := ingress.ConfigKeyStatus(k)
		out = append(out, Finding{Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name, Type: "key",
			Key: k, Status: status, Note: note})
	}
	slices.SortFunc(out, func(a, b Finding) int { return cmp.Compare(a.Key, b.Key) })
	return out
}

// build builds objs with o.NewBuilder and returns the Problems.
func build(objs []runtime.Object, o Options, configMap string) ([]config.Problem, error) {
	s := o.NewBuilder(BuildOptions{ControllerClass: checkController, IngressClass: checkClass, ConfigMap: configMap})
	for _, obj := range objs {
		m := obj.(metav1.Object)
		ev := events.Event{Op: events.OpCreate, Kind: events.KindOf(obj), Namespace: m.GetNamespace(), Name: m.GetName(), Object: obj}
		if _, err := s.Apply(ev); err != nil {
			return nil, fmt.Errorf("%w: %s %s/%s: %w", ErrInput, ev.Kind, ev.Namespace, ev.Name, err)
		}
	}
	return s.Full().Problems, nil
}

// relevantProblems keeps the Problems of the objects checked, without
// those a finding already says: an annotation or key reported as not
// supported, and the refusal of snippets.
func relevantProblems(problems []config.Problem, checked map[string]bool, findings []Finding) []config.Problem {
	var out []config.Problem
	for _, p := range problems {
		if p.Kind != config.ProblemKindOptions && !checked[p.Kind+"/"+p.Namespace+"/"+p.Name] {
			continue
		}
		if !saidByFinding(p, findings) {
			out = append(out, p)
		}
	}
	return out
}

func saidByFinding(p config.Problem, findings []Finding) bool {
	for _, f := range findings {
		if f.Kind != p.Kind || f.Namespace != p.Namespace || f.Name != p.Name {
			continue
		}
		name := f.Key
		if f.Type == "annotation" {
			name = ingress.AnnotationPrefix + name
		}
		switch f.Status {
		case ingress.StatusSupported, ingress.StatusSupportedWithDifference:
			continue
		case ingress.StatusRefused:
			if strings.Contains(p.Reason, name) && strings.Contains(p.Reason, "snippets are never applied") {
				return true
			}
		}
		if strings.Contains(p.Reason, " "+name+"=") && strings.Contains(p.Reason, "not supported") {
			return true
		}
	}
	return false
}

// missingServices returns a stub Service for every Service an Ingress of
// objs names that objs lack, with the ports named.
func missingServices(objs []runtime.Object) []runtime.Object {
	have := map[[2]string]bool{}
	for _, obj := range objs {
		if s, ok := obj.(*corev1.Service); ok {
			have[[2]string{s.Namespace, s.Name}] = true
		}
	}
	stubs := map[[2]string]*corev1.Service{}
	for _, obj := range objs {
		ing, ok := obj.(*networkingv1.Ingress)
		if !ok {
			continue
		}
		for _, b := range backends(ing) {
			key := [2]string{ing.Namespace, b.Name}
			if have[key] {
				continue
			}
			if stubs[key] == nil {
				stubs[key] = &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: key[0], Name: key[1]}}
			}
			addPort(stubs[key], b.Port)
		}
	}
	out := make([]runtime.Object, 0, len(stubs))
	for _, s := range stubs {
		out = append(out, s)
	}
	sortObjects(out)
	return out
}

// backends lists the Service backends of ing.
func backends(ing *networkingv1.Ingress) []*networkingv1.IngressServiceBackend {
	var out []*networkingv1.IngressServiceBackend
	if d := ing.Spec.DefaultBackend; d != nil && d.Service != nil {
		out = append(out, d.Service)
	}
	for _, r := range ing.Spec.Rules {
		if r.HTTP == nil {
			continue
		}
		for _, p := range r.HTTP.Paths {
			if p.Backend.Service != nil {
				out = append(out, p.Backend.Service)
			}
		}
	}
	return out
}

func addPort(s *corev1.Service, p networkingv1.ServiceBackendPort) {
	port := corev1.ServicePort{Name: p.Name, Port: p.Number}
	if port.Port == 0 {
		port.Port = 80 + int32(len(s.Spec.Ports))
	}
	for _, q := range s.Spec.Ports {
		if q.Name == port.Name && (p.Number == 0 || q.Port == p.Number) {
			return
		}
	}
	s.Spec.Ports = append(s.Spec.Ports, port)
}

// tlsSecrets lists the namespace and name of every Secret the Ingresses of
// objs name in spec.tls, sorted and once.
func tlsSecrets(objs []runtime.Object) [][2]string {
	var out [][2]string
	for _, obj := range objs {
		if ing, ok := obj.(*networkingv1.Ingress); ok {
			for _, t := range ing.Spec.TLS {
				if t.SecretName != "" {
					out = append(out, [2]string{ing.Namespace, t.SecretName})
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b [2]string) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	return slices.Compact(out)
}

// splitKey splits "namespace/name".
func splitKey(key string) (string, string, error) {
	ns, name, ok := strings.Cut(key, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("%q is not namespace/name", key)
	}
	return ns, name, nil
}
