package model

import (
	"github.com/ingress-sync/ingress-sync/pkg/config"
	"github.com/ingress-sync/ingress-sync/pkg/intent"

	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/netip"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// serviceEntry is what Build reads of a stored Service: its type, its
// ClusterIP (service-upstream) and its ports (name, protocol, number). The
// rest of the object (metadata, status, other spec fields) is not kept.
type serviceEntry struct {
	typ       corev1.ServiceType
	clusterIP string
	ports     []servicePortEntry
}

// servicePortEntry is one port of a Service as Build reads it.
type servicePortEntry struct {
	name     string
	protocol corev1.Protocol
	port     int32
}

func newServiceEntry(svc *corev1.Service) *serviceEntry {
	e := &serviceEntry{typ: svc.Spec.Type, clusterIP: svc.Spec.ClusterIP, ports: make([]servicePortEntry, len(svc.Spec.Ports))}
	for i, p := range svc.Spec.Ports {
		e.ports[i] = servicePortEntry{name: p.Name, protocol: p.Protocol, port: p.Port}
	}
	return e
}

// ServiceNameLabel links an EndpointSlice to its Service.
const ServiceNameLabel = discoveryv1.LabelServiceName

// sliceEntry is a stored EndpointSlice with its ready endpoints per port.
type sliceEntry struct {
	// name is the slice's name in the Store.
	name    string
	service intent.Key
	ports   []slicePort
}

// slicePort holds the ready endpoints of one named slice port, sorted by
// address and port, without duplicates.
type slicePort struct {
	name      string
	endpoints []config.Endpoint
	sum       config.EndpointsSum
}

// newSliceEntry keeps the ready endpoints (conditions.ready unset counts as
// ready) of IPv4 and IPv6 slices; FQDN slices yield none. Like kube-proxy,
// only the first address of an endpoint is used (Kubernetes declares the
// addresses fungible), and it must parse as an IP address.
func newSliceEntry(key intent.Key, slice *discoveryv1.EndpointSlice) *sliceEntry {
	e := &sliceEntry{name: key.Name}
	if svc := slice.Labels[ServiceNameLabel]; svc != "" {
		e.service = intent.Key{Namespace: key.Namespace, Name: svc}
	}
	if slice.AddressType != discoveryv1.AddressTypeIPv4 && slice.AddressType != discoveryv1.AddressTypeIPv6 {
		return e
	}
	addrs := readyAddresses(slice.Endpoints)
	for _, p := range slice.Ports {
		if p.Port == nil || *p.Port < 1 || *p.Port > 65535 {
			continue // no port, or one the data plane cannot connect to
		}
		sp := slicePort{endpoints: make([]config.Endpoint, len(addrs))}
		if p.Name != nil {
			sp.name = *p.Name
		}
		for i, a := range addrs {
			sp.endpoints[i] = config.Endpoint{Address: a, Port: *p.Port}
		}
		sp.sum = config.SumEndpoints(sp.endpoints)
		e.ports = append(e.ports, sp)
	}
	return e
}

// canonicalAddr returns a's text: s itself when s is written so already
// (as Kubernetes writes addresses), sparing a string per endpoint.
func canonicalAddr(s string, a netip.Addr) string {
	var buf [64]byte
	if b := a.AppendTo(buf[:0]); string(b) == s {
		return s
	}
	return a.String()
}

// readyAddresses returns the sorted, unique first addresses of the ready
// endpoints.
func readyAddresses(eps []discoveryv1.Endpoint) []string {
	out := make([]string, 0, len(eps))
	for i := range eps {
		ep := &eps[i]
		if len(ep.Addresses) == 0 || (ep.Conditions.Ready != nil && !*ep.Conditions.Ready) {
			continue
		}
		a, err := netip.ParseAddr(ep.Addresses[0])
		if err != nil || a.Zone() != "" {
			continue
		}
		out = append(out, canonicalAddr(ep.Addresses[0], a))
	}
	sort.Strings(out)
	return intent.CompactStrings(out)
}

// port returns the slice port named name, or nil.
func (e *sliceEntry) port(name string) *slicePort {
	for i := range e.ports {
		if e.ports[i].name == name {
			return &e.ports[i]
		}
	}
	return nil
}

// secretEntry is a stored Secret with its validated TLS key pair.
type secretEntry struct {
	obj       *corev1.Secret
	cert, key []byte
	checksum  string
	leaf      *x509.Certificate
	// err says why the Secret cannot serve TLS; nil when it can.
	err error
}

var errNotTLS = errors.New("is not of type " + string(corev1.SecretTypeTLS))

// newSecretEntry validates a kubernetes.io/tls Secret: tls.crt and tls.key
// must form a key pair that crypto/tls accepts.
func newSecretEntry(s *corev1.Secret) *secretEntry {
	e := &secretEntry{obj: s}
	if s.Type != corev1.SecretTypeTLS {
		e.err = errNotTLS
		return e
	}
	e.cert, e.key = s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey]
	if len(e.cert) == 0 || len(e.key) == 0 {
		e.err = errors.New("has no tls.crt or no tls.key")
		return e
	}
	pair, err := tls.X509KeyPair(e.cert, e.key)
	if err != nil {
		e.err = fmt.Errorf("has an invalid key pair: %w", err)
		return e
	}
	e.leaf = pair.Leaf
	if e.leaf == nil {
		if e.leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			e.err = fmt.Errorf("has an invalid certificate: %w", err)
			return e
		}
	}
	e.checksum = config.CertificateChecksum(e.cert, e.key)
	return e
}
