package watch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/gateway"
)

// Each Gateway of ours has a Service of its own (docs/gateway-api.md, "Each
// Gateway has an address of its own"): the leader keeps it in the election
// namespace, named by gateway.ServiceName, with the label
// gateway.ServiceManagedByLabel and the annotation
// gateway.ServiceGatewayAnnotation naming the Gateway (pkg/gateway, whose
// translator reads these Services from the stream), the fleet's selector (Config.GatewayServiceSelector) and type
// (Config.GatewayServiceType), and one port per distinct listener port:
// port = the listener's (protocol UDP for a UDP listener, TCP for the
// others), targetPort = a port of the fleet allocated from
// Config.GatewayPortRange, unique across these Services. The Service is the
// record of the allocation: a port keeps its targetPort while the listener
// port exists, a new one takes the lowest free. It is deleted with the
// Gateway, or when the Gateway leaves our class. These Services are
// published to the stream like any other, in or out of the watched
// namespaces: the syncers serve each listener on its targetPort.

// DefaultGatewayPortRange is the default of Config.GatewayPortRange.
const DefaultGatewayPortRange = "10000-10999"

// ErrNoFreePort: every port of Config.GatewayPortRange is allocated.
var ErrNoFreePort = errors.New("watch: no free port in the gateway port range")

// parsePortRange parses "low-high", two ports with low <= high.
func parsePortRange(s string) (lo, hi int32, err error) {
	a, b, ok := strings.Cut(s, "-")
	l, err1 := strconv.ParseUint(a, 10, 16)
	h, err2 := strconv.ParseUint(b, 10, 16)
	if !ok || err1 != nil || err2 != nil || l < 1 || l > h {
		return 0, 0, fmt.Errorf("gateway port range %q: want low-high, 1 <= low <= high <= 65535", s)
	}
	return int32(l), int32(h), nil
}

// gatewayServices provisions the Services of Gateways, for the status
// writer's single worker (so that allocations never race).
type gatewayServices struct {
	w        *Watcher
	ns       string
	selector map[string]string
	typ      corev1.ServiceType
	lo, hi   int32
	// written are the Services this term wrote last, by name: their ports
	// count as allocated even before the cache holds them.
	written map[string]*corev1.Service
}

func newGatewayServices(w *Watcher) *gatewayServices {
	if w.cfg.GatewayServiceSelector == "" {
		return nil
	}
	sel, _ := labels.ConvertSelectorToLabelsMap(w.cfg.GatewayServiceSelector) // Validate checked it
	lo, hi, _ := parsePortRange(w.cfg.GatewayPortRange)
	return &gatewayServices{w: w, ns: w.cfg.ElectionNamespace, selector: sel, typ: w.cfg.GatewayServiceType,
		lo: lo, hi: hi, written: make(map[string]*corev1.Service)}
}

// addGatewayServices adds the informer of the Gateways' Services to the
// Service source when the watched namespaces do not hold them.
func (s *informerSet) addGatewayServices(cfg Config, client kubernetes.Interface) {
	if cfg.GatewayServiceSelector == "" || cfg.WatchNamespace == "" || cfg.WatchNamespace == cfg.ElectionNamespace {
		return
	}
	f := s.factoryWithLabels(client, cfg.ElectionNamespace, gateway.ServiceManagedByLabel+"="+gateway.ServiceManagedBy)
	s.add(events.KindService, f.Core().V1().Services().Informer())
}

// service returns the cached Service named name of the election
// namespace, nil when the cache holds none.
func (g *gatewayServices) service(name string) *corev1.Service {
	svc, _ := cached[*corev1.Service](g.w.informers.sources[events.KindService], g.ns, name)
	return svc
}

// current returns the Service named name: the cached one, else, when this
// term wrote it (the cache may lag behind, or someone deleted it), the one
// the API server holds; nil when there is none.
func (g *gatewayServices) current(ctx context.Context, name string) (*corev1.Service, error) {
	if svc := g.service(name); svc != nil {
		return svc, nil
	}
	if _, wrote := g.written[name]; !wrote {
		return nil, nil
	}
	callCtx, cancel := context.WithTimeout(ctx, natsTimeout)
	defer cancel()
	svc, err := g.w.cfg.Client.CoreV1().Services(g.ns).Get(callCtx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		delete(g.written, name)
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get Service %s/%s: %w", g.ns, name, err)
	}
	return svc, nil
}

// factoryWithLabels returns a new informer factory without resync for
// the objects of namespace ns matching labelSelector.
func (s *informerSet) factoryWithLabels(client kubernetes.Interface, ns, labelSelector string) informers.SharedInformerFactory {
	f := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = labelSelector }))
	s.factories = append(s.factories, f)
	return f
}

// gatewayOf returns the "namespace/name" of the Gateway a Service of ours
// is for, "" for any other Service.
func (g *gatewayServices) gatewayOf(svc *corev1.Service) string {
	if g == nil || svc.Namespace != g.ns || svc.Labels[gateway.ServiceManagedByLabel] != gateway.ServiceManagedBy {
		return ""
	}
	return svc.Annotations[gateway.ServiceGatewayAnnotation]
}

// allocated returns the targetPorts of every Gateway Service but the one
// named except.
func (g *gatewayServices) allocated(except string) map[int32]bool {
	out := make(map[int32]bool)
	add := func(svc *corev1.Service) {
		if svc.Name == except || g.gatewayOf(svc) == "" {
			return
		}
		for _, p := range svc.Spec.Ports {
			out[p.TargetPort.IntVal] = true
		}
	}
	for _, obj := range g.w.informers.sources[events.KindService].list() {
		if svc, ok := obj.(*corev1.Service); ok {
			if _, mine := g.written[svc.Name]; !mine || svc.Namespace != g.ns {
				add(svc)
			}
		}
	}
	for _, svc := range g.written {
		add(svc)
	}
	return out
}

// ports returns the ports of gw's Service: one per distinct listener port
// and transport (UDP for a UDP listener, TCP for any other), each keeping
// the targetPort have gives it, new ones taking the lowest free port of
// the range.
func (g *gatewayServices) ports(gw *gatewayv1.Gateway, have *corev1.Service) ([]corev1.ServicePort, error) {
	kept := make(map[portProto]int32)
	if have != nil {
		for _, p := range have.Spec.Ports {
			kept[portProto{p.Port, cmpProtocol(p.Protocol)}] = p.TargetPort.IntVal
		}
	}
	wanted := make(map[portProto]bool)
	for _, l := range gw.Spec.Listeners {
		wanted[listenerPortProto(&l)] = true
	}
	// The common case, every listener port kept: nothing to allocate, no
	// need to read the other Services.
	used := make(map[int32]bool)
	if have == nil || len(kept) != len(wanted) || !g.inRange(kept) || !allIn(wanted, kept) {
		used = g.allocated(gateway.ServiceName(gw.Namespace, gw.Name))
	}
	for pp := range wanted {
		if t := kept[pp]; t >= g.lo && t <= g.hi && !used[t] {
			used[t] = true
		} else {
			delete(kept, pp)
		}
	}
	var out []corev1.ServicePort
	for _, pp := range sortedPortProtos(wanted) {
		t, ok := kept[pp]
		if !ok {
			if t = lowestFree(used, g.lo, g.hi); t == 0 {
				return nil, fmt.Errorf("%w %d-%d (Gateway %s/%s)", ErrNoFreePort, g.lo, g.hi, gw.Namespace, gw.Name)
			}
			used[t] = true
		}
		name := "p" + strconv.Itoa(int(pp.port))
		if pp.proto == corev1.ProtocolUDP {
			name += "-udp"
		}
		out = append(out, corev1.ServicePort{Name: name, Protocol: pp.proto, Port: pp.port, TargetPort: intstr.FromInt32(t)})
	}
	return out, nil
}

// portProto is a Service port's number and protocol.
type portProto struct {
	port  int32
	proto corev1.Protocol
}

// listenerPortProto is the Service port of listener l: its port, UDP for
// a UDP listener and TCP for any other.
func listenerPortProto(l *gatewayv1.Listener) portProto {
	if l.Protocol == gatewayv1.UDPProtocolType {
		return portProto{int32(l.Port), corev1.ProtocolUDP}
	}
	return portProto{int32(l.Port), corev1.ProtocolTCP}
}

// cmpProtocol is p, TCP when empty.
func cmpProtocol(p corev1.Protocol) corev1.Protocol {
	if p == "" {
		return corev1.ProtocolTCP
	}
	return p
}

func sortedPortProtos(m map[portProto]bool) []portProto {
	out := slices.Collect(maps.Keys(m))
	slices.SortFunc(out, func(a, b portProto) int {
		if a.port != b.port {
			return int(a.port - b.port)
		}
		return strings.Compare(string(a.proto), string(b.proto))
	})
	return out
}

// inRange reports whether every targetPort of kept is in the range.
func (g *gatewayServices) inRange(kept map[portProto]int32) bool {
	for _, t := range kept {
		if t < g.lo || t > g.hi {
			return false
		}
	}
	return true
}

func allIn(wanted map[portProto]bool, kept map[portProto]int32) bool {
	for p := range wanted {
		if _, ok := kept[p]; !ok {
			return false
		}
	}
	return true
}

func lowestFree(used map[int32]bool, lo, hi int32) int32 {
	for p := lo; p <= hi; p++ {
		if !used[p] {
			return p
		}
	}
	return 0
}

// ensure makes the Service of Gateway gw of ours what it should be and
// returns it.
func (g *gatewayServices) ensure(ctx context.Context, gw *gatewayv1.Gateway) (*corev1.Service, error) {
	name := gateway.ServiceName(gw.Namespace, gw.Name)
	have, err := g.current(ctx, name)
	if err != nil {
		return nil, err
	}
	ports, err := g.ports(gw, have)
	if err != nil {
		return have, err
	}
	want := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: g.ns, Name: name,
			Labels:      map[string]string{gateway.ServiceManagedByLabel: gateway.ServiceManagedBy},
			Annotations: map[string]string{gateway.ServiceGatewayAnnotation: gw.Namespace + "/" + gw.Name}},
		Spec: corev1.ServiceSpec{Type: g.typ, Selector: g.selector, Ports: ports},
	}
	client := g.w.cfg.Client.CoreV1().Services(g.ns)
	callCtx, cancel := context.WithTimeout(ctx, natsTimeout)
	defer cancel()
	var out *corev1.Service
	switch {
	case have == nil:
		out, err = client.Create(callCtx, want, metav1.CreateOptions{})
	case g.same(have, want):
		return have, nil
	default:
		update := have.DeepCopy()
		update.Labels, update.Annotations = mergeMaps(update.Labels, want.Labels), mergeMaps(update.Annotations, want.Annotations)
		update.Spec.Type, update.Spec.Selector, update.Spec.Ports = want.Spec.Type, want.Spec.Selector, mergePorts(have.Spec.Ports, ports, g.typ)
		out, err = client.Update(callCtx, update, metav1.UpdateOptions{})
	}
	if err != nil {
		return have, fmt.Errorf("write Service %s/%s: %w", g.ns, name, err)
	}
	g.written[name] = out
	g.w.log.Info("gateway service written", "gateway", gw.Namespace+"/"+gw.Name, "service", name, "ports", portList(ports))
	return out, nil
}

// same reports whether have already is want (fields the API server fills
// in, such as nodePorts, aside).
func (g *gatewayServices) same(have, want *corev1.Service) bool {
	if have.Spec.Type != want.Spec.Type || !maps.Equal(have.Spec.Selector, want.Spec.Selector) ||
		have.Labels[gateway.ServiceManagedByLabel] != gateway.ServiceManagedBy ||
		have.Annotations[gateway.ServiceGatewayAnnotation] != want.Annotations[gateway.ServiceGatewayAnnotation] {
		return false
	}
	return slices.EqualFunc(have.Spec.Ports, want.Spec.Ports, func(a, b corev1.ServicePort) bool {
		return a.Name == b.Name && a.Protocol == b.Protocol && a.Port == b.Port && a.TargetPort == b.TargetPort
	})
}

// mergePorts returns want with the nodePorts have assigned to the same
// ports kept, for a Service of type typ that has them (a ClusterIP one
// must have none).
func mergePorts(have, want []corev1.ServicePort, typ corev1.ServiceType) []corev1.ServicePort {
	out := slices.Clone(want)
	if typ == corev1.ServiceTypeClusterIP {
		return out
	}
	for i := range out {
		if j := slices.IndexFunc(have, func(p corev1.ServicePort) bool {
			return p.Port == out[i].Port && cmpProtocol(p.Protocol) == cmpProtocol(out[i].Protocol)
		}); j >= 0 {
			out[i].NodePort = have[j].NodePort
		}
	}
	return out
}

func mergeMaps(have, want map[string]string) map[string]string {
	out := maps.Clone(have)
	if out == nil {
		out = make(map[string]string, len(want))
	}
	maps.Copy(out, want)
	return out
}

func portList(ports []corev1.ServicePort) string {
	parts := make([]string, len(ports))
	for i, p := range ports {
		parts[i] = fmt.Sprintf("%d->%d", p.Port, p.TargetPort.IntVal)
	}
	return strings.Join(parts, ",")
}

// remove deletes the Service of Gateway ns/name, if it is ours.
func (g *gatewayServices) remove(ctx context.Context, ns, name string) error {
	svcName := gateway.ServiceName(ns, name)
	have, err := g.current(ctx, svcName)
	if err != nil {
		return err
	}
	if have == nil || g.gatewayOf(have) != ns+"/"+name {
		delete(g.written, svcName)
		return nil
	}
	callCtx, cancel := context.WithTimeout(ctx, natsTimeout)
	defer cancel()
	err = g.w.cfg.Client.CoreV1().Services(g.ns).Delete(callCtx, svcName, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &have.UID}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete Service %s/%s: %w", g.ns, svcName, err)
	}
	delete(g.written, svcName)
	g.w.log.Info("gateway service deleted", "gateway", ns+"/"+name, "service", svcName)
	return nil
}

// gatewayKeys returns the Gateways of every Service of ours, to clean up
// those whose Gateway is gone.
func (g *gatewayServices) gatewayKeys() []string {
	var out []string
	for _, obj := range g.w.informers.sources[events.KindService].list() {
		if svc, ok := obj.(*corev1.Service); ok {
			if gk := g.gatewayOf(svc); gk != "" {
				out = append(out, gk)
			}
		}
	}
	return out
}

// addresses are the Gateway's status addresses from its Service: the
// load balancer's, or the cluster IP of a ClusterIP Service.
func gatewayAddresses(svc *corev1.Service) []gatewayv1.GatewayStatusAddress {
	if svc == nil {
		return nil
	}
	var out []gatewayv1.GatewayStatusAddress
	ipType, hostType := gatewayv1.IPAddressType, gatewayv1.HostnameAddressType
	for _, lb := range svc.Status.LoadBalancer.Ingress {
		switch {
		case lb.IP != "":
			out = append(out, gatewayv1.GatewayStatusAddress{Type: &ipType, Value: lb.IP})
		case lb.Hostname != "":
			out = append(out, gatewayv1.GatewayStatusAddress{Type: &hostType, Value: lb.Hostname})
		}
	}
	if len(out) == 0 && svc.Spec.Type == corev1.ServiceTypeClusterIP && svc.Spec.ClusterIP != "" && svc.Spec.ClusterIP != corev1.ClusterIPNone {
		out = append(out, gatewayv1.GatewayStatusAddress{Type: &ipType, Value: svc.Spec.ClusterIP})
	}
	return out
}
