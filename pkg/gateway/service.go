package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/ingress-sync/ingress-sync/pkg/events"
	"github.com/ingress-sync/ingress-sync/pkg/intent"
)

// The Service the watcher keeps for each Gateway of ours (see
// docs/gateway-api.md, "Each Gateway has an address of its own"): the
// syncers serve a listener of port P on the targetPort of the Service's
// port P.
const (
	// ServiceGatewayAnnotation names the Gateway ("namespace/name").
	ServiceGatewayAnnotation = "gateway.ingress-sync.io/gateway"
	// ServiceManagedByLabel is set to ServiceManagedBy.
	ServiceManagedByLabel = "app.kubernetes.io/managed-by"
	ServiceManagedBy      = "ingress-sync"
)

// ServiceName is the name of the Service of Gateway namespace/name:
// "gw-" and the first 10 hex digits of the SHA-256 of "namespace/name".
func ServiceName(namespace, name string) string {
	sum := sha256.Sum256([]byte(namespace + "/" + name))
	return "gw-" + hex.EncodeToString(sum[:])[:10]
}

// gatewayOfService returns the Gateway whose Service svc is: annotated
// with it, labelled as ours, and named ServiceName of it.
func gatewayOfService(svc *corev1.Service) (intent.Key, bool) {
	ref, ok := svc.Annotations[ServiceGatewayAnnotation]
	if !ok || svc.Labels[ServiceManagedByLabel] != ServiceManagedBy {
		return intent.Key{}, false
	}
	gw, err := intent.ParseKey(ref)
	if err != nil || svc.Name != ServiceName(gw.Namespace, gw.Name) {
		return intent.Key{}, false
	}
	return gw, true
}

// Observes reports the kinds the Source reads beside the Store: Services.
func (src *Source) Observes(kind events.Kind) bool { return kind == events.KindService }

// Observe keeps a Gateway's Service (nil: deleted), and translates every
// route again when it is one or was one; other Services are not kept.
func (src *Source) Observe(kind events.Kind, key intent.Key, obj runtime.Object) ([]*intent.Entry, bool, error) {
	var gw intent.Key
	ok := false
	if obj != nil {
		svc, isSvc := obj.(*corev1.Service)
		if !isSvc {
			return nil, false, fmt.Errorf("%w: %s event holds %T", intent.ErrWrongType, kind, obj)
		}
		gw, ok = gatewayOfService(svc)
		if old, had := src.services[key]; ok && had && old.gateway == gw && samePorts(old.svc, svc) {
			src.services[key] = serviceOf{gateway: gw, svc: svc}
			return nil, false, nil // its status, say: nothing the routes read
		}
		if ok {
			src.services[key] = serviceOf{gateway: gw, svc: svc}
		}
	}
	if !ok {
		if _, had := src.services[key]; !had {
			return nil, false, nil
		}
		delete(src.services, key)
	}
	return src.translateAll(), true, nil
}

// samePorts reports whether a and b map the same listener ports to the
// same targetPorts, all the syncers read of them.
func samePorts(a, b *corev1.Service) bool {
	return slices.EqualFunc(a.Spec.Ports, b.Spec.Ports, func(x, y corev1.ServicePort) bool {
		return x.Port == y.Port && x.Protocol == y.Protocol && x.TargetPort == y.TargetPort
	})
}

// serviceOf is a kept Gateway Service and the Gateway it is of.
type serviceOf struct {
	gateway intent.Key
	svc     *corev1.Service
}

// serviceFor returns the Service of Gateway gw, or why there is none
// to serve it with: none yet, or several (then none is trusted).
func (src *Source) serviceFor(gw *gatewayv1.Gateway) (*corev1.Service, string) {
	k := intent.Key{Namespace: gw.Namespace, Name: gw.Name}
	var found []*corev1.Service
	for _, s := range src.services {
		if s.gateway == k {
			found = append(found, s.svc)
		}
	}
	switch len(found) {
	case 0:
		return nil, "waiting for its Service"
	case 1:
		return found[0], ""
	}
	return nil, fmt.Sprintf("%d Services claim it (%s); none is used", len(found), serviceNames(found))
}

func serviceNames(svcs []*corev1.Service) string {
	names := make([]string, len(svcs))
	for i, s := range svcs {
		names[i] = s.Namespace + "/" + s.Name
	}
	sort.Strings(names)
	return fmt.Sprint(names)
}

// fleetPort returns the nginx port that serves the listeners of gw on
// port p: the integer targetPort of the Service port whose port is p.
// Its range is checked by the build (config.ValidListenerPort).
func (src *Source) fleetPort(gw *gatewayv1.Gateway, p gatewayv1.PortNumber) (int, string) {
	return src.fleetPortOf(gw, p, false)
}

// fleetPortOf is fleetPort for the Service port of protocol UDP (a UDP
// listener's) or TCP.
func (src *Source) fleetPortOf(gw *gatewayv1.Gateway, p gatewayv1.PortNumber, udp bool) (int, string) {
	svc, why := src.serviceFor(gw)
	if svc == nil {
		return 0, why
	}
	proto := corev1.ProtocolTCP
	if udp {
		proto = corev1.ProtocolUDP
	}
	i := slices.IndexFunc(svc.Spec.Ports, func(sp corev1.ServicePort) bool {
		return sp.Port == int32(p) && (sp.Protocol == proto || sp.Protocol == "" && !udp)
	})
	if i < 0 {
		return 0, fmt.Sprintf("waiting for port %d of its Service %s/%s", p, svc.Namespace, svc.Name)
	}
	t := svc.Spec.Ports[i].TargetPort
	if t.Type != intstr.Int || t.IntVal <= 0 {
		return 0, fmt.Sprintf("port %d of its Service %s/%s has no targetPort number", p, svc.Namespace, svc.Name)
	}
	return int(t.IntVal), ""
}

// Listeners returns the nginx ports of the HTTP and HTTPS listeners of
// every Gateway of ours whose Service gives them one, once per Gateway
// and port (intent.ListenerSource); an HTTP port serves h2c when only
// GRPCRoutes are attached to it (h2cPorts).
func (src *Source) Listeners() []intent.Listener {
	var out []intent.Listener
	for _, gw := range src.gateways {
		if !Ours(gw, func(name string) *gatewayv1.GatewayClass { return src.classes[name] }, src.controller) {
			continue
		}
		origin := intent.Origin{Kind: string(events.KindGateway), Namespace: gw.Namespace, Name: gw.Name, Generation: gw.Generation}
		h2c := src.h2cPorts(gw)
		for _, l := range gw.Spec.Listeners {
			if l.Protocol != gatewayv1.HTTPProtocolType && l.Protocol != gatewayv1.HTTPSProtocolType {
				continue
			}
			port, why := src.fleetPort(gw, l.Port)
			li := intent.Listener{Port: port, TLS: l.Protocol == gatewayv1.HTTPSProtocolType, Origin: origin}
			li.H2C = !li.TLS && h2c[l.Port]
			if why == "" && !slices.Contains(out, li) {
				out = append(out, li)
			}
		}
	}
	return out
}

var (
	_ intent.Observer       = (*Source)(nil)
	_ intent.ListenerSource = (*Source)(nil)
)
