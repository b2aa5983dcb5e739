package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/ingress"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"github.com/ingress-sync/ingress-sync/pkg/config"

	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ingress-sync/ingress-sync/pkg/events"
)

// Small constructors of input objects, in the style of Contour's dag tests.

const testController = "k8s.io/ingress-sync"

// epoch is the creation time of test Ingresses; created(n) adds n seconds.
var epoch = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

type ingOpt func(*networkingv1.Ingress)

func newIngress(ns, name string, opts ...ingOpt) *networkingv1.Ingress {
	ing := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: name, CreationTimestamp: metav1.NewTime(epoch),
	}}
	className("nginx")(ing)
	for _, o := range opts {
		o(ing)
	}
	return ing
}

func className(c string) ingOpt {
	return func(i *networkingv1.Ingress) { i.Spec.IngressClassName = &c }
}

func noClass() ingOpt { return func(i *networkingv1.Ingress) { i.Spec.IngressClassName = nil } }

func created(seconds int) ingOpt {
	return func(i *networkingv1.Ingress) {
		i.CreationTimestamp = metav1.NewTime(epoch.Add(time.Duration(seconds) * time.Second))
	}
}

func annotation(k, v string) ingOpt {
	return func(i *networkingv1.Ingress) {
		if i.Annotations == nil {
			i.Annotations = map[string]string{}
		}
		i.Annotations[k] = v
	}
}

// nginx sets an nginx.ingress.kubernetes.io/ annotation.
func nginx(k, v string) ingOpt { return annotation(ingress.AnnotationPrefix+k, v) }

func rule(host string, paths ...networkingv1.HTTPIngressPath) ingOpt {
	return func(i *networkingv1.Ingress) {
		r := networkingv1.IngressRule{Host: host}
		if paths != nil {
			r.HTTP = &networkingv1.HTTPIngressRuleValue{Paths: paths}
		}
		i.Spec.Rules = append(i.Spec.Rules, r)
	}
}

func tlsFor(secret string, hosts ...string) ingOpt {
	return func(i *networkingv1.Ingress) {
		i.Spec.TLS = append(i.Spec.TLS, networkingv1.IngressTLS{SecretName: secret, Hosts: hosts})
	}
}

func defaultBackend(svc string, port any) ingOpt {
	return func(i *networkingv1.Ingress) {
		b := ingressBackend(svc, port)
		i.Spec.DefaultBackend = &b
	}
}

func ingressBackend(svc string, port any) networkingv1.IngressBackend {
	ref := &networkingv1.IngressServiceBackend{Name: svc}
	switch p := port.(type) {
	case int:
		ref.Port.Number = int32(p)
	case string:
		ref.Port.Name = p
	}
	return networkingv1.IngressBackend{Service: ref}
}

func httpPath(pt networkingv1.PathType, path, svc string, port any) networkingv1.HTTPIngressPath {
	return networkingv1.HTTPIngressPath{Path: path, PathType: &pt, Backend: ingressBackend(svc, port)}
}

func prefix(path, svc string, port any) networkingv1.HTTPIngressPath {
	return httpPath(networkingv1.PathTypePrefix, path, svc, port)
}

func exact(path, svc string, port any) networkingv1.HTTPIngressPath {
	return httpPath(networkingv1.PathTypeExact, path, svc, port)
}

func implSpecific(path, svc string, port any) networkingv1.HTTPIngressPath {
	return httpPath(networkingv1.PathTypeImplementationSpecific, path, svc, port)
}

func service(ns, name string, ports ...corev1.ServicePort) *corev1.Service {
	if len(ports) == 0 {
		ports = []corev1.ServicePort{svcPort("http", 80)}
	}
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: ports}}
}

func svcPort(name string, port int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: port, Protocol: corev1.ProtocolTCP}
}

func externalName(ns, name, host string) *corev1.Service {
	s := service(ns, name)
	s.Spec.Type = corev1.ServiceTypeExternalName
	s.Spec.ExternalName = host
	return s
}

// endpoint states for slice().
func ready(addr string) discoveryv1.Endpoint {
	t := true
	return discoveryv1.Endpoint{Addresses: []string{addr}, Conditions: discoveryv1.EndpointConditions{Ready: &t}}
}

func notReady(addr string) discoveryv1.Endpoint {
	f := false
	return discoveryv1.Endpoint{Addresses: []string{addr}, Conditions: discoveryv1.EndpointConditions{Ready: &f}}
}

func readyUnknown(addr string) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{addr}}
}

// slice returns an IPv4 EndpointSlice of svc with one port.
func slice(ns, name, svc, portName string, port int32, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	pn, p := portName, port
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   eps,
		Ports:       []discoveryv1.EndpointPort{{Name: &pn, Port: &p}},
	}
}

func testdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// tlsSecret returns a kubernetes.io/tls Secret holding testdata/<pair>.crt
// and .key; pair "example" covers example.com and *.example.com.
func tlsSecret(t testing.TB, ns, name, pair string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey:       testdata(t, pair+".crt"),
			corev1.TLSPrivateKeyKey: testdata(t, pair+".key"),
		}}
}

func ingressClass(name, controller string, isDefault bool) *networkingv1.IngressClass {
	c := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: networkingv1.IngressClassSpec{Controller: controller}}
	if isDefault {
		c.Annotations = map[string]string{ingress.DefaultClassAnnotation: "true"}
	}
	return c
}

func upsertEvent(obj runtime.Object) events.Event {
	m := obj.(metav1.Object)
	return events.Event{Op: events.OpUpdate, Kind: events.KindOf(obj), Namespace: m.GetNamespace(), Name: m.GetName(), Object: obj}
}

func newTestStore(t testing.TB, objs ...runtime.Object) *Store {
	t.Helper()
	s := NewStore(ingress.NewSource())
	for _, o := range objs {
		if _, err := s.Apply(upsertEvent(o)); err != nil {
			t.Fatalf("Apply(%T): %v", o, err)
		}
	}
	return s
}

func testOptions() Options {
	return Options{ControllerClass: testController, IngressClass: "nginx"}
}

// Constructors of expected output.

func srv(host string, locs ...config.Location) config.Server {
	if locs == nil {
		locs = []config.Location{}
	}
	return config.Server{Hostname: host, Locations: locs}
}

func tlsSrv(host string, redirect bool, locs ...config.Location) config.Server {
	s := srv(host, locs...)
	s.TLS, s.SSLRedirect = true, redirect
	return s
}

func loc(path string, pt config.PathType, backend, ing string) config.Location {
	return config.Location{Path: path, PathType: pt, Backend: backend, Ingress: ing}
}

func withSettings(l config.Location, s config.LocationSettings) config.Location {
	l.Settings = s
	return l
}

func catchAll(backend string) config.Location { return loc("/", config.PathPrefix, backend, "") }

func be(ns, svc, port string, eps ...config.Endpoint) config.Backend {
	if eps == nil {
		eps = []config.Endpoint{}
	}
	return config.Backend{Name: ns + "-" + svc + "-" + port, Namespace: ns, Service: svc, Port: port,
		Endpoints: eps, LoadBalance: config.LoadBalanceRoundRobin}
}

func ep(addr string, port int32) config.Endpoint { return config.Endpoint{Address: addr, Port: port} }

// problemStrings renders problems as "Kind ns/name: reason".
func problemStrings(ps []config.Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = fmt.Sprintf("%s %s/%s: %s", p.Kind, p.Namespace, p.Name, p.Reason)
	}
	return out
}

// checkProblems wants one problem per entry, in order, each containing the
// entry as a substring.
func checkProblems(t *testing.T, got []config.Problem, want []string) {
	t.Helper()
	gs := problemStrings(got)
	ok := len(gs) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = strings.Contains(gs[i], want[i])
	}
	if !ok {
		t.Errorf("problems:\n got  %q\n want %q", gs, want)
	}
}

// withoutChecksums returns backends with Checksum cleared, for comparison.
func withoutChecksums(bs config.BackendList) []config.Backend {
	out := make([]config.Backend, bs.Len())
	for i, b := range bs.All() {
		out[i] = *b
		out[i].Checksum = ""
	}
	return out
}

// ptrs returns the list of pointers to copies of bs, for Configuration
// literals.
func ptrs(bs ...config.Backend) config.BackendList {
	out := make([]*config.Backend, len(bs))
	for i := range bs {
		out[i] = &bs[i]
	}
	return config.NewBackendList(out)
}

func objMeta(ns, name string) metav1.ObjectMeta { return metav1.ObjectMeta{Namespace: ns, Name: name} }

// parsedSettings returns the settings the Ingress source makes of an
// Ingress with annotations.
func parsedSettings(annotations map[string]string) *intent.Settings {
	ing := newIngress("default", "ing")
	ing.Annotations = annotations
	e, err := ingress.NewSource().Translate(events.KindIngress, intent.Key{Namespace: "default", Name: "ing"}, ing)
	if err != nil {
		panic(err)
	}
	return e.Settings
}
